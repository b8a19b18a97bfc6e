#!/bin/sh
# bench/host_wait_wakeups.sh BUILD [SECONDS] - wake-ups per second of ufo-host's main thread
# while a session waits for a slow model reply (issue 17): a real ufo-broker, the scripted LLM
# server answering the HostAgent after 60 s (tests/data/host_agent/llm_very_slow.json), a
# virtual desktop, ufo-host and `ufo run`. Once the model call reached the server, counts the
# context switches of ufo-host's main thread (/proc/PID/task/PID/status) over SECONDS
# (default 10). A HostAgent that turns its loop on a fixed cap while it waits shows ~20/s;
# one that sleeps until its next timer shows what its heartbeats need. HOST_BIN=PATH runs
# another ufo-host (e.g. an older build, as the baseline) with this build's other programs.
set -u
BUILD=$(cd "${1:?usage: host_wait_wakeups.sh BUILD [SECONDS]}" && pwd)
SECS=${2:-10}
SRC=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d)
pids=""
DS=""
cleanup () {
  for p in $pids; do kill "$p" 2>/dev/null; done; wait 2>/dev/null
  [ -n "$DS" ] && "$SRC/scripts/desktop-session" stop "$DS" > /dev/null 2>&1
  rm -rf "$T"
}
trap cleanup EXIT INT TERM
export UFO_RUN_DIR="$T/run"
mkdir -p "$T/run"
E=$("$SRC/scripts/desktop-session" start) && eval "$E" && DS=${UFO_DESKTOP_SESSION:-}
"$BUILD/tests/ufo-llm-server" --script "$SRC/tests/data/host_agent/llm_very_slow.json" --port-file "$T/port" \
  --log "$T/llm.jsonl" > "$T/llm.out" 2>&1 & pids="$pids $!"
"$BUILD/blackboard_broker/ufo-broker" --data-dir "$T/broker" --cmd "ipc://$T/run/cmd" \
  --bus "ipc://$T/run/bus" > "$T/broker.log" 2>&1 & pids="$pids $!"
for _ in $(seq 1 200); do [ -S "$T/run/cmd" ] && [ -s "$T/port" ] && break; sleep 0.05; done
export UFO_API_TYPE=openai_compatible UFO_API_BASE="http://127.0.0.1:$(cat "$T/port")/v1" UFO_API_KEY=sk-bench \
  UFO_API_MODEL=scripted UFO_BROKER__BUS_ENDPOINT="ipc://$T/run/bus"
EP="ipc://$T/run/cmd"
"${HOST_BIN:-$BUILD/host_agent/ufo-host}" --broker "$EP" --device wait > "$T/host.log" 2>&1 & host=$!
pids="$host $pids"
sleep 3
(cd "$T" && exec "$BUILD/cli/ufo" run "Wait for a slow model" --device wait --task wait --yes --json \
  --broker "$EP" > "$T/run.out" 2>&1) & pids="$! $pids"
for _ in $(seq 1 600); do grep -q HostAgent "$T/llm.jsonl" 2>/dev/null && break; sleep 0.05; done
grep -q HostAgent "$T/llm.jsonl" 2>/dev/null || { echo "the model call never came"; tail -n 5 "$T/host.log" "$T/run.out" "$T/llm.out"; exit 1; }
sleep 1
n0=$(awk '/ctxt_switches/ { s += $2 } END { print s }' "/proc/$host/task/$host/status")
sleep "$SECS"
n1=$(awk '/ctxt_switches/ { s += $2 } END { print s }' "/proc/$host/task/$host/status")
printf 'ufo-host main thread while the model call waits: %.1f/s over %s s\n' \
  "$(awk -v d=$((n1 - n0)) -v s="$SECS" 'BEGIN { print d / s }')" "$SECS"
