#!/usr/bin/env bash
# test_doctor.sh - `ufo doctor` against the real pieces: the scripted server standing in for
# the model API, a real ufo-broker, a real virtual desktop (scripts/desktop-session). Green
# when all is well (exit 0); red, with the advice that fixes it, for a dead port, a refused
# key (HTTP 401), an unknown model (404), a model without image input, a reasoning model
# sent max_tokens, a missing key, an unpriced model, no broker, a launcher that does not
# exist. Also `ufo up` printing the agents' models and warning at start. Every wait is bounded.
set -u
SRC=$(cd "${UFO_SOURCE_DIR:?}" && pwd)
BUILD=$(cd "${UFO_BUILD_DIR:?}" && pwd)
UFO="$BUILD/cli/ufo"
T=$(mktemp -d /tmp/ufo-doctor-XXXXXX)
failed=0
pids=()
cleanup () {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  [ -n "${DS:-}" ] && "$SRC/scripts/desktop-session" stop "$DS" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
check () { if eval "$1"; then echo "ok   $1"; else echo "FAIL $1"; failed=1; fi; }
cd "$SRC"       # config/ufo.json and config/prices.json as shipped
unset UFO_CONFIG OPENAI_API_KEY AZURE_OPENAI_API_KEY ANTHROPIC_API_KEY GEMINI_API_KEY \
      UFO_API_TYPE UFO_API_BASE UFO_API_KEY UFO_API_MODEL DISPLAY
export no_proxy=127.0.0.1,localhost
export UFO_RUN_DIR="$T/run"
mkdir -p "$UFO_RUN_DIR"

cat > "$T/script.json" <<'JSON'
{"entries": [
 {"match": {"model": "text-only"}, "times": 0, "no_images": true, "content": "{\"ok\": true}"},
 {"match": {"model": "o3-mini"}, "times": 0, "reject_params": ["max_tokens", "temperature"], "content": "{\"ok\": true}"},
 {"match": {}, "times": 0, "require_key": "sk-doctor-good", "models": ["ufo-scripted", "text-only", "o3-mini"],
  "content": "{\"ok\": true}", "usage": {"prompt_tokens": 20, "completion_tokens": 5}}
]}
JSON
"$BUILD/tests/ufo-llm-server" --script "$T/script.json" --port-file "$T/port" --log "$T/requests.jsonl" \
  --max-seconds 300 >/dev/null & pids+=($!)
for _ in $(seq 1 200); do [ -s "$T/port" ] && break; sleep 0.05; done
PORT=$(cat "$T/port")
BASE="http://127.0.0.1:$PORT/v1"
doc () { "$UFO" doctor "$@" > "$T/out" 2>&1; echo $? > "$T/rc"; cat "$T/out"; }
rc () { cat "$T/rc"; }
has () { grep -qF -- "$1" "$T/out"; }

# green: every agent's engine answers with usable JSON and takes an image; priced
export UFO_API_KEY=sk-doctor-good
doc --only model,prices --api-type openai_compatible --api-base "$BASE" --model ufo-scripted
check '[ "$(rc)" = 0 ] && has "✔ HOST_AGENT" && has "key accepted, JSON reply usable" && has "image input accepted"'
check 'has "✔ APP_AGENT         same engine as HOST_AGENT" && has "✔ price             openai_compatible/ufo-scripted"'
# the request the doctor made, as the server saw it: path, bearer key, an image part, JSON mode
check 'grep -q "\"path\":\"/v1/chat/completions\".*\"auth\":\"bearer\".*\"key_ok\":true" "$T/requests.jsonl"'
check 'grep -q "\"images\":1.*\"json_mode\":true" "$T/requests.jsonl"'

# red: nothing listens
doc --only model --api-base "http://127.0.0.1:9/v1" --model ufo-scripted
check '[ "$(rc)" = 1 ] && has "not reachable" && has "fix UFO_API_BASE"'
# red: the key is refused
UFO_API_KEY=sk-wrong doc --only model --api-type openai_compatible --api-base "$BASE" --model ufo-scripted
check '[ "$(rc)" = 1 ] && has "HTTP 401" && has "the key was refused: export UFO_API_KEY"'
# red: no key at all for a hosted API
env -u UFO_API_KEY "$UFO" doctor --only model --api-base "$BASE" > "$T/out" 2>&1; echo $? > "$T/rc"
check '[ "$(rc)" = 1 ] && has "no API key" && has "export UFO_API_KEY=... (or OPENAI_API_KEY)"'
# red: the model is unknown
doc --only model --api-type openai_compatible --api-base "$BASE" --model no-such-model
check '[ "$(rc)" = 1 ] && has "HTTP 404" && has "check UFO_API_MODEL"'
# red: no image input while VISUAL_MODE is on
doc --only model --api-type openai_compatible --api-base "$BASE" --model text-only
check '[ "$(rc)" = 1 ] && has "✔ HOST_AGENT" && has "✘ HOST_AGENT image" && has "VISUAL_MODE false"'
UFO_HOST_AGENT__VISUAL_MODE=false UFO_APP_AGENT__VISUAL_MODE=false \
  doc --only model --api-type openai_compatible --api-base "$BASE" --model text-only
check '[ "$(rc)" = 0 ] && ! has "image"'
# red: a reasoning model sent max_tokens, with the setting that fixes it; green with it
doc --only model --api-type openai_compatible --api-base "$BASE" --model o3-mini
check '[ "$(rc)" = 1 ] && has "HTTP 400" && has "set HOST_AGENT.REASONING_MODEL true"'
UFO_REASONING_MODEL=true doc --only model --api-type openai_compatible --api-base "$BASE" --model o3-mini
check '[ "$(rc)" = 0 ]'
# red: an unpriced model
doc --only prices --api-type openai_compatible --api-base "$BASE" --model text-only
check '[ "$(rc)" = 1 ] && has "openai_compatible/text-only: no price" && has "add \"openai_compatible/text-only\""'
# --quick makes no request
n=$(wc -l < "$T/requests.jsonl")
doc --quick --only model --api-type openai_compatible --api-base "$BASE" --model ufo-scripted
check '[ "$(rc)" = 0 ] && [ "$(wc -l < "$T/requests.jsonl")" = "$n" ]'
# bad usage
"$UFO" doctor --only frobs > /dev/null 2>&1
check '[ $? = 2 ]'

# ufo run gives one session its own model (test_session_model); a key on its command line is
# refused at once, and so is a model setting that cannot be used
"$UFO" run "hello" --model gpt-5 --api-key sk-cmdline-0000 > "$T/out" 2>&1; echo $? > "$T/rc"
check '[ "$(rc)" = 2 ] && has "keys never go on a command line" && has "--api-key-env"'
"$UFO" run "hello" --model gpt-5 --api-type openia > "$T/out" 2>&1; echo $? > "$T/rc"
check '[ "$(rc)" = 2 ] && has "API type \"openia\" is not one of"'

# broker: none, then a real one
doc --only broker
check '[ "$(rc)" = 1 ] && has "no broker at" && has "ufo up"'
"$BUILD/blackboard_broker/ufo-broker" --data-dir "$T/broker" --cmd "ipc://$T/run/broker-cmd" \
  --bus "ipc://$T/run/broker-bus" > "$T/broker.log" 2>&1 & pids+=($!)
for _ in $(seq 1 200); do [ -S "$T/run/broker-cmd" ] && break; sleep 0.05; done
doc --only broker
check '[ "$(rc)" = 0 ] && has "✔ broker" && has "ufobus "'

# desktop: a real virtual desktop with its accessibility bus; launchers resolvable or not
E=$("$SRC/scripts/desktop-session" start) && eval "$E" && DS=$UFO_DESKTOP_SESSION
UFO_DESKTOP__LAUNCHERS='{"shell": ["sh"], "ghost": ["no-such-program-xyz"]}' doc --only desktop
check 'has "✔ desktop" && has "accessibility bus: reachable" && has "✔ launcher shell"'
check '[ "$(rc)" = 1 ] && has "✘ launcher ghost" && has "install no-such-program-xyz"'

# ufo up: the models per agent (no key shown), the unpriced warning, the quick check
UFO_API_KEY=sk-doctor-good timeout -s INT 4 "$UFO" up --no-eval --api-type openai_compatible \
  --api-base "http://127.0.0.1:9/v1" --model text-only --data-dir "$T/data" > "$T/out" 2>&1
check 'has "APP_AGENT         openai_compatible http://127.0.0.1:9/v1/chat/completions model text-only, key set"'
check 'has "ufo up: warning: no price for openai_compatible/text-only" && has "ufo up: warning: HOST_AGENT" && has "not reachable"'
check '! grep -q sk-doctor-good "$T/out"'
exit $failed
