#!/usr/bin/env bash
# `ufo mcp-server` driven by the official MCP inspector (its --cli mode, from npm): tools/list,
# list_workers / list_devices against a real `ufo up` (broker, HostAgent, AppAgent, evaluator on
# a virtual desktop it starts, scripted model), a whole session through run_session with its
# result, and, from a raw JSON-RPC client, progress notifications, a bad line, a screenshot.
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

"$UFO_BUILD_DIR/tests/ufo-llm-server" --script "$UFO_SOURCE_DIR/tests/data/host_agent/finish.json" \
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
  # a session's own model that carries a key: refused, nothing submitted (keys never travel)
  echo '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"run_session","arguments":{"request":"x","model":{"model":"m2","api_key":"sk-leak-0000"}}}}'
  for _ in $(seq 100); do grep -q '"id":4' "$DIR/raw.out" 2>/dev/null && break; sleep 0.1; done
} | timeout 120 scripts/desktop-session run -- "${SERVER[@]}" > "$DIR/raw.out" 2> "$DIR/raw.err"
check "$DIR/raw.out" '"protocolVersion":"2025-06-18"'
check "$DIR/raw.out" '"code":-32700'
check "$DIR/raw.out" '"method":"notifications/progress","params":{"progressToken":"p1"'
check "$DIR/raw.out" 'accepted (task '
check "$DIR/raw.out" '"id":2,"result"'
check "$DIR/raw.out" '"type":"image"'
check "$DIR/raw.out" '"mimeType":"image/png"'
check "$DIR/raw.out" 'API keys never travel'
grep '"id":4' "$DIR/raw.out" | grep -q '"isError":true' || { echo "FAIL: run_session with a key in model not an error"; fail=1; }
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
[ $fail -eq 0 ] && echo "test_mcp_server: passed"
exit $fail
