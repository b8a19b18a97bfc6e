#!/usr/bin/env bash
# `ufo mcp-server` driven by the official MCP inspector (its --cli mode, from npm): tools/list,
# list_workers / list_devices against a real `ufo up` (broker, HostAgent, AppAgent, evaluator on
# a virtual desktop it starts, scripted model), a whole session through run_session with its
# result, and, from a raw JSON-RPC client, progress notifications, a bad line, a screenshot (its
# blob removed by the broker after its ttl_ms), a
# session cancelled with cancel_session (its run_session call then ends, saying so) and ones
# cancelled with notifications/cancelled on stdio and over HTTP (no response for their ids).
set -uo pipefail
UFO="$UFO_BUILD_DIR/cli/ufo"
INSPECT="$UFO_MCP_BIN/mcp-inspector"
DIR=$(mktemp -d /tmp/ufo_mcp_srv.XXXXXX)
export UFO_RUN_DIR="$DIR/run"
LLM_PID= UP_PID= HTTP_PID=
cleanup() {
  [ -n "$HTTP_PID" ] && kill "$HTTP_PID" 2>/dev/null && wait "$HTTP_PID" 2>/dev/null
  [ -n "$UP_PID" ] && kill "$UP_PID" 2>/dev/null && wait "$UP_PID" 2>/dev/null
  [ -n "$LLM_PID" ] && kill "$LLM_PID" 2>/dev/null && wait "$LLM_PID" 2>/dev/null
  [ -n "${KEEP:-}" ] && echo "kept $DIR" || rm -rf "$DIR"
}
trap cleanup EXIT
fail=0
check() { if ! grep -qF -- "$2" "$1"; then echo "FAIL: $1 lacks: $2"; cut -c1-300 "$1" | sed 's/^/    /' | head -30; fail=1; fi; }

# the scripted model: finish.json, and a HostAgent reply that takes 60 s for a request that says
# "Take your time" (the session cancelled below)
python3 - "$UFO_SOURCE_DIR/tests/data/host_agent/finish.json" "$DIR/script.json" <<'EOF' || exit 1
import copy, json, sys
d = json.load(open(sys.argv[1]))
slow = copy.deepcopy([e for e in d["entries"] if e.get("match", {}).get("agent") == "HostAgent"][0])
slow["match"]["contains"] = "Take your time"
slow["latency_ms"] = 60000
d["entries"].insert(0, slow)
json.dump(d, open(sys.argv[2], "w"))
EOF
"$UFO_BUILD_DIR/tests/ufo-llm-server" --script "$DIR/script.json" \
  --port-file "$DIR/llm.port" --log "$DIR/llm.jsonl" --max-seconds 300 > /dev/null &
LLM_PID=$!
for _ in $(seq 100); do [ -s "$DIR/llm.port" ] && break; sleep 0.1; done
PORT=$(cat "$DIR/llm.port")
cat > "$DIR/ufo.json" <<JSON
{"HOST_AGENT": {"API_TYPE": "openai_compatible", "API_BASE": "http://127.0.0.1:$PORT/v1", "API_MODEL": "scripted", "VISUAL_MODE": false},
 "APP_AGENT": {"API_TYPE": "openai_compatible", "API_BASE": "http://127.0.0.1:$PORT/v1", "API_MODEL": "scripted", "VISUAL_MODE": false},
 "SLEEP_TIME": 0}
JSON
( unset DISPLAY; exec "$UFO" up --config "$DIR/ufo.json" --data-dir "$DIR/data" --apps mousepad > "$DIR/up.out" 2>&1 ) &
UP_PID=$!
for _ in $(seq 400); do [ -s "$UFO_RUN_DIR/up.json" ] && break; sleep 0.1; done
[ -s "$UFO_RUN_DIR/up.json" ] || { echo "FAIL: ufo up did not start"; cat "$DIR/up.out"; exit 1; }
# the configuration through UFO_CONFIG: the inspector would take a --config of the server for its own
export UFO_CONFIG="$DIR/ufo.json"
SERVER=("$UFO" mcp-server)

