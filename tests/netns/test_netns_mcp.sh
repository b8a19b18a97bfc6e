#!/usr/bin/env bash
# test_netns_mcp.sh - `ufo mcp-server`'s desktop tools for remote devices, over network
# namespaces and CURVE: the broker and the MCP server (driven by the official MCP inspector's
# --cli mode, role "client", no display at all) in one namespace; device a (a 1024x768
# virtual desktop) and device b (800x600) each in its own namespace with Mousepad showing a
# file of its own and its desktop service (`ufo-app --desktop-service`, which serves the
# device's desktop queries); device c, a HostAgent only (no desktop agent).
# Checked: list_windows of a device gives that device's window (app, title, pid, focused,
# geometry) and not the other's; the desktop service has one connection to the broker; a screenshot of its window is a valid PNG of the window's
# size with real content; a screenshot of each screen has that device's screen size; no such
# device, a device without a desktop agent, no device named while two have a desktop, an
# unknown window: clear errors; a desktop agent that does not answer (SIGSTOPped): a timeout
# error, and once it runs again it answers; the same over Streamable HTTP.
# Needs root, iproute2 and the npm packages (tests/mcp): skipped without root.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=${UFO_SOURCE_DIR:-$(cd "$HERE/../.." && pwd)}
BUILD=${UFO_BUILD_DIR:?UFO_BUILD_DIR}
INSPECT=${UFO_MCP_BIN:-$BUILD/mcp-node/node_modules/.bin}/mcp-inspector
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
  echo "SKIP: needs root and iproute2 (ip netns) to create network namespaces"
  exit 77
