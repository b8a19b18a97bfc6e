#!/bin/sh
# bench/idle_wakeups.sh BUILD [SECONDS] - wake-ups per second of idle agents (issue 17).
# Starts a real ufo-broker and idle ufo-host, ufo-app, the device's desktop service (ufo-app
# --desktop-service, shown as ufo-desk) and ufo-eval on loopback ipc endpoints
# in a temporary directory, waits until they have registered, then counts the context
# switches (voluntary + nonvoluntary, /proc/PID/task/TID/status) of every thread of each
# process over SECONDS (default 10) and prints them per second, the main thread first, and
# each process's connections to the broker's command and bus endpoints (ss -xp: the broker's
# sockets on each endpoint and the agent's sockets that are their peers).
set -u
BUILD=${1:?usage: idle_wakeups.sh BUILD [SECONDS]}
SECS=${2:-10}
T=$(mktemp -d)
pids=""
DS=""
cleanup () {
  for p in $pids; do kill "$p" 2>/dev/null; done; wait 2>/dev/null
  [ -n "$DS" ] && "$(dirname "$0")/../scripts/desktop-session" stop "$DS" > /dev/null 2>&1
  rm -rf "$T"
}
trap cleanup EXIT INT TERM
export UFO_RUN_DIR="$T/run" UFO_API_KEY=sk-idle UFO_API_BASE=http://127.0.0.1:9/v1
mkdir -p "$T/run"
# ufo-app needs a display: a virtual desktop of its own (scripts/desktop-session)
E=$("$(dirname "$0")/../scripts/desktop-session" start) && eval "$E" && DS=${UFO_DESKTOP_SESSION:-}
"$BUILD/blackboard_broker/ufo-broker" --data-dir "$T/broker" --cmd "ipc://$T/run/cmd" \
  --bus "ipc://$T/run/bus" > "$T/broker.log" 2>&1 & pids="$pids $!"
for _ in $(seq 1 200); do [ -S "$T/run/cmd" ] && break; sleep 0.05; done
EP="ipc://$T/run/cmd"
"$BUILD/host_agent/ufo-host" --broker "$EP" --bus "ipc://$T/run/bus" --device idle > "$T/host.log" 2>&1 & host=$!
"$BUILD/app_agent/ufo-app" --broker "$EP" --device idle --app idle-app > "$T/app.log" 2>&1 & app=$!
"$BUILD/app_agent/ufo-app" --broker "$EP" --device idle --desktop-service > "$T/desk.log" 2>&1 & desk=$!
"$BUILD/eval_agent/ufo-eval" --broker "$EP" > "$T/eval.log" 2>&1 & eval=$!
pids="$host $app $desk $eval $pids"
sleep 3
switches () {   # pid -> "tid:count ..." (main thread first)
  for st in /proc/$1/task/*/status; do
    tid=${st%/status}; tid=${tid##*/}
    n=$(awk '/ctxt_switches/ { s += $2 } END { print s }' "$st" 2>/dev/null)
    echo "$tid:$n"
  done
}
for name in host app desk eval; do eval "pid=\$$name"; switches "$pid" > "$T/$name.0"; done
sleep "$SECS"
# broker connections: inodes of the peers of the broker's sockets on each endpoint
ss -xpn > "$T/ss" 2>/dev/null
peers () { awk -v p="$1" '$5 == p { print $8 }' "$T/ss" | sort -u; }
peers "$T/run/cmd" > "$T/cmd.peers"; peers "$T/run/bus" > "$T/bus.peers"
conns () {      # pid endpoint-peers-file -> how many of pid's sockets are such peers
  awk -v pid="pid=$1," 'NR == FNR { p [$1] = 1; next } index ($0, pid) && ($6 in p) { n++ } END { print n + 0 }' \
    "$2" "$T/ss"
}
for name in host app desk eval; do
  eval "pid=\$$name"
  if ! kill -0 "$pid" 2>/dev/null; then echo "ufo-$name: not running"; tail -5 "$T/$name.log"; continue; fi
  switches "$pid" > "$T/$name.1"
  total=0; line=""
  while IFS=: read -r tid n; do
    n0=$(awk -F: -v t="$tid" '$1 == t { print $2 }' "$T/$name.0")
    d=$(( n - ${n0:-0} ))
    total=$(( total + d ))
    tag=""; [ "$tid" = "$pid" ] && tag="(main)"
    line="$line $tid$tag=$(awk -v d=$d -v s=$SECS 'BEGIN { printf "%.1f", d / s }')/s"
  done < "$T/$name.1"
  printf 'ufo-%-5s threads:%s  all threads %.1f/s  broker connections: %s command, %s bus\n' "$name" "$line" \
    "$(awk -v d=$total -v s=$SECS 'BEGIN { print d / s }')" "$(conns "$pid" "$T/cmd.peers")" \
    "$(conns "$pid" "$T/bus.peers")"
done