# the tools, as the inspector lists them
timeout 120 "$INSPECT" --cli "${SERVER[@]}" --method tools/list > "$DIR/tools.json" 2> "$DIR/tools.err"
for t in run_session cancel_session list_workers list_devices list_windows screenshot; do check "$DIR/tools.json" "\"name\": \"$t\""; done

# workers and devices of the running ufo up (wait until the HostAgent has registered)
for _ in $(seq 60); do
  timeout 120 "$INSPECT" --cli "${SERVER[@]}" --method tools/call --tool-name list_workers > "$DIR/workers.json" 2>&1
  grep -q '\\"service\\": \\"host\\"' "$DIR/workers.json" && break
  sleep 0.5
done
check "$DIR/workers.json" '\"service\": \"host\"'
check "$DIR/workers.json" '\"service\": \"app:mousepad\"'
timeout 120 "$INSPECT" --cli "${SERVER[@]}" --method tools/call --tool-name list_devices > "$DIR/devices.json" 2>&1
check "$DIR/devices.json" '\"device\": \"d0\"'

# a whole session, with its outcome and the paths of its logs and report
timeout 300 "$INSPECT" --cli "${SERVER[@]}" --method tools/call --tool-name run_session \
  --tool-arg request="Nothing to do" > "$DIR/run.json" 2>&1
check "$DIR/run.json" '"status": "FINISH"'
check "$DIR/run.json" '"completed": true'
check "$DIR/run.json" '"complete": "yes"'
check "$DIR/run.json" '"isError": false'
REPORT=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["structuredContent"]["report"])' "$DIR/run.json" 2>/dev/null)
[ -n "$REPORT" ] && [ -s "$REPORT" ] || { echo "FAIL: no report file at '$REPORT'"; fail=1; }

