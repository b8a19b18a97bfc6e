#!/usr/bin/env bash
# harness.sh - network namespaces for the multi-host tests (sourced, not run).
#
#   netns_setup NAMES...     one namespace per name (the first is the hub), each joined to a
#                            bridge in the hub by a veth pair; addresses 10.213.<net>.1 (hub)
#                            and 10.213.<net>.<10+i> for the others, inside the namespaces only
#   netns_ip NAME            the address of a namespace
#   netns_exec NAME CMD...   runs CMD inside a namespace
#   netns_spawn NAME LOG CMD...  starts CMD in the background there (output appended to LOG);
#                            its pid is recorded (netns_teardown stops it) and left in
#                            NETNS_LAST_PID (call it directly, not in $(...))
#   netns_link NAME up|down  brings a namespace's link (the hub's end of its veth) up or down
#   netns_teardown           stops every spawned process, deletes every namespace; safe twice
#
# Nothing is created in the caller's own network namespace: the veth pairs are created in the
# hub and moved straight into the other namespaces. Names carry the caller's pid, so several
# runs can coexist. Needs root and iproute2.
NETNS_PREFIX="ufo$$"
NETNS_NET=$(( $$ % 250 + 1 ))
NETNS_NAMES=()
NETNS_PIDS=()
NETNS_LAST_PID=

netns_ns() { echo "$NETNS_PREFIX-$1"; }

netns_ip() {
  local i
  for i in "${!NETNS_NAMES[@]}"; do
    if [ "${NETNS_NAMES[$i]}" = "$1" ]; then
      if [ "$i" = 0 ]; then echo "10.213.$NETNS_NET.1"; else echo "10.213.$NETNS_NET.$((10 + i))"; fi
      return 0
    fi
  done
  return 1
}

netns_setup() {
  [ "$(id -u)" = 0 ] || { echo "netns_setup: needs root" >&2; return 1; }
  command -v ip >/dev/null || { echo "netns_setup: iproute2 (ip) is missing" >&2; return 1; }
  local name hub i ns
  NETNS_NAMES=("$@")
  hub=$(netns_ns "$1")
  for name in "$@"; do
    ip netns add "$(netns_ns "$name")" || return 1
    ip -n "$(netns_ns "$name")" link set lo up || return 1
  done
  ip -n "$hub" link add br0 type bridge || return 1
  ip -n "$hub" addr add "10.213.$NETNS_NET.1/24" dev br0 || return 1
  ip -n "$hub" link set br0 up || return 1
  for i in $(seq 1 $(( $# - 1 ))); do
    name=${NETNS_NAMES[$i]}
    ns=$(netns_ns "$name")
    ip -n "$hub" link add "v-$name" type veth peer name eth0 netns "$ns" || return 1
    ip -n "$hub" link set "v-$name" master br0 up || return 1
    ip -n "$ns" addr add "$(netns_ip "$name")/24" dev eth0 || return 1
    ip -n "$ns" link set eth0 up || return 1
  done
  return 0
}

netns_exec() {
  local ns
  ns=$(netns_ns "$1"); shift
  ip netns exec "$ns" "$@"
}

netns_spawn() {
  local ns log pid
  ns=$(netns_ns "$1"); log=$2; shift 2
  ip netns exec "$ns" "$@" >>"$log" 2>&1 &
  pid=$!
  NETNS_PIDS+=("$pid")
  NETNS_LAST_PID=$pid
}

netns_link() {
  ip -n "$(netns_ns "${NETNS_NAMES[0]}")" link set "v-$1" "$2"
}

netns_teardown() {
  local pid i name pids=()
  # only positive pids: `kill 0` would signal the caller's own process group
  for pid in "${NETNS_PIDS[@]}"; do [[ "$pid" =~ ^[1-9][0-9]*$ ]] && pids+=("$pid"); done
  NETNS_PIDS=("${pids[@]}")
  for pid in "${NETNS_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for i in $(seq 1 50); do
    local alive=0
    for pid in "${NETNS_PIDS[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && break
    sleep 0.1
  done
  for pid in "${NETNS_PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  NETNS_PIDS=()
  for name in "${NETNS_NAMES[@]}"; do
    # anything still running inside (a child of a spawned process) goes with its namespace
    for pid in $(ip netns pids "$(netns_ns "$name")" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
    ip netns del "$(netns_ns "$name")" 2>/dev/null || true
  done
  NETNS_NAMES=()
}
