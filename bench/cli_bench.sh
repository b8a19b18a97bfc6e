#!/usr/bin/env bash
# cli_bench.sh BUILD_DIR - what a user waits for when something is missing (issue 20): `ufo run`,
# `ufo status` and `ufo monitor` with no broker (an ipc socket that does not exist, a tcp port
# that does not answer), `ufo run --device` naming a device no HostAgent serves, against the
# baseline in the same run: `ufo status` answered by a running broker. Median of N runs (5).
set -euo pipefail
BUILD=${1:?build dir}
N=${N:-5}
UFO=$BUILD/cli/ufo
TMP=$(mktemp -d /tmp/ufo-cli-bench.XXXXXX)
trap 'kill $broker $broker2 $host 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$TMP"' EXIT
export UFO_RUN_DIR=$TMP/run
mkdir -p "$UFO_RUN_DIR"
"$BUILD/blackboard_broker/ufo-broker" --data-dir "$TMP/data" --cmd "ipc://$TMP/cmd" --bus "ipc://$TMP/bus" \
  >"$TMP/broker.log" 2>&1 &
broker=$!
"$BUILD/host_agent/ufo-host" --device d0 --broker "ipc://$TMP/cmd" >"$TMP/host.log" 2>&1 &
host=$!
# a second broker no HostAgent ever connects to (measured once it is older than the 15 s in
# which `ufo run --device` waits for the first HostAgent after a broker starts)
"$BUILD/blackboard_broker/ufo-broker" --data-dir "$TMP/data2" --cmd "ipc://$TMP/cmd2" --bus "ipc://$TMP/bus2" \
  >"$TMP/broker2.log" 2>&1 &
broker2=$!
t_broker2=$(date +%s)
for _ in $(seq 1 100); do "$UFO" status --broker "ipc://$TMP/cmd" 2>/dev/null | grep -q ' d0 ' && break; sleep 0.1; done

# median wall-clock milliseconds of N runs of a command (its exit status ignored)
median_ms () {
  local times=()
  for _ in $(seq 1 "$N"); do
    local t0 t1
    t0=$(date +%s%N)
    "$@" >/dev/null 2>&1 || true
    t1=$(date +%s%N)
    times+=($(( (t1 - t0) / 1000000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (N + 1) / 2 ))p"
}

base=$(median_ms "$UFO" status --broker "ipc://$TMP/cmd")
printf '%-58s %8s %8s\n' "what the user waits for" "ms" "x base"
row () { awk -v what="$1" -v ms="$2" -v base="$base" 'BEGIN { printf "%-58s %8d %8.1f\n", what, ms, ms / (base > 0 ? base : 1) }'; }
row "baseline: ufo status, broker running" "$base"
row "ufo run, no broker (ipc socket missing)" "$(median_ms "$UFO" run hello --broker "ipc://$TMP/none")"
row "ufo status, no broker (ipc socket missing)" "$(median_ms "$UFO" status --broker "ipc://$TMP/none")"
row "ufo monitor, no broker (ipc socket missing)" "$(median_ms "$UFO" monitor --broker "ipc://$TMP/none" --bus "ipc://$TMP/nobus")"
row "ufo run, no broker (tcp port silent)" "$(median_ms "$UFO" run hello --broker tcp://127.0.0.1:9)"
row "ufo status, no broker (tcp port silent)" "$(median_ms "$UFO" status --broker tcp://127.0.0.1:9)"
row "ufo run --device d9 (only d0 has a HostAgent)" "$(median_ms "$UFO" run hello --device d9 --broker "ipc://$TMP/cmd")"
while [ $(( $(date +%s) - t_broker2 )) -lt 16 ]; do sleep 0.5; done
row "ufo run --device d9 (no HostAgent ever, broker > 15 s old)" "$(median_ms "$UFO" run hello --device d9 --broker "ipc://$TMP/cmd2")"