# a raw JSON-RPC client: progress notifications, a bad line answered, a screenshot of a desktop
{
  echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
  echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  echo 'this is not JSON'
  echo '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_session","arguments":{"request":"Nothing to do either","apps":["mousepad"]},"_meta":{"progressToken":"p1"}}}'
  for _ in $(seq 600); do grep -q '"id":2,"result"' "$DIR/raw.out" 2>/dev/null && break; sleep 0.1; done
  echo '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"screenshot","arguments":{}}}'
  for _ in $(seq 100); do grep -q '"id":3' "$DIR/raw.out" 2>/dev/null && break; sleep 0.1; done
  find "$DIR/data" -name '*.ttl' > "$DIR/ttl_files.txt" 2>/dev/null   # the screenshot's expiry, beside its blob
  # a session whose model takes its time, cancelled by its task id from the first progress message
  echo '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"run_session","arguments":{"request":"Take your time"},"_meta":{"progressToken":"p4"}}}'
  for _ in $(seq 300); do grep -q '"progressToken":"p4"[^}]*accepted (task ' "$DIR/raw.out" 2>/dev/null && break; sleep 0.1; done
  TASK=$(grep -o '"progressToken":"p4"[^}]*accepted (task [0-9a-f]*' "$DIR/raw.out" | head -1 | sed 's/.*accepted (task //')
  echo "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"cancel_session\",\"arguments\":{\"task\":\"$TASK\"}}}"
  for _ in $(seq 450); do grep -q '"id":4,"result"' "$DIR/raw.out" 2>/dev/null && break; sleep 0.1; done
  # and one the client gives up on with notifications/cancelled for its call
  echo '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"run_session","arguments":{"request":"Take your time again"},"_meta":{"progressToken":"p6"}}}'
  for _ in $(seq 300); do grep -q '"progressToken":"p6"[^}]*accepted (task ' "$DIR/raw.out" 2>/dev/null && break; sleep 0.1; done
  echo '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":6,"reason":"the user gave up"}}'
  # no response for id 6 (MCP: the receiver SHOULD NOT send one): wait until the server has
  # seen its session end (bounded), then a little more; the requests after it are answered
  for _ in $(seq 450); do grep -q 'after its call was cancelled; no response sent' "$DIR/raw.err" 2>/dev/null && break; sleep 0.1; done
  sleep 1
  echo '{"jsonrpc":"2.0","id":8,"method":"ping"}'
  for _ in $(seq 100); do grep -q '"id":8' "$DIR/raw.out" 2>/dev/null && break; sleep 0.1; done
  # a session's own model that carries a key: refused, nothing submitted (keys never travel)
  echo '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run_session","arguments":{"request":"x","model":{"model":"m2","api_key":"sk-leak-0000"}}}}'
  for _ in $(seq 100); do grep -q '"id":7' "$DIR/raw.out" 2>/dev/null && break; sleep 0.1; done
} | timeout 120 scripts/desktop-session run -- "${SERVER[@]}" > "$DIR/raw.out" 2> "$DIR/raw.err"
check "$DIR/raw.out" '"protocolVersion":"2025-06-18"'
check "$DIR/raw.out" '"code":-32700'
check "$DIR/raw.out" '"method":"notifications/progress","params":{"progressToken":"p1"'
check "$DIR/raw.out" 'accepted (task '
check "$DIR/raw.out" '"id":2,"result"'
check "$DIR/raw.out" '"type":"image"'
check "$DIR/raw.out" '"mimeType":"image/png"'
SHOT=$(grep '"id":3' "$DIR/raw.out" | grep -o '"blob":"[0-9a-f]\{64\}"' | head -1 | cut -d'"' -f4)
[ -n "$SHOT" ] || { echo "FAIL: the screenshot names no blob"; fail=1; }
[ -n "$SHOT" ] && check "$DIR/ttl_files.txt" "/${SHOT:0:2}/${SHOT:2}.ttl"
check "$DIR/raw.out" '"id":5,"result":{"content":[{"type":"text","text":"cancellation requested'
grep '"id":4,"result"' "$DIR/raw.out" > "$DIR/cancelled.out"
check "$DIR/cancelled.out" '"cancelled":true'
check "$DIR/cancelled.out" '"completed":false'
# notifications/cancelled: the session ended cancelled, and nothing came for id 6 after the
# cancellation (no result, no error, no progress of token p6)
check "$DIR/raw.err" 'ended cancelled after its call was cancelled; no response sent'
python3 - "$DIR/raw.out" <<'PY' || fail=1
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
seen_cancel = False
bad = [m for m in lines if m.get("id") == 6]
late = [m for m in lines if m.get("params", {}).get("progressToken") == "p6" and "accepted" not in m["params"].get("message", "")]
if bad or late:
    print("FAIL: a response or progress for the cancelled call 6:", bad, late); sys.exit(1)
if not any(m.get("id") == 8 and m.get("result") == {} for m in lines):
    print("FAIL: the ping after the cancellation was not answered"); sys.exit(1)
PY
check "$DIR/raw.out" 'API keys never travel'
grep '"id":7' "$DIR/raw.out" | grep -q '"isError":true' || { echo "FAIL: run_session with a key in model not an error"; fail=1; }
# Streamable HTTP: the same server on a loopback port, the inspector as its client
"${SERVER[@]}" --http 127.0.0.1:0 > "$DIR/http.out" 2> "$DIR/http.err" &
HTTP_PID=$!
for _ in $(seq 100); do [ -s "$DIR/http.out" ] && break; sleep 0.1; done
URL=$(head -1 "$DIR/http.out")
case "$URL" in http://127.0.0.1:*/mcp) ;; *) echo "FAIL: no URL from --http: '$URL'"; cat "$DIR/http.err"; fail=1 ;; esac
timeout 120 "$INSPECT" --cli "$URL" --method tools/call --tool-name list_devices > "$DIR/http_devices.json" 2>&1
check "$DIR/http_devices.json" '\"device\": \"d0\"'
timeout 300 "$INSPECT" --cli "$URL" --method tools/call --tool-name run_session \
  --tool-arg request="Nothing to do over HTTP" > "$DIR/http_run.json" 2>&1