fi
[ -x "$INSPECT" ] || { echo "FAIL: the MCP inspector is not installed ($INSPECT; tests/mcp/npm-install.sh)"; exit 1; }
. "$HERE/harness.sh"
TMP=$(mktemp -d /tmp/ufo-netns-mcp-XXXXXX)
FAILS=0
DESKS=()
HTTP_PID=
cleanup() {
  local d
  [ -n "$HTTP_PID" ] && kill "$HTTP_PID" 2>/dev/null
  netns_teardown
  for d in "${DESKS[@]}"; do "$SRC/scripts/desktop-session" stop "$d" >/dev/null 2>&1 || true; done
  [ "${KEEP:-}" ] && echo "kept $TMP" || rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
check() { if eval "$1"; then echo "ok: $2"; else echo "FAIL: $2"; FAILS=$((FAILS + 1)); fi; }

UFO=$BUILD/cli/ufo
for b in "$UFO" "$BUILD/blackboard_broker/ufo-broker" "$BUILD/host_agent/ufo-host" "$BUILD/app_agent/ufo-app"; do
  [ -x "$b" ] || { echo "FAIL: $b is not built"; exit 1; }
done
KEYS=$TMP/keys
for c in broker:broker agent-a:agent agent-b:agent client:client; do
  "$UFO" keygen "${c%%:*}" --role "${c##*:}" --dir "$KEYS" >/dev/null || exit 1
done
mkdir -p "$KEYS/allowed"
for c in agent-a agent-b client; do cp "$KEYS/$c.cert" "$KEYS/allowed/"; done

netns_setup broker dev-a dev-b || { echo "FAIL: namespace setup"; exit 1; }
BIP=$(netns_ip broker)
CMD=tcp://$BIP:5570
BUS=tcp://$BIP:5571
export UFO_SECURITY__CURVE=true UFO_SECURITY__CERT_DIR=$KEYS UFO_BROKER__BUS_ENDPOINT=$BUS
# no model is asked in this test: the agents only need a well-formed configuration
cat >"$TMP/cfg.json" <<EOF
{"HOST_AGENT": {"API_TYPE": "openai_compatible", "API_BASE": "http://127.0.0.1:9/v1", "API_MODEL": "none"},
 "APP_AGENT": {"API_TYPE": "openai_compatible", "API_BASE": "http://127.0.0.1:9/v1", "API_MODEL": "none"},
 "log": {"dir": "$TMP/logs"}, "broker": {"cmd_endpoint": "$CMD", "bus_endpoint": "$BUS"},
 "dispatch": {"heartbeat_ivl_ms": 500, "heartbeat_liveness": 20}}
EOF
netns_spawn broker "$TMP/broker.log" "$BUILD/blackboard_broker/ufo-broker" --config "$TMP/cfg.json" \
  --data-dir "$TMP/data" --cmd "$CMD" --bus "$BUS"

# device a and device b: a desktop of its own size, Mousepad with a file of its own, its desktop
# service
for d in a b; do
  size=1024x768; [ $d = b ] && size=800x600
  netns_exec "dev-$d" "$SRC/scripts/desktop-session" start --size $size --owner $$ >"$TMP/desk-$d.env" \
    2>"$TMP/desk-$d.err" || { echo "FAIL: desktop of device $d"; cat "$TMP/desk-$d.err"; exit 1; }
  DESKS+=("$(. "$TMP/desk-$d.env"; echo "$UFO_DESKTOP_SESSION")")
  name=alpha; [ $d = b ] && name=beta
  echo "notes of device $d" >"$TMP/$name-notes.txt"
  ( . "$TMP/desk-$d.env"
    export UFO_SECURITY__CERT=$KEYS/agent-$d.cert_secret
    netns_spawn "dev-$d" "$TMP/mousepad-$d.log" mousepad "$TMP/$name-notes.txt"
    echo "$NETNS_LAST_PID" >"$TMP/mousepad-$d.pid"
    netns_spawn "dev-$d" "$TMP/dsvc-$d.log" "$BUILD/app_agent/ufo-app" --desktop-service --device $d \
      --config "$TMP/cfg.json" --broker "$CMD"
    echo "$NETNS_LAST_PID" >"$TMP/dsvc-$d.pid"
    [ $d = b ] || exit 0
    # device c: a HostAgent on b's machine, and nothing that serves c's desktop
    netns_spawn "dev-$d" "$TMP/host-c.log" "$BUILD/host_agent/ufo-host" --device c --config "$TMP/cfg.json" \
      --broker "$CMD"
    echo "$NETNS_LAST_PID" >"$TMP/host-c.pid" )
  NETNS_PIDS+=("$(cat "$TMP/mousepad-$d.pid")" "$(cat "$TMP/dsvc-$d.pid")")
done
NETNS_PIDS+=("$(cat "$TMP/host-c.pid")")

# the MCP client side: the broker's namespace, no display, the client certificate
MCPENV=(env -u DISPLAY UFO_RUN_DIR="$TMP/run" UFO_CONFIG="$TMP/cfg.json" UFO_SECURITY__CERT="$KEYS/client.cert_secret")
mcp() {   # OUT TOOL [--tool-arg k=v ...]: the inspector calls a tool of `ufo mcp-server` (stdio)
  local out=$1 tool=$2; shift 2
  netns_exec broker "${MCPENV[@]}" timeout 120 "$INSPECT" --cli "$UFO" mcp-server \
    --method tools/call --tool-name "$tool" "$@" >"$TMP/$out.json" 2>"$TMP/$out.err"
}
# Reads a tools/call result: the structured content (or the text) of $1.json
py_result() {
  python3 - "$TMP/$1.json" "$2" <<'EOF'
import base64, json, struct, sys, zlib
r = json.load(open(sys.argv[1]))
what = sys.argv[2]
if what == "error":       # the error text, or nothing when it is not an error
    if r.get("isError"):
        print(" ".join(c.get("text", "") for c in r.get("content", []) if c.get("type") == "text"))
    sys.exit(0)
if what == "windows":     # one line per window: xid app width height title
    s = r.get("structuredContent") or json.loads(r["content"][0]["text"])
    for w in s["windows"]:
        g = w["geometry"]
        assert {"xid", "app", "title", "pid", "focused", "geometry"} <= set(w), w
        print(w["xid"], w["app"], g["width"], g["height"], w["pid"], w["focused"], w["title"])
    sys.exit(0)
if what == "png":         # the image content: width height distinct-bytes
    img = [c for c in r["content"] if c.get("type") == "image"][0]
    assert img["mimeType"] == "image/png"
    data = base64.b64decode(img["data"])
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w, h = 8, b"", 0, 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + n]
        assert zlib.crc32(kind + chunk) == struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0], "bad CRC"
        if kind == b"IHDR":
            w, h = struct.unpack(">II", chunk[:8])
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + n
    raw = zlib.decompress(idat)
    print(w, h, len(set(raw)))
