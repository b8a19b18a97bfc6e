#!/usr/bin/env bash
# test_one_setting.sh - the one model setting with the real processes: `ufo up --api-type
# --api-base --model` and UFO_API_KEY only (no per-agent variable, the shipped
# config/ufo.json), a session through `ufo run`: the HostAgent's, the AppAgent's and the
# EvaluationAgent's requests all reach the scripted server, with that model and that key.
# `ufo up` names the endpoint and model per agent, never the key. Then a reasoning model
# (the server refuses max_tokens, temperature and top_p as OpenAI's do): without
# REASONING_MODEL the session's step error says what to set; with UFO_REASONING_MODEL=true a
# whole session runs, every agent sending max_completion_tokens. And API type claude: a whole
# session through the Messages API shape (/v1/messages, x-api-key, system field, image blocks).
# Every wait is bounded.
set -u
SRC=$(cd "${UFO_SOURCE_DIR:?}" && pwd)
BUILD=$(cd "${UFO_BUILD_DIR:?}" && pwd)
UFO="$BUILD/cli/ufo"
T=$(mktemp -d /tmp/ufo-one-setting-XXXXXX)
failed=0
up=""; llm=""
llm2=""; llm3=""
stop_up () {
  [ -n "$up" ] && { kill -TERM "$up" 2>/dev/null; for _ in $(seq 1 300); do kill -0 "$up" 2>/dev/null || break; sleep 0.1; done; }
  up=""
}
cleanup () {
  stop_up
  for p in $llm $llm2 $llm3; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  rm -rf "$T"
}
trap cleanup EXIT
check () { if eval "$1"; then echo "ok   $1"; else echo "FAIL $1"; failed=1; fi; }
cd "$SRC"
for v in $(env | sed -n 's/^\(UFO_[A-Z_]*AGENT[A-Z_]*\)=.*/\1/p; s/^\(UFO_API_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset UFO_CONFIG OPENAI_API_KEY DISPLAY
export no_proxy=127.0.0.1,localhost
export UFO_RUN_DIR="$T/run" UFO_SLEEP_TIME=0.2 UFO_MAX_ROUND=1
export UFO_DESKTOP__LAUNCHERS='{"mousepad": ["mousepad"]}'
export UFO_API_KEY=sk-one-setting-7e2f
mkdir -p "$UFO_RUN_DIR"
# the demo's script, every entry answering only to this key
/usr/bin/python3 - "$SRC/scripts/demo-llm.json" "$T/script.json" "$UFO_API_KEY" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for e in doc["entries"]:
    e["require_key"] = sys.argv[3]
json.dump(doc, open(sys.argv[2], "w"))
PY
"$BUILD/tests/ufo-llm-server" --script "$T/script.json" --port-file "$T/port" --log "$T/llm.jsonl" \
  --max-seconds 300 >/dev/null & llm=$!
for _ in $(seq 1 200); do [ -s "$T/port" ] && break; sleep 0.05; done
PORT=$(cat "$T/port")

"$UFO" up --apps mousepad --data-dir "$T/data" --api-type openai_compatible \
  --api-base "http://127.0.0.1:$PORT/v1" --model scripted > "$T/up.out" 2>&1 & up=$!
for _ in $(seq 1 300); do [ -s "$UFO_RUN_DIR/up.json" ] && break; sleep 0.1; done
check '[ -s "$UFO_RUN_DIR/up.json" ]'
for b in HOST_AGENT APP_AGENT EVALUATION_AGENT; do
  check 'grep -q "^  $b *openai_compatible http://127.0.0.1:$PORT/v1/chat/completions model scripted, key set" "$T/up.out"'
done
check '! grep -q "$UFO_API_KEY" "$T/up.out"'

timeout 180 "$UFO" run "Write the note 'Shopping: milk, eggs' in Mousepad" --task one --yes --timeout 150 \
  > "$T/run.out" 2>&1
echo "ufo run exited $?"
for agent in HostAgent AppAgent EvaluationAgent; do
  check 'grep "\"agent\":\"$agent\"" "$T/llm.jsonl" | grep -q "\"path\":\"/v1/chat/completions\".*\"auth\":\"bearer\".*\"key_ok\":true,\"model\":\"scripted\""'
done
# no request went anywhere else: every one the agents made reached this server with this model
check '! grep -v "\"key_ok\":true,\"model\":\"scripted\"" "$T/llm.jsonl" | grep -q .'
# ufo eval takes the same options: a re-evaluation of that session asks the same server
n=$(grep -c '"agent":"EvaluationAgent"' "$T/llm.jsonl")
"$UFO" eval "$T/data/logs/one" --api-type openai_compatible --api-base "http://127.0.0.1:$PORT/v1" \
  --model scripted > "$T/eval.out" 2>&1
check '[ "$(grep -c "\"agent\":\"EvaluationAgent\".*\"key_ok\":true,\"model\":\"scripted\"" "$T/llm.jsonl")" -gt "$n" ]'

# a reasoning model, refused as OpenAI refuses it
stop_up
/usr/bin/python3 - "$T/script.json" "$T/script2.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for e in doc["entries"]:
    e["reject_params"] = ["max_tokens", "temperature", "top_p"]
json.dump(doc, open(sys.argv[2], "w"))
PY
"$BUILD/tests/ufo-llm-server" --script "$T/script2.json" --port-file "$T/port2" --log "$T/llm2.jsonl" \
  --max-seconds 300 >/dev/null & llm2=$!
for _ in $(seq 1 200); do [ -s "$T/port2" ] && break; sleep 0.05; done
PORT2=$(cat "$T/port2")
start_up () {
  rm -f "$UFO_RUN_DIR/up.json"
  "$UFO" up --apps mousepad --data-dir "$T/data" --api-type openai_compatible \
    --api-base "http://127.0.0.1:$PORT2/v1" --model o3-mini > "$T/up2.out" 2>&1 & up=$!
  for _ in $(seq 1 300); do [ -s "$UFO_RUN_DIR/up.json" ] && break; sleep 0.1; done
}
start_up
timeout 120 "$UFO" run "Write the note 'Shopping: milk, eggs' in Mousepad" --task r1 --yes --timeout 90 \
  > "$T/run1.out" 2>&1
echo $? > "$T/rc1"
check '[ "$(cat "$T/rc1")" != 0 ] && grep -q "set HOST_AGENT.REASONING_MODEL true" "$T/run1.out"'
stop_up
export UFO_REASONING_MODEL=true
start_up
timeout 150 "$UFO" run "Write the note 'Shopping: milk, eggs' in Mousepad" --task r2 --yes --timeout 120 \
  > "$T/run2.out" 2>&1
echo $? > "$T/rc2"
check '[ "$(cat "$T/rc2")" = 0 ]'
for agent in HostAgent AppAgent EvaluationAgent; do
  check 'grep "\"agent\":\"$agent\"" "$T/llm2.jsonl" | grep "\"fault\":\"\"" | grep -q "\"max_completion_tokens\":2000"'
done
unset UFO_REASONING_MODEL

# claude: the same session through the Messages API (a fresh server: the script's entries
# serve one request each)
stop_up
"$BUILD/tests/ufo-llm-server" --script "$T/script.json" --port-file "$T/port3" --log "$T/llm3.jsonl" \
  --max-seconds 300 >/dev/null & llm3=$!
for _ in $(seq 1 200); do [ -s "$T/port3" ] && break; sleep 0.05; done
PORT3=$(cat "$T/port3")
rm -f "$UFO_RUN_DIR/up.json"
"$UFO" up --apps mousepad --data-dir "$T/data" --api-type claude --api-base "http://127.0.0.1:$PORT3" \
  --model claude-sonnet-4-5 > "$T/up3.out" 2>&1 & up=$!
for _ in $(seq 1 300); do [ -s "$UFO_RUN_DIR/up.json" ] && break; sleep 0.1; done
check 'grep -q "^  HOST_AGENT *claude http://127.0.0.1:$PORT3/v1/messages model claude-sonnet-4-5, key set" "$T/up3.out"'
timeout 150 "$UFO" run "Write the note 'Shopping: milk, eggs' in Mousepad" --task c1 --yes --timeout 120 \
  > "$T/run3.out" 2>&1
echo $? > "$T/rc3"
check '[ "$(cat "$T/rc3")" = 0 ]'
for agent in HostAgent AppAgent EvaluationAgent; do
  check 'grep "\"agent\":\"$agent\"" "$T/llm3.jsonl" | grep -q "\"path\":\"/v1/messages\".*\"auth\":\"x-api-key\".*\"key_ok\":true"'
done
check 'grep "\"agent\":\"EvaluationAgent\"" "$T/llm3.jsonl" | grep -q "\"image_shape\":\"image/base64\""'
check '! grep -q "\"fault\":\"refused\"" "$T/llm3.jsonl"'
[ $failed = 0 ] || { echo "--- up.out"; cat "$T/up.out"; echo "--- run.out"; tail -20 "$T/run.out"
  for f in run1.out run2.out run3.out; do [ -f "$T/$f" ] && { echo "--- $f"; tail -20 "$T/$f"; }; done; }
exit $failed