check "$DIR/http_run.json" '"status": "FINISH"'
check "$DIR/http_run.json" '"completed": true'
# without a session id, a request is refused; GET is not offered
# notifications/cancelled over HTTP: the call's SSE stream closes without a result for its id
# (bounded wait), the notification's POST gets 202, and the server answers the next request
timeout 120 python3 - "$URL" > "$DIR/http_cancel.txt" 2>&1 <<'PY'
import http.client, json, sys, time, urllib.parse
u = urllib.parse.urlparse(sys.argv[1])
def post(body, session=None):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if session:
        h["Mcp-Session-Id"] = session
    c.request("POST", u.path, json.dumps(body), h)
    return c, c.getresponse()
c, r = post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
            "capabilities": {}, "clientInfo": {"name": "py", "version": "1"}}})
sid = r.getheader("Mcp-Session-Id"); r.read(); c.close()
post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)[1].read()
sc, sr = post({"jsonrpc": "2.0", "id": 21, "method": "tools/call", "params": {"name": "run_session",
              "arguments": {"request": "Take your time over HTTP"}, "_meta": {"progressToken": "h21"}}}, sid)
buf = b""
while b"accepted (task " not in buf:
    chunk = sr.fp.readline()
    if not chunk:
        print("FAIL: the stream ended before the session was accepted:", buf); sys.exit(1)
    buf += chunk
c, r = post({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 21, "reason": "gave up"}}, sid)
print("cancel status", r.status); r.read(); c.close()
t0 = time.time()
rest = b""
while True:
    chunk = sr.fp.readline()
    if not chunk:
        break
    rest += chunk
print("stream closed after %.1f s" % (time.time() - t0))
for line in (buf + rest).splitlines():
    if line.startswith(b"data: ") and json.loads(line[6:]).get("id") == 21:
        print("FAIL: a response for the cancelled id 21:", line); sys.exit(1)
c, r = post({"jsonrpc": "2.0", "id": 22, "method": "tools/list"}, sid)
print("after cancel", r.status, b'"run_session"' in r.read())
PY
check "$DIR/http_cancel.txt" "cancel status 202"
check "$DIR/http_cancel.txt" "stream closed after"
check "$DIR/http_cancel.txt" "after cancel 200 True"
grep -q FAIL "$DIR/http_cancel.txt" && { cat "$DIR/http_cancel.txt"; fail=1; }
status() {  # HTTP status of METHOD URL [BODY] (python3: curl's command is not installed by bootstrap)
  python3 - "$@" <<'PY'
import sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[2], data=sys.argv[3].encode() if len(sys.argv) > 3 else None,
                             method=sys.argv[1], headers={"Content-Type": "application/json"})
try:
    print(urllib.request.urlopen(req, timeout=10).status)
except urllib.error.HTTPError as e:
    print(e.code)
PY
}
status POST "$URL" '{"jsonrpc":"2.0","id":9,"method":"tools/list"}' > "$DIR/nosession.txt"
check "$DIR/nosession.txt" "400"
status GET "$URL" > "$DIR/get.txt"
check "$DIR/get.txt" "405"
kill "$HTTP_PID"; wait "$HTTP_PID" 2>/dev/null; HTTP_PID=
# the MCP screenshot leaves no blob behind: put with ttl_ms 30000, removed by the broker after
# that (bounded wait: 30 s from the shot plus the once-a-second check)
if [ -n "$SHOT" ]; then
  for _ in $(seq 450); do [ -z "$(find "$DIR/data" -name "${SHOT:2}*")" ] && break; sleep 0.1; done
  left=$(find "$DIR/data" -name "${SHOT:2}*")
  [ -z "$left" ] || { echo "FAIL: the screenshot's blob is still in the broker's store: $left"; fail=1; }
fi
[ $fail -eq 0 ] && echo "test_mcp_server: passed"
exit $fail
