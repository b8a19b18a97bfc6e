#!/usr/bin/env bash
# test_netns_bus.sh - the broker across network namespaces, with CURVE: a broker namespace,
# two device namespaces and a monitor namespace on a bridge. Each device writes its own board
# continuously; device a's link is cut for 5 s and restored. Checked: every item a device saw
# acknowledged is on the broker (nothing acknowledged lost), device a's writes resume after
# the cut, device b never had to retry (unaffected), the monitor sees the bus, an unknown
# certificate and a plain (no CURVE) subscriber in the monitor namespace see nothing, and
# the namespaces are gone afterwards (trap). Needs root and iproute2: skipped otherwise.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${UFO_BUILD_DIR:?UFO_BUILD_DIR}
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
  echo "SKIP: needs root and iproute2 (ip netns) to create network namespaces"
  exit 77
fi
. "$HERE/harness.sh"
TMP=$(mktemp -d /tmp/ufo-netns-XXXXXX)
FAILS=0
cleanup() { netns_teardown; [ "${KEEP:-}" ] || rm -rf "$TMP"; }
trap cleanup EXIT
trap 'exit 1' INT TERM
check() { if eval "$1"; then echo "ok: $2"; else echo "FAIL: $2"; FAILS=$((FAILS + 1)); fi; }

UFO=$BUILD/cli/ufo
PROBE=$BUILD/tests/ufo-bb-probe
KEYS=$TMP/keys
for c in broker:broker agent:agent mon:monitor stranger:agent; do
  "$UFO" keygen "${c%%:*}" --role "${c##*:}" --dir "$KEYS" >/dev/null || exit 1
done
mkdir -p "$KEYS/allowed"
cp "$KEYS/agent.cert" "$KEYS/mon.cert" "$KEYS/allowed/"

netns_setup broker dev-a dev-b mon || { echo "FAIL: namespace setup"; exit 1; }
BIP=$(netns_ip broker)
CMD=tcp://$BIP:5570
BUS=tcp://$BIP:5571
export UFO_SECURITY__CURVE=true UFO_SECURITY__CERT_DIR=$KEYS
netns_spawn broker "$TMP/broker.log" "$BUILD/blackboard_broker/ufo-broker" --data-dir "$TMP/data" \
  --cmd "$CMD" --bus "$BUS" --stats-ms 1000
up=0
for i in $(seq 1 100); do
  netns_exec dev-a "$PROBE" --cmd "$CMD" --timeout 500 ping >/dev/null 2>&1 && { up=1; break; }
  sleep 0.1
done
check "[ $up = 1 ]" "device a reaches the broker across namespaces ($CMD)"
check "netns_exec dev-b '$PROBE' --cmd '$CMD' ping >/dev/null" "device b reaches the broker"
# the device namespaces cannot see each other's loopback: the broker is only on the bridge
check "! netns_exec dev-a '$PROBE' --cmd tcp://127.0.0.1:5570 --timeout 500 ping >/dev/null 2>&1" \
  "no broker on device a's own loopback"

# listeners in the monitor namespace: the monitor, an unknown certificate, no CURVE at all
netns_spawn mon "$TMP/mon.out" "$PROBE" --cmd "$CMD" --bus "$BUS" --cert-name mon listen 20000
netns_spawn mon "$TMP/stranger.out" "$PROBE" --cmd "$CMD" --bus "$BUS" --cert-name stranger listen 20000
netns_spawn mon "$TMP/plain.out" env UFO_SECURITY__CURVE=false "$PROBE" --cmd "$CMD" --bus "$BUS" listen 20000
LISTENERS="${NETNS_PIDS[*]: -3}"
# (no wait for them: the monitor's count has seconds of traffic to spare, and the other two
# must see nothing however long they listen)

netns_spawn dev-a "$TMP/a.out" "$PROBE" --cmd "$CMD" --timeout 1000 write-loop board-a 15
WA=$NETNS_LAST_PID
netns_spawn dev-b "$TMP/b.out" "$PROBE" --cmd "$CMD" --timeout 1000 write-loop board-b 15
WB=$NETNS_LAST_PID
# the cut comes once device a's first writes are on the broker (bounded wait)
before=0
for i in $(seq 1 300); do
  netns_exec broker "$PROBE" --cmd "$CMD" check board-a 5 >/dev/null 2>&1 && { before=1; break; }
  sleep 0.1
done
check "[ $before = 1 ]" "device a wrote before the cut"
netns_link dev-a down
check "! netns_exec dev-a '$PROBE' --cmd '$CMD' --timeout 1000 ping >/dev/null 2>&1" "device a is cut off"
sleep 4     # the outage itself (the thing under test): device a's writes time out and retry
netns_link dev-a up
for pid in $WA $WB; do
  for i in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
done
cat "$TMP/a.out" "$TMP/b.out"
read -r _ ACK_A _ RETRY_A < <(grep '^acked' "$TMP/a.out")
read -r _ ACK_B _ RETRY_B < <(grep '^acked' "$TMP/b.out")
check "[ ${ACK_A:-0} -gt 0 ] && [ ${RETRY_A:-0} -gt 0 ]" "device a wrote before and after the cut ($ACK_A acked, $RETRY_A retries)"
check "[ ${ACK_B:-0} -gt 100 ] && [ ${RETRY_B:-1} = 0 ]" "device b was unaffected ($ACK_B acked, ${RETRY_B:-?} retries)"
check "netns_exec broker '$PROBE' --cmd '$CMD' check board-a ${ACK_A:-1}" "every item device a saw acknowledged is on the broker"
check "netns_exec broker '$PROBE' --cmd '$CMD' check board-b ${ACK_B:-1}" "every item device b saw acknowledged is on the broker"
check "netns_exec dev-a '$PROBE' --cmd '$CMD' add board-a 3 >/dev/null" "device a writes again after the link came back"

for pid in $LISTENERS; do
  for i in $(seq 1 250); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
done
cat "$TMP/mon.out" "$TMP/stranger.out" "$TMP/plain.out"
MON=$(awk '/^messages/ {print $2}' "$TMP/mon.out")
check "[ ${MON:-0} -gt 100 ]" "the monitor saw the bus (${MON:-0} messages)"
check "grep -qx 'messages 0' '$TMP/stranger.out'" "an unknown certificate saw no traffic"
check "grep -qx 'messages 0' '$TMP/plain.out'" "a client without CURVE saw no traffic"
check "! netns_exec mon env UFO_SECURITY__CURVE=false '$PROBE' --cmd '$CMD' --timeout 1000 ping >/dev/null 2>&1" \
  "a client without CURVE gets no reply"

NAMES=("${NETNS_NAMES[@]}")
netns_teardown
left=0
for n in "${NAMES[@]}"; do ip netns list | grep -q "^$(netns_ns "$n")\b" && left=1; done
check "[ $left = 0 ]" "namespaces deleted"
[ $FAILS = 0 ] || { echo "$FAILS check(s) failed; broker log:"; tail -20 "$TMP/broker.log"; exit 1; }
echo "all checks passed"
