#!/usr/bin/env bash
# test_session_model.sh - a session's own model (`ufo run --api-base --model --api-key-env`,
# issue 20) with the real processes and two scripted servers. The agents start with server A
# (`ufo up --api-base A --model m1`, A's key as UFO_API_KEY; B's key in B_KEY, also only in
# the agents' environment). `ufo run --api-base B --model m2 --api-key-env B_KEY`: the
# HostAgent's, the AppAgent's and the EvaluationAgent's requests of that session all reach B
# with model m2 and B's key (the server checks the key of every request), none reach A, and
# response.log / request.log / evaluation.log name m2; the key never appears in the task the
# broker keeps. A following plain `ufo run` goes to A again with m1. An override naming a
# variable the agents do not have: `ufo run` warns up front, the session ends with a step
# error naming it, nothing is sent. An invalid override is refused by `ufo run` at once,
# before anything is submitted. Every wait is bounded.
set -u
SRC=$(cd "${UFO_SOURCE_DIR:?}" && pwd)
BUILD=$(cd "${UFO_BUILD_DIR:?}" && pwd)
UFO="$BUILD/cli/ufo"
T=$(mktemp -d /tmp/ufo-session-model-XXXXXX)
failed=0
up=""; llma=""; llmb=""
cleanup () {
  [ -n "$up" ] && { kill -TERM "$up" 2>/dev/null; for _ in $(seq 1 300); do kill -0 "$up" 2>/dev/null || break; sleep 0.1; done; }
  for p in $llma $llmb; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  rm -rf "$T"
}
trap cleanup EXIT
check () { if eval "$1"; then echo "ok   $1"; else echo "FAIL $1"; failed=1; fi; }
cd "$SRC"
for v in $(env | sed -n 's/^\(UFO_[A-Z_]*AGENT[A-Z_]*\)=.*/\1/p; s/^\(UFO_API_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset UFO_CONFIG OPENAI_API_KEY DISPLAY B_KEY NOPE_KEY
export no_proxy=127.0.0.1,localhost
export UFO_RUN_DIR="$T/run" UFO_SLEEP_TIME=0.2 UFO_MAX_ROUND=1
export UFO_DESKTOP__LAUNCHERS='{"mousepad": ["mousepad"]}'
KEY_A=sk-server-a-31c4
KEY_B=sk-server-b-95d7
mkdir -p "$UFO_RUN_DIR"
# the demo's script twice, every entry of each answering only to that server's key
for s in a b; do
  key=$KEY_A; [ $s = b ] && key=$KEY_B
  /usr/bin/python3 - "$SRC/scripts/demo-llm.json" "$T/script-$s.json" "$key" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for e in doc["entries"]:
    e["require_key"] = sys.argv[3]
json.dump(doc, open(sys.argv[2], "w"))
PY
done
"$BUILD/tests/ufo-llm-server" --script "$T/script-a.json" --port-file "$T/port-a" --log "$T/llm-a.jsonl" \
  --max-seconds 400 >/dev/null & llma=$!
"$BUILD/tests/ufo-llm-server" --script "$T/script-b.json" --port-file "$T/port-b" --log "$T/llm-b.jsonl" \
  --max-seconds 400 >/dev/null & llmb=$!
for _ in $(seq 1 200); do [ -s "$T/port-a" ] && [ -s "$T/port-b" ] && break; sleep 0.05; done
PA=$(cat "$T/port-a"); PB=$(cat "$T/port-b")
touch "$T/llm-a.jsonl" "$T/llm-b.jsonl"

# the agents: server A, A's key as the one setting; B's key only in their environment
UFO_API_KEY=$KEY_A B_KEY=$KEY_B "$UFO" up --apps mousepad --data-dir "$T/data" --api-type openai_compatible \
  --api-base "http://127.0.0.1:$PA/v1" --model m1 > "$T/up.out" 2>&1 & up=$!
for _ in $(seq 1 300); do [ -s "$UFO_RUN_DIR/up.json" ] && break; sleep 0.1; done
check '[ -s "$UFO_RUN_DIR/up.json" ]'
LOGS="$T/data/logs"

# 1. an invalid override: refused at once, nothing submitted
"$UFO" run "anything" --task bad1 --api-base "127.0.0.1:$PB/v1" > "$T/bad1.out" 2>&1
echo $? > "$T/rc-bad1"
check '[ "$(cat "$T/rc-bad1")" = 2 ] && grep -q "is not an http:// or https:// URL" "$T/bad1.out"'
"$UFO" run "anything" --task bad2 --api-type opena1 --model m2 > "$T/bad2.out" 2>&1
echo $? > "$T/rc-bad2"
check '[ "$(cat "$T/rc-bad2")" = 2 ] && grep -q "API type \"opena1\" is not one of" "$T/bad2.out"'
"$UFO" run "anything" --task bad3 --api-key "$KEY_B" > "$T/bad3.out" 2>&1
echo $? > "$T/rc-bad3"
check '[ "$(cat "$T/rc-bad3")" = 2 ] && grep -q "keys never go on a command line" "$T/bad3.out"'
mkdir -p "$T/batch" && echo '{"task": "bad4", "request": "anything"}' > "$T/batch/bad4.json"
"$UFO" batch "$T/batch" --model m2 --reasoning-effort extreme > "$T/bad4.out" 2>&1
echo $? > "$T/rc-bad4"
check '[ "$(cat "$T/rc-bad4")" = 2 ] && grep -q "reasoning effort \"extreme\" is not one of" "$T/bad4.out"'
check '[ ! -e "$LOGS/bad1" ] && [ ! -e "$LOGS/bad2" ] && [ ! -e "$LOGS/bad3" ] && [ ! -e "$LOGS/bad4" ]'

# 2. the session's own model: every agent's request reaches B with m2 and B's key
timeout 180 "$UFO" run "Write the note 'Shopping: milk, eggs' in Mousepad" --task s1 --yes --timeout 150 \
  --api-base "http://127.0.0.1:$PB/v1" --model m2 --api-key-env B_KEY > "$T/s1.out" 2>&1
echo $? > "$T/rc-s1"
check '[ "$(cat "$T/rc-s1")" = 0 ]'
check '! grep -q "warning: the model override" "$T/s1.out"'
check 'grep -q "warning: no price for model m2 in config/prices.json: this session.s costs will show as \$0" "$T/s1.out"'
check '[ "$(grep -c "warning: no price" "$T/s1.out")" = 1 ]'
check 'grep -q "model (this session, every agent): http://127.0.0.1:$PB/v1 model m2, key from \$B_KEY" "$T/s1.out"'
for agent in HostAgent AppAgent EvaluationAgent; do
  check 'grep "\"agent\":\"$agent\"" "$T/llm-b.jsonl" | grep -q "\"path\":\"/v1/chat/completions\".*\"auth\":\"bearer\".*\"key_ok\":true,\"model\":\"m2\""'
done
check '! grep -v "\"key_ok\":true,\"model\":\"m2\"" "$T/llm-b.jsonl" | grep -q .'
check '[ ! -s "$T/llm-a.jsonl" ]'
# the logs name the model that served each step
check 'grep "\"Agent\":\"HostAgent\"" "$LOGS/s1/response.log" | grep -q "\"Model\":\"openai_compatible/m2\""'
check 'grep "\"Agent\":\"AppAgent\"" "$LOGS/s1/response.log" | grep -q "\"Model\":\"openai_compatible/m2\""'
check '! grep "\"Model\"" "$LOGS/s1/response.log" | grep -v "\"Model\":\"openai_compatible/m2\"" | grep -q .'
check 'grep "\"Agent\":\"AppAgent\"" "$LOGS/s1/request.log" | grep -q "\"model\":\"openai_compatible/m2\""'
check 'grep -q "\"model\": *\"openai_compatible/m2\"" "$LOGS/s1/evaluation.log"'
check 'grep -q "\"endpoint\": *\"http://127.0.0.1:$PB/v1\"" "$LOGS/s1/request.json"'
check 'grep -q "<dt>Model</dt><dd>openai_compatible/m2</dd>" "$LOGS/s1/report.html"'
check 'grep -q "model openai_compatible/m2</p>" "$LOGS/s1/report.html"'
# the key never travelled: not in the broker's data (the persisted tasks), not in the logs
check '! grep -rqa "$KEY_B" "$T/data" "$UFO_RUN_DIR"'

# 3. a plain session again: server A, m1
nb=$(wc -l < "$T/llm-b.jsonl")
timeout 180 "$UFO" run "Write the note 'Shopping: milk, eggs' in Mousepad" --task s2 --yes --timeout 150 \
  > "$T/s2.out" 2>&1
echo $? > "$T/rc-s2"
check '[ "$(cat "$T/rc-s2")" = 0 ]'
for agent in HostAgent AppAgent EvaluationAgent; do
  check 'grep "\"agent\":\"$agent\"" "$T/llm-a.jsonl" | grep -q "\"key_ok\":true,\"model\":\"m1\""'
done
check '[ "$(wc -l < "$T/llm-b.jsonl")" = "$nb" ]'
check 'grep "\"Agent\":\"HostAgent\"" "$LOGS/s2/response.log" | grep -q "\"Model\":\"openai_compatible/m1\""'

# 4. a key variable the agents do not have: warned up front, a step error naming it
na=$(wc -l < "$T/llm-a.jsonl")
timeout 60 "$UFO" run "Write a note in Mousepad" --task s3 --yes --timeout 40 \
  --api-base "http://127.0.0.1:$PB/v1" --model m2 --api-key-env NOPE_KEY > "$T/s3.out" 2>&1
echo $? > "$T/rc-s3"
check '[ "$(cat "$T/rc-s3")" != 0 ]'
check 'grep -q "warning: the model override needs NOPE_KEY in the agents. environment, and the running .ufo up. (pid [0-9]*) has no such variable" "$T/s3.out"'
check 'grep -q "the model override.s key variable NOPE_KEY is not set in this agent.s environment" "$T/s3.out"'
check 'grep -q "NOPE_KEY is not set" "$LOGS/s3/response.log"'
check '[ "$(wc -l < "$T/llm-b.jsonl")" = "$nb" ] && [ "$(wc -l < "$T/llm-a.jsonl")" = "$na" ]'
# the system keeps serving: the HostAgent is alive and takes the next session
check 'kill -0 "$up"'

[ $failed = 0 ] || { echo "--- up.out"; tail -20 "$T/up.out"
  for f in s1.out s2.out s3.out; do [ -f "$T/$f" ] && { echo "--- $f"; tail -25 "$T/$f"; }; done
  echo "--- llm-b"; head -c 3000 "$T/llm-b.jsonl"; echo "--- host log"; tail -30 "$UFO_RUN_DIR"/logs/host*.log 2>/dev/null; }
exit $failed
