#!/usr/bin/env bash
# test_run_device.sh - `ufo run --device` fails fast on a device nobody serves, in every
# case, with the real broker and HostAgent (issue 20): a broker that has seen no HostAgent
# yet (just started: `ufo run` waits, bounded, for the first one and says so), a HostAgent
# of the device that connects late (the session goes ahead), a typo (refused with the known
# devices as soon as a HostAgent is there), a device whose HostAgent is away (seen since the
# broker started: the session waits for it), and an old broker (refused at once). The
# HostAgent's model is a dead port: no session here needs an answer. Every wait is bounded.
set -u
SRC=$(cd "${UFO_SOURCE_DIR:?}" && pwd)
BUILD=$(cd "${UFO_BUILD_DIR:?}" && pwd)
UFO="$BUILD/cli/ufo"
T=$(mktemp -d /tmp/ufo-run-device-XXXXXX)
failed=0
broker=""; broker2=""; host=""; bg1=""; bg2=""
cleanup () {
  for p in $bg1 $bg2 $host $broker $broker2; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  rm -rf "$T"
}
trap cleanup EXIT
check () { if eval "$1"; then echo "ok   $1"; else echo "FAIL $1"; failed=1; fi; }
cd "$SRC"
for v in $(env | sed -n 's/^\(UFO_[A-Z_]*AGENT[A-Z_]*\)=.*/\1/p; s/^\(UFO_API_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset UFO_CONFIG DISPLAY
export UFO_RUN_DIR="$T/run" UFO_API_BASE=http://127.0.0.1:9/v1 UFO_API_KEY=sk-none-0000 UFO_MAX_RETRY=0
export UFO_EVA_SESSION=false UFO_MAX_STEP=1 UFO_LOG__DIR="$T/logs"
mkdir -p "$UFO_RUN_DIR"
EP="ipc://$UFO_RUN_DIR/broker-cmd"
"$BUILD/blackboard_broker/ufo-broker" --data-dir "$T/data" --cmd "$EP" --bus "ipc://$UFO_RUN_DIR/broker-bus" \
  > "$T/broker.log" 2>&1 & broker=$!
# a second broker no HostAgent ever connects to
EP2="ipc://$T/run2-cmd"
"$BUILD/blackboard_broker/ufo-broker" --data-dir "$T/data2" --cmd "$EP2" --bus "ipc://$T/run2-bus" \
  > "$T/broker2.log" 2>&1 & broker2=$!
for _ in $(seq 1 100); do [ -S "$UFO_RUN_DIR/broker-cmd" ] && [ -S "$T/run2-cmd" ] && break; sleep 0.05; done
t0=$(date +%s)

# 1. a broker that has seen no HostAgent: both runs wait for the first one; d0's goes ahead
#    when its HostAgent connects, the typo is refused then with the known devices
"$UFO" run "hello" --device d0 --broker "$EP" --task late --timeout 20 > "$T/late.out" 2>&1 & bg1=$!
"$UFO" run "hello" --device d9 --broker "$EP" --task typo1 --timeout 20 > "$T/typo1.out" 2>&1 & bg2=$!
for _ in $(seq 1 300); do grep -q "waiting up to" "$T/late.out" "$T/typo1.out" 2>/dev/null && \
  [ "$(grep -l "waiting up to" "$T/late.out" "$T/typo1.out" | wc -l)" = 2 ] && break; sleep 0.05; done
check 'grep -q "no HostAgent has connected yet (the broker started [0-9.]* s ago); waiting up to [0-9]* s for it, to tell whether device \"d0\" exists" "$T/late.out"'
check 'grep -q "to tell whether device \"d9\" exists" "$T/typo1.out"'
"$BUILD/host_agent/ufo-host" --device d0 --broker "$EP" > "$T/host.log" 2>&1 & host=$!
wait $bg2; echo $? > "$T/rc-typo1"; bg2=""
check '[ "$(cat "$T/rc-typo1")" = 1 ] && grep -q "no HostAgent serves device \"d9\"; known devices: d0" "$T/typo1.out"'
wait $bg1; bg1=""
check '! grep -q "no HostAgent serves" "$T/late.out" && grep -q "HostAgent has the session on device d0" "$T/late.out"'

# 2. a HostAgent is connected: a typo is refused at once, without waiting
"$UFO" run "hello" --device d9 --broker "$EP" --task typo2 > "$T/typo2.out" 2>&1
echo $? > "$T/rc-typo2"
check '[ "$(cat "$T/rc-typo2")" = 1 ] && grep -q "no HostAgent serves device \"d9\"; known devices: d0" "$T/typo2.out"'
check '! grep -q "waiting up to" "$T/typo2.out"'

# 3. d0's HostAgent goes away: d0 is still a device (it may come back), the session waits
kill "$host"; wait "$host" 2>/dev/null; host=""
for _ in $(seq 1 200); do "$UFO" status --broker "$EP" 2>/dev/null | grep -q " d0 " || break; sleep 0.1; done
"$UFO" run "hello" --device d0 --broker "$EP" --task away --timeout 2 > "$T/away.out" 2>&1
check '! grep -q "no HostAgent serves" "$T/away.out" && grep -q "no HostAgent is connected yet; the session waits for one" "$T/away.out"'

# 4. an old broker with no HostAgent connected: a typo is refused at once, naming d0
while [ $(( $(date +%s) - t0 )) -lt 16 ]; do sleep 0.5; done
"$UFO" run "hello" --device d9 --broker "$EP" --task typo3 > "$T/typo3.out" 2>&1
echo $? > "$T/rc-typo3"
check '[ "$(cat "$T/rc-typo3")" = 1 ] && grep -q "no HostAgent serves device \"d9\"; known devices: d0" "$T/typo3.out"'
check '! grep -q "waiting up to" "$T/typo3.out"'
# 5. an old broker that has never seen a HostAgent: refused at once, saying so
"$UFO" run "hello" --device d9 --broker "$EP2" --task typo4 > "$T/typo4.out" 2>&1
echo $? > "$T/rc-typo4"
check '[ "$(cat "$T/rc-typo4")" = 1 ] && grep -q "no HostAgent serves device \"d9\": none has connected to the broker" "$T/typo4.out"'
check '! grep -q "waiting up to" "$T/typo4.out"'
# the brokers kept serving throughout
check 'kill -0 "$broker" && kill -0 "$broker2"'

[ $failed = 0 ] || { for f in late typo1 typo2 away typo3 typo4; do echo "--- $f"; cat "$T/$f.out"; done; echo "--- host"; tail -20 "$T/host.log"; }
exit $failed