EOF
}

# every worker registered: desktop for a and b, host for c
ready=0
for i in $(seq 1 120); do
  netns_exec broker "${MCPENV[@]}" "$UFO" status --broker "$CMD" --json >"$TMP/status.json" 2>/dev/null
  python3 - "$TMP/status.json" <<'EOF' && { ready=1; break; }
import json, sys
try:
    w = json.load(open(sys.argv[1])).get("workers", [])
except ValueError:
    sys.exit(1)
have = {(x.get("service"), x.get("device")) for x in w}
sys.exit(0 if {("desktop", "a"), ("desktop", "b"), ("host", "c")} <= have else 1)
EOF
  sleep 0.5
done
check "[ $ready = 1 ]" "the desktop services of devices a and b and device c's HostAgent registered across namespaces"
# Mousepad's window is up on each desktop (the application starts while the agents register)
for d in a b; do
  for i in $(seq 1 60); do
    mcp "win-$d" list_windows --tool-arg device=$d
    py_result "win-$d" windows >"$TMP/win-$d.txt" 2>/dev/null && grep -q notes "$TMP/win-$d.txt" && break
    sleep 0.5
  done
done
echo "device a's windows:"; sed 's/^/    /' "$TMP/win-a.txt"
echo "device b's windows:"; sed 's/^/    /' "$TMP/win-b.txt"
check "grep -q 'alpha-notes' '$TMP/win-a.txt' && ! grep -q 'beta-notes' '$TMP/win-a.txt'" \
  "list_windows device a: device a's Mousepad window (alpha-notes), not device b's"
check "grep -q 'beta-notes' '$TMP/win-b.txt' && ! grep -q 'alpha-notes' '$TMP/win-b.txt'" \
  "list_windows device b: device b's Mousepad window (beta-notes), not device a's"
check "grep 'alpha-notes' '$TMP/win-a.txt' | awk '{exit !(\$2 == \"mousepad\" && \$3 > 50 && \$4 > 50 && \$5 > 0)}'" \
  "the window's app, geometry and pid are there"
read -r XID _ W H _ < <(grep 'alpha-notes' "$TMP/win-a.txt" | head -1)

# screenshots: a window of device a, each device's screen
mcp shot-win screenshot --tool-arg device=a --tool-arg xid="${XID:-0}"
read -r SW SH SN < <(py_result shot-win png 2>"$TMP/shot-win.py.err")
check "[ '${SW:-}' = '${W:-x}' ] && [ '${SH:-}' = '${H:-x}' ] && [ '${SN:-0}' -gt 20 ]" \
  "screenshot of device a's window: a valid PNG of the window's size (${SW:-?}x${SH:-?} = ${W:-?}x${H:-?}), real content"
check "grep -q 'of device a' '$TMP/shot-win.json'" "the screenshot's caption names the device"
mcp shot-a screenshot --tool-arg device=a
read -r AW AH _ < <(py_result shot-a png 2>/dev/null)
mcp shot-b screenshot --tool-arg device=b
read -r BW BH _ < <(py_result shot-b png 2>/dev/null)
check "[ '${AW:-}x${AH:-}' = 1024x768 ] && [ '${BW:-}x${BH:-}' = 800x600 ]" \
  "screenshots of device a's and device b's screens have their own sizes (${AW:-?}x${AH:-?}, ${BW:-?}x${BH:-?})"

# one connection per process (issue 17): after the screenshots, the desktop service's worker
# side and its blob.put calls still share one TCP connection to the broker (from its namespace)
for d in a b; do
  netns_exec "dev-$d" ss -Htnp state established >"$TMP/ss-$d.txt" 2>/dev/null
  n=$(grep -c "pid=$(cat "$TMP/dsvc-$d.pid")," "$TMP/ss-$d.txt")
  nb=$(grep "pid=$(cat "$TMP/dsvc-$d.pid")," "$TMP/ss-$d.txt" | grep -c "$BIP:5570")
  check "[ $n = 1 ] && [ $nb = 1 ]" "device $d's desktop service has one connection, to the broker's command endpoint ($n, $nb)"
done

# clear errors
mcp err-nodev list_windows --tool-arg device=nowhere
check "py_result err-nodev error | grep -q 'no such device \"nowhere\"'" "no such device: a clear error"
mcp err-noagent screenshot --tool-arg device=c
check "py_result err-noagent error | grep -q 'device \"c\" has no desktop agent'" \
  "a device without a desktop agent: a clear error naming its workers ($(py_result err-noagent error | cut -c1-100))"
mcp err-which list_windows
check "py_result err-which error | grep -q 'several devices have a desktop (a, b)'" "no device named while two have a desktop"
mcp err-xid screenshot --tool-arg device=a --tool-arg xid=12345
check "py_result err-xid error | grep -q 'has no application window 12345'" "an unknown window: a clear error"

# a desktop agent that does not answer: a timeout, then it serves again
kill -STOP "$(cat "$TMP/dsvc-a.pid")"
T0=$(date +%s.%N)
mcp err-timeout list_windows --tool-arg device=a --tool-arg timeout_s=3
T1=$(date +%s.%N)
kill -CONT "$(cat "$TMP/dsvc-a.pid")"
check "py_result err-timeout error | grep -q \"timeout: device a's desktop agent did not answer within 3 s\"" \
  "a stopped desktop agent: a timeout error ($(awk "BEGIN {printf \"%.1f\", $T1 - $T0}") s including the inspector)"
mcp win-again list_windows --tool-arg device=a
check "py_result win-again windows | grep -q alpha-notes" "the desktop agent answers again once it runs"

# the same over Streamable HTTP
netns_spawn broker "$TMP/http.err" "${MCPENV[@]}" sh -c "exec '$UFO' mcp-server --http 127.0.0.1:0 >'$TMP/http.out'"
HTTP_PID=$NETNS_LAST_PID
for i in $(seq 1 100); do [ -s "$TMP/http.out" ] && break; sleep 0.1; done
URL=$(head -1 "$TMP/http.out")
netns_exec broker timeout 120 "$INSPECT" --cli "$URL" --method tools/call --tool-name screenshot \
  --tool-arg device=b >"$TMP/http-shot.json" 2>"$TMP/http-shot.err"
read -r HW HH _ < <(py_result http-shot png 2>/dev/null)
check "[ '${HW:-}x${HH:-}' = 800x600 ]" "screenshot of device b over Streamable HTTP (${HW:-?}x${HH:-?})"
netns_exec broker timeout 120 "$INSPECT" --cli "$URL" --method tools/call --tool-name list_windows \
  --tool-arg device=nowhere >"$TMP/http-err.json" 2>&1
check "py_result http-err error | grep -q 'no such device'" "an error over Streamable HTTP"
kill "$HTTP_PID" 2>/dev/null; HTTP_PID=

check "! grep -q 'AddressSanitizer\|runtime error' '$TMP'/dsvc-*.log '$TMP/broker.log'" "no sanitizer report in the agents' logs"
if [ $FAILS != 0 ]; then
  echo "$FAILS check(s) failed"
  for f in broker.log dsvc-a.log dsvc-b.log host-c.log http.err shot-win.err shot-win.py.err win-a.txt; do
    echo "--- $f"; tail -15 "$TMP/$f" 2>/dev/null
  done
  exit 1
fi
echo "all checks passed"
