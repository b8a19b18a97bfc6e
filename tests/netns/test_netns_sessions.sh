#!/usr/bin/env bash
# test_netns_sessions.sh - the issue-9 topology with real sessions, over network namespaces and
# CURVE: the broker and the evaluator (ufo-eval) in one namespace; two devices, each in its own
# namespace with its own virtual desktop (scripts/desktop-session), scripted LLM server on its
# loopback, ufo-host and a ufo-app worker for mousepad, and its client (`ufo run`); a monitor
# namespace with `ufo monitor` and an intruder. Both sessions run at once; device a's link is
# cut for 5 s while its session is in flight, then restored.
# Checked: both sessions FINISH; every step the client saw acknowledged is there once, in order
# (session steps 0..N-1, the same N as the session's response.log); device b's session ends
# within its bound; `ufo monitor` (monitor certificate) saw both sessions; an unknown
# certificate in the monitor namespace saw no traffic; then an interactive session on a third
# device (dev-c): the HostAgent's question reaches the client, whose answer (task.input, role
# client, its own task) reaches the HostAgent; namespaces, desktops and processes gone.
# NETNS_LIVENESS (default 10) sets the dispatch liveness (heartbeat 1 s x N): with 10 the
# workers outlive the 5 s cut and their in-flight work resumes where it was; with 3 they are
# declared lost during the cut, their tasks requeued to the same device, and the next attempt
# resumes from the board (ctest runs both). The checks hold for either path.
# Needs root and iproute2: skipped otherwise.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=${UFO_SOURCE_DIR:-$(cd "$HERE/../.." && pwd)}
BUILD=${UFO_BUILD_DIR:?UFO_BUILD_DIR}
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
  echo "SKIP: needs root and iproute2 (ip netns) to create network namespaces"
  exit 77
fi
. "$HERE/harness.sh"
LIVENESS=${NETNS_LIVENESS:-10}
case "$LIVENESS" in (*[!0-9]*|''|0) echo "NETNS_LIVENESS must be a positive number"; exit 2;; esac
TMP=$(mktemp -d /tmp/ufo-netns-s-XXXXXX)
FAILS=0
DESKS=()
cleanup() {
  local d
  netns_teardown
  for d in "${DESKS[@]}"; do "$SRC/scripts/desktop-session" stop "$d" >/dev/null 2>&1 || true; done
  [ "${KEEP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
check() { if eval "$1"; then echo "ok: $2"; else echo "FAIL: $2"; FAILS=$((FAILS + 1)); fi; }
now() { date +%s.%N; }

UFO=$BUILD/cli/ufo
PROBE=$BUILD/tests/ufo-bb-probe
LLM=$BUILD/tests/ufo-llm-server
for b in "$UFO" "$PROBE" "$LLM" "$BUILD/blackboard_broker/ufo-broker" "$BUILD/host_agent/ufo-host" \
         "$BUILD/app_agent/ufo-app" "$BUILD/eval_agent/ufo-eval"; do
  [ -x "$b" ] || { echo "FAIL: $b is not built"; exit 1; }
done
KEYS=$TMP/keys
for c in broker:broker eval:agent agent-a:agent agent-b:agent agent-c:agent client-a:client client-b:client \
         client-c:client mon:monitor \
         stranger:monitor; do
  "$UFO" keygen "${c%%:*}" --role "${c##*:}" --dir "$KEYS" >/dev/null || exit 1
done
mkdir -p "$KEYS/allowed"
for c in eval agent-a agent-b agent-c client-a client-b client-c mon; do cp "$KEYS/$c.cert" "$KEYS/allowed/"; done

# the scripted model: one_round.json (launch mousepad, one subtask typing a note, finish,
# evaluation yes) with 1 s per reply, so the sessions are in flight when the link is cut
python3 - "$SRC/tests/data/host_agent/one_round.json" "$TMP/script.json" <<'EOF' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
for e in d["entries"]:
    if e.get("match", {}).get("agent") in ("HostAgent", "AppAgent"):
        e["latency_ms"] = 1000
        # an attempt resumed after a requeue asks once more; the model then says FINISH again
        if e.get("content_json", {}).get("Status") == "FINISH":
            e["times"] = 0
json.dump(d, open(sys.argv[2], "w"))
EOF

netns_setup broker dev-a dev-b mon dev-c || { echo "FAIL: namespace setup"; exit 1; }
BIP=$(netns_ip broker)
CMD=tcp://$BIP:5570
BUS=tcp://$BIP:5571
export UFO_SECURITY__CURVE=true UFO_SECURITY__CERT_DIR=$KEYS UFO_BROKER__BUS_ENDPOINT=$BUS

# Starts a scripted LLM server in namespace $1 (script $2, default the session script).
llm_start() {
  netns_spawn "$1" "$TMP/llm-$1.out" "$LLM" --script "${2:-$TMP/script.json}" --port-file "$TMP/llm-$1.port" \
    --log "$TMP/llm-$1.jsonl" --max-seconds 400
  local i
  for i in $(seq 1 200); do [ -s "$TMP/llm-$1.port" ] && break; sleep 0.05; done
}
# Writes the configuration of namespace $1 (LLM port $2) to $TMP/cfg-$1.json.
config() {
  cat >"$TMP/cfg-$1.json" <<EOF
{"HOST_AGENT": {"API_TYPE": "openai_compatible", "API_BASE": "http://127.0.0.1:$2/v1",
   "API_KEY": "sk-netns-0123456789", "API_MODEL": "scripted", "VISUAL_MODE": false},
 "APP_AGENT": {"API_TYPE": "openai_compatible", "API_BASE": "http://127.0.0.1:$2/v1",
   "API_KEY": "sk-netns-0123456789", "API_MODEL": "scripted", "VISUAL_MODE": false},
 "SLEEP_TIME": 0, "MAX_RETRY": 1, "TIMEOUT": 30,
 "log": {"dir": "$TMP/logs-$1"},
 "dispatch": {"heartbeat_ivl_ms": 1000, "heartbeat_liveness": $LIVENESS},
 "desktop": {"action_timeout_ms": 8000, "launchers": {"mousepad": ["mousepad"]}}}
EOF
}

# broker and evaluator
llm_start broker
config broker "$(cat "$TMP/llm-broker.port")"
# the operator's monitor checks the steps published on the bus: it sees task bodies in clear
# (security.monitor_sees_bodies; without it they are sealed to their submitter, PROTOCOL.md 3.6)
netns_spawn broker "$TMP/broker.log" env UFO_SECURITY__MONITOR_SEES_BODIES=true \
  "$BUILD/blackboard_broker/ufo-broker" --config "$TMP/cfg-broker.json" \
  --data-dir "$TMP/data" --cmd "$CMD" --bus "$BUS" --stats-ms 2000
netns_spawn broker "$TMP/eval.log" env UFO_SECURITY__CERT="$KEYS/eval.cert_secret" \
  "$BUILD/eval_agent/ufo-eval" --config "$TMP/cfg-broker.json" --broker "$CMD"

# the devices: a desktop, a model, a HostAgent and an AppAgent each; device c (a HostAgent
# whose model asks the user a question) is for the interactive session at the end
for d in a b c; do
  ns=dev-$d
  netns_exec "$ns" "$SRC/scripts/desktop-session" start --owner $$ >"$TMP/desk-$d.env" 2>"$TMP/desk-$d.err" \
    || { echo "FAIL: desktop of device $d"; cat "$TMP/desk-$d.err"; exit 1; }
  DESKS+=("$(. "$TMP/desk-$d.env"; echo "$UFO_DESKTOP_SESSION")")
  if [ $d = c ]; then llm_start "$ns" "$SRC/tests/data/host_agent/pending.json"; else llm_start "$ns"; fi
  config "$ns" "$(cat "$TMP/llm-$ns.port")"
  ( . "$TMP/desk-$d.env"
    export UFO_SECURITY__CERT=$KEYS/agent-$d.cert_secret
    netns_spawn "$ns" "$TMP/host-$d.log" "$BUILD/host_agent/ufo-host" --device "$d" --config "$TMP/cfg-$ns.json" \
      --broker "$CMD"
    echo "$NETNS_LAST_PID" >"$TMP/host-$d.pid"
    [ $d = c ] && exit 0
    netns_spawn "$ns" "$TMP/app-$d.log" "$BUILD/app_agent/ufo-app" --app mousepad --device "$d" \
      --config "$TMP/cfg-$ns.json" --broker "$CMD"
    echo "$NETNS_LAST_PID" >"$TMP/app-$d.pid" )
  NETNS_PIDS+=("$(cat "$TMP/host-$d.pid")")
  [ $d = c ] || NETNS_PIDS+=("$(cat "$TMP/app-$d.pid")")
done

# the monitor namespace: ufo monitor with its certificate, and an unknown certificate
netns_spawn mon "$TMP/monitor.out" env UFO_SECURITY__CERT="$KEYS/mon.cert_secret" "$UFO" monitor --broker "$CMD" --json

# every worker registered (ufo status from the monitor namespace)
ready=0
for i in $(seq 1 120); do
  if netns_exec mon env UFO_SECURITY__CERT="$KEYS/mon.cert_secret" "$UFO" status --broker "$CMD" --json \
       >"$TMP/status.json" 2>/dev/null \
     && python3 - "$TMP/status.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
text = json.dumps(s)
sys.exit(0 if all(x in text for x in ('"host"', '"app:mousepad"', '"eval"')) and len(s.get("workers", [])) >= 6 else 1)
EOF
  then ready=1; break; fi
  sleep 0.5
done
check "[ $ready = 1 ]" "three HostAgents, two AppAgents and the evaluator registered across namespaces"

# both sessions at once
run_session() {   # device
  netns_spawn "dev-$1" "$TMP/run-$1.err" env UFO_CONFIG="$TMP/cfg-dev-$1.json" \
    UFO_SECURITY__CERT="$KEYS/client-$1.cert_secret" \
    sh -c "exec '$UFO' run 'Write a note in Mousepad' --device $1 --task netns-$1 --yes --json --broker '$CMD' >'$TMP/run-$1.out'"
}
# the intruder listens to everything for the first 40 s of the sessions
netns_spawn mon "$TMP/stranger.out" "$PROBE" --cmd "$CMD" --bus "$BUS" --cert-name stranger listen 40000
STRANGER=$NETNS_LAST_PID
T0=$(now)
run_session a; RUN_A=$NETNS_LAST_PID
run_session b; RUN_B=$NETNS_LAST_PID
# the cut comes while device a's session is in flight: once its client has shown a step
for i in $(seq 1 600); do grep -q '"kind": *"progress"' "$TMP/run-a.out" 2>/dev/null && break; sleep 0.1; done
check "grep -q '\"kind\": *\"progress\"' '$TMP/run-a.out' && kill -0 $RUN_A 2>/dev/null" \
  "device a's session was in flight when its link was cut"
netns_link dev-a down
echo "device a's link is down"
sleep 5     # the outage itself (the thing under test): past a liveness of 3 heartbeats of 1 s, within one of 10
netns_link dev-a up
echo "device a's link is up again"
wait_run() {   # pid -> exit status (124 on timeout)
  local i
  for i in $(seq 1 2400); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$1" 2>/dev/null; then kill -KILL "$1"; wait "$1" 2>/dev/null; return 124; fi
  wait "$1"
}
wait_run "$RUN_B"; RC_B=$?; TB=$(now)
wait_run "$RUN_A"; RC_A=$?; TA=$(now)
DUR_A=$(awk "BEGIN {printf \"%.1f\", $TA - $T0}"); DUR_B=$(awk "BEGIN {printf \"%.1f\", $TB - $T0}")
echo "session a: exit $RC_A after ${DUR_A} s; session b: exit $RC_B after ${DUR_B} s"

# Checks one session ($1: device; $2: "full" when every step must have reached the bus and
# the client): the client's result is FINISH; the session's response.log holds steps 0..N-1,
# each once and in order (a resumed session repeats none); the steps published on the bus as
# acknowledged progress (seen by `ufo monitor`) and those the client showed are in order,
# never repeated, and among them. Progress of an attempt whose worker was declared lost is
# discarded by the broker (docs/PROTOCOL.md 3.3-3.5); the next attempt resumes from the board.
check_session() {
  python3 - "$TMP/run-$1.out" "$TMP/monitor.out" "${2:-}" <<'EOF'
import json, os, sys
def lines(path):
    out = []
    for l in open(path):
        try:
            out.append(json.loads(l))
        except ValueError:
            pass
    return out
events = lines(sys.argv[1])
mon = lines(sys.argv[2])
result = [e["body"] for e in events if e.get("kind") == "result"]
task = ([e["task"] for e in events if e.get("kind") == "accepted"] or [None])[0]
seen = [e["body"]["record"]["Step"] for e in events
        if e.get("kind") == "progress" and e.get("body", {}).get("kind") == "step"]
published = [e["body"]["body"]["record"]["Step"] for e in mon
             if e.get("type") == "task.progress" and e.get("body", {}).get("task") == task
             and (e["body"].get("body") or {}).get("kind") == "step"]
requeued = sum(1 for e in mon if e.get("type") in ("task.requeued", "task.discarded")
               and e.get("body", {}).get("task") == task)
if not result:
    print("no result"); sys.exit(1)
r = result[-1]
log = os.path.join(r.get("logdir", ""), "response.log")
steps = [json.loads(l).get("Step") for l in open(log) if l.strip()] if os.path.exists(log) else []
n = len(steps)
print("status %s; response.log steps %s; published %s; client showed %s; requeued/discarded %d"
      % (r.get("status"), steps, published, seen, requeued))
ordered = lambda xs: xs == sorted(set(xs)) and set(xs) <= set(range(n))
ok = r.get("status") == "FINISH" and n >= 3 and steps == list(range(n)) and ordered(published) and ordered(seen)
if sys.argv[3] == "full":
    ok = ok and published == steps and seen == steps and requeued == 0
sys.exit(0 if ok else 1)
EOF
}
check "[ $RC_A = 0 ] && check_session a" "device a's session finished across the cut (requeued or resumed): every step once and in order"
check "[ $RC_B = 0 ] && check_session b full" "device b's session finished untouched: every step once, in order, published and shown"
check "awk 'BEGIN {exit !($DUR_B < 90)}'" "device b's session stayed within its bound (${DUR_B} s < 90 s)"
check "grep -q 'netns-a' '$TMP/monitor.out' && grep -q 'netns-b' '$TMP/monitor.out'" \
  "ufo monitor (monitor certificate, own namespace) saw both sessions"
# deadlines cross hosts as time left, never as wall-clock instants (PROTOCOL.md 3.5, 4): the
# broker assigns the session at B1 with deadline_in_ms = its deadline D minus B1; the HostAgent
# gets it at H1 = B1 + d1 and times D - B1 from H1 on its monotonic clock; it hands a subtask to
# its socket at S with deadline_ms = the time left then (time in its outbox counts); the broker
# gets it at B2 = S + d2. So the subtask's deadline is the session's minus gap, where
#   gap = (S - H1) - d1 - d2,   hence   -(d1 + d2) <= gap <= B2 - B1.
# d1 and d2 are transit times (the cut link holds messages in TCP until it is back, plus TCP's
# retransmission back-off): measured, not guessed, from the same machine's wall clock: B1 (the
# task.assigned event's timestamp, made before the assignment), H1 (the HostAgent's "session
# ... started" log line, after it), S (its "task ... submitted" line, after the hand-over, or
# before it when the request waited in the outbox, where it counts) and B2 (submitted_us):
#   d1 <= H1log - B1   and   d2 <= B2 - Slog   (to the ms of the log stamps).
# TOL: ms rounding of the stamps and deadlines, and a monotonic clock slewed by NTP (at most
# 500 ppm of the session's minute or two).
check "python3 - '$TMP/monitor.out' '$TMP/host-a.log' '$TMP/host-b.log' <<'EOF'
import datetime, json, re, sys
TOL = 0.1
ev = []
for l in open(sys.argv[1]):
    try:
        ev.append(json.loads(l))
    except ValueError:
        pass
def stamp(line):
    m = re.match(r'(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})Z ', line)
    return datetime.datetime.strptime(m.group(1), '%Y-%m-%dT%H:%M:%S.%f').replace(
        tzinfo=datetime.timezone.utc).timestamp() if m else None
started, submitted = [], {}         # (time, session) of each session start; subtask id -> time
for path in sys.argv[2:]:
    for l in open(path, errors='replace'):
        t = stamp(l)
        m = re.search(r'host: session (\S+) \(task .*\) started', l)
        if t and m:
            started.append((t, m.group(1)))
        m = re.search(r'host: task (\S+) submitted to app:', l)
        if t and m:
            submitted[m.group(1)] = t
sub = [e['body'] for e in ev if e.get('type') == 'task.submitted']
assigned = [(e['timestamp_us'] / 1e6, e['body']) for e in ev if e.get('type') == 'task.assigned']
ok, n = True, 0
for s in [x for x in sub if x.get('service') == 'host']:
    for a in [x for x in sub if x.get('service') == 'app:mousepad' and x.get('session') == s.get('session')]:
        gap = (s['deadline_us'] - a['deadline_us']) / 1e6
        b2 = a['submitted_us'] / 1e6
        s_log = submitted.get(a['task'])
        h1 = max([t for t, sid in started if sid == s['session'] and s_log and t <= s_log] or [None])
        # log stamps are cut to the ms: the line came up to 1 ms after its stamp
        b1 = max([t for t, b in assigned if b.get('task') == s['task'] and h1 and t <= h1 + 0.001] or [None])
        if None in (s_log, h1, b1):
            print('session %s: subtask %s: no trace of its submission or its session assignment' % (s['session'], a['task']))
            ok = False
            continue
        d1, d2 = h1 + 0.001 - b1, b2 - s_log
        lo, hi = -(d1 + d2) - TOL, b2 - b1 + TOL
        n += 1
        print('session %s: subtask deadline %.3f s before the session deadline (bounds %.3f .. %.3f: '
              'd1 <= %.3f s, d2 <= %.3f s, B2 - B1 = %.3f s)' % (s['session'], gap, lo, hi, d1, d2, b2 - b1))
        ok = ok and s['deadline_us'] > 0 and lo <= gap <= hi
sys.exit(0 if ok and n > 0 else 1)
EOF" "subtask deadlines follow the session's (time left, timed on the device's monotonic clock; bounds from the measured transit times)"
for i in $(seq 1 500); do kill -0 "$STRANGER" 2>/dev/null || break; sleep 0.1; done
check "grep -qx 'messages 0' '$TMP/stranger.out'" "an unknown certificate in the monitor namespace saw no traffic (40 s)"

# an interactive session over CURVE: the HostAgent asks, the client (role client) answers
# through task.input on its own session task
echo "my answer is 42" >"$TMP/answer-c.txt"
netns_spawn dev-c "$TMP/run-c.err" env UFO_CONFIG="$TMP/cfg-dev-c.json" UFO_SECURITY__CERT="$KEYS/client-c.cert_secret" \
  sh -c "exec '$UFO' run 'Write a note' --device c --task netns-c --interactive --json --broker '$CMD' \
         <'$TMP/answer-c.txt' >'$TMP/run-c.out'"
wait_run "$NETNS_LAST_PID"; RC_C=$?
check "[ $RC_C = 0 ] && python3 - '$TMP/run-c.out' <<'EOF'
import json, os, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip().startswith('{')]
r = [e['body'] for e in ev if e.get('kind') == 'result'][-1]
asked = any(e.get('body', {}).get('kind') == 'question' for e in ev if e.get('kind') == 'progress')
first = json.loads(open(os.path.join(r['logdir'], 'response.log')).readline())
print('status %s, asked %s, answers %s' % (r['status'], asked, first.get('Answers')))
sys.exit(0 if r['status'] == 'FINISH' and asked and first.get('Answers') == ['my answer is 42'] else 1)
EOF" "an interactive session on device c: the question reached the client, its answer the HostAgent"

# A batch of device-less sessions (`ufo batch` submits them without a device): each starts on
# a device and must stay there (PROTOCOL.md 4). Device c's HostAgent stops first, so the two
# sessions start on a and b. Once device a's session has shown a step, its HostAgent is
# killed; a HostAgent of another device ("d", on b's desktop) comes up idle at once; device a's
# HostAgent is restarted after 10 s. Checked: every assignment of that session and of its
# subtasks is on device a (none on d or b), it was delivered again (attempt 2) and finished
# (its evaluation, device-independent, may run anywhere).
# fresh models (the first sessions used their scripts up), HostAgents and AppAgents on a and b
for p in host-a host-b host-c app-a app-b; do kill -TERM "$(cat "$TMP/$p.pid")" 2>/dev/null; done
for p in host-a host-b host-c app-a app-b; do
  for i in $(seq 1 100); do kill -0 "$(cat "$TMP/$p.pid")" 2>/dev/null || break; sleep 0.1; done
done
# Starts ufo-host (and ufo-app unless $3 is "host") for device $1 in namespace $2 with the
# current configuration of namespace $2; pid files $TMP/<name>-$1.pid.
start_device() {
  ( . "$TMP/desk-${2#dev-}.env"
    export UFO_SECURITY__CERT=$KEYS/agent-${2#dev-}.cert_secret
    netns_spawn "$2" "$TMP/host2-$1.log" "$BUILD/host_agent/ufo-host" --device "$1" --config "$TMP/cfg-$2.json" \
      --broker "$CMD"
    echo "$NETNS_LAST_PID" >"$TMP/host2-$1.pid"
    [ "${3:-}" = host ] && exit 0
    netns_spawn "$2" "$TMP/app2-$1.log" "$BUILD/app_agent/ufo-app" --app mousepad --device "$1" \
      --config "$TMP/cfg-$2.json" --broker "$CMD"
    echo "$NETNS_LAST_PID" >"$TMP/app2-$1.pid" )
  NETNS_PIDS+=("$(cat "$TMP/host2-$1.pid")")
  [ "${3:-}" = host ] || NETNS_PIDS+=("$(cat "$TMP/app2-$1.pid")")
}
# the HostAgent killed mid-session may have had its next reply already: the attempt that
# resumes asks again (one more "launch" and "assign" reply each, matched only after the
# originals and after the FINISH reply to "ended the subtask")
python3 - "$TMP/script.json" "$TMP/script2.json" <<'EOF' || exit 1
import copy, json, sys
d = json.load(open(sys.argv[1]))
launch, assign = copy.deepcopy(d["entries"][0]), copy.deepcopy(d["entries"][1])
launch["match"]["not_contains"] = "(mousepad)"
d["entries"] += [launch, assign]
json.dump(d, open(sys.argv[2], "w"))
EOF
for d in a b; do
  ns=dev-$d
  netns_spawn "$ns" "$TMP/llm2-$ns.out" "$LLM" --script "$TMP/script2.json" --port-file "$TMP/llm2-$ns.port" \
    --log "$TMP/llm2-$ns.jsonl" --max-seconds 400
  for i in $(seq 1 200); do [ -s "$TMP/llm2-$ns.port" ] && break; sleep 0.05; done
  config "$ns" "$(cat "$TMP/llm2-$ns.port")"
  start_device $d $ns
done
workers() {   # the HostAgents and AppAgents registered (ufo status): "<hosts> <apps>"
  netns_exec mon env UFO_SECURITY__CERT="$KEYS/mon.cert_secret" "$UFO" status --broker "$CMD" --json 2>/dev/null \
    | python3 -c 'import json, sys
w = json.load(sys.stdin).get("workers", [])
print(sum(x.get("service") == "host" for x in w), sum(x.get("service") == "app:mousepad" for x in w))' 2>/dev/null
}
for i in $(seq 1 100); do [ "$(workers)" = "2 2" ] && break; sleep 0.2; done
mkdir -p "$TMP/batch"
for i in 1 2; do echo "{\"task\": \"netns-batch-$i\", \"request\": \"Write a note in Mousepad\"}" >"$TMP/batch/$i.json"; done
netns_spawn dev-b "$TMP/batch.err" env UFO_CONFIG="$TMP/cfg-dev-b.json" UFO_SECURITY__CERT="$KEYS/client-b.cert_secret" \
  sh -c "exec '$UFO' batch '$TMP/batch' --yes --broker '$CMD' >'$TMP/batch.out'"
BATCH=$NETNS_LAST_PID
# the batch's session task on device a, once it has published a step: its id on stdout
on_a() {
  python3 - "$TMP/monitor.out" <<'EOF'
import json, sys
ev = []
for l in open(sys.argv[1]):
    try:
        ev.append(json.loads(l))
    except ValueError:
        pass
batch = {e['body']['task'] for e in ev if e.get('type') == 'task.submitted' and e['body'].get('service') == 'host'
         and e['body'].get('submitter', '').startswith('ufo-batch')}
on_a = {e['body']['task'] for e in ev if e.get('type') == 'task.assigned' and e['body'].get('task') in batch
        and e['body'].get('device') == 'a'}
stepped = [e['body']['task'] for e in ev if e.get('type') == 'task.progress' and e['body'].get('task') in on_a
           and (e['body'].get('body') or {}).get('kind') == 'step']
if stepped:
    print(stepped[0])
EOF
}
SESSION_A=""
for i in $(seq 1 600); do SESSION_A=$(on_a); [ -n "$SESSION_A" ] && break; sleep 0.1; done
check "[ -n '$SESSION_A' ]" "a batch session started on device a and showed a step"
kill -KILL "$(cat "$TMP/host2-a.pid")" 2>/dev/null
echo "device a's HostAgent killed mid-session ($SESSION_A)"
start_device d dev-b host
sleep 10
mv "$TMP/host2-a.log" "$TMP/host2-a-killed.log"
start_device a dev-a host
echo "device a's HostAgent restarted after 10 s"
wait_run "$BATCH"; RC_BATCH=$?
check "[ $RC_BATCH = 0 ] && python3 - '$TMP/monitor.out' '$SESSION_A' <<'EOF'
import json, sys
ev = []
for l in open(sys.argv[1]):
    try:
        ev.append(json.loads(l))
    except ValueError:
        pass
task = sys.argv[2]
session = [e['body'].get('session') for e in ev if e.get('type') == 'task.submitted' and e['body'].get('task') == task][0]
mine = {e['body']['task'] for e in ev if e.get('type') == 'task.submitted' and e['body'].get('session') == session
        and (e['body'].get('service') == 'host' or e['body'].get('service', '').startswith('app:'))}
assigned = [(e['body']['task'] == task, e['body'].get('attempt'), e['body'].get('device'), e['body'].get('worker_name'))
            for e in ev if e.get('type') == 'task.assigned' and e['body'].get('task') in mine]
done = [e['body'] for e in ev if e.get('type') == 'task.done' and e['body'].get('task') == task]
status = (done[-1].get('result') or {}).get('status') if done else None
print('session %s: assignments (session task?, attempt, device, worker) %s; result %s' % (session, assigned, status))
ok = assigned and all(d == 'a' for _, _, d, _ in assigned) and any(s and a >= 2 for s, a, _, _ in assigned)
sys.exit(0 if ok and status == 'FINISH' else 1)
EOF" "device a's batch session waited for device a (10 s), was resumed there and finished; nothing of it ran on b or d"

NAMES=("${NETNS_NAMES[@]}")
cleanup_dirs=("${DESKS[@]}")
netns_teardown
for d in "${cleanup_dirs[@]}"; do "$SRC/scripts/desktop-session" stop "$d" >/dev/null 2>&1; done
left=0
for n in "${NAMES[@]}"; do ip netns list | grep -q "^$(netns_ns "$n")\b" && left=1; done
for d in "${cleanup_dirs[@]}"; do [ -e "$d" ] && left=1; done
check "[ $left = 0 ]" "namespaces and desktops removed"
if [ $FAILS != 0 ]; then
  echo "$FAILS check(s) failed"
  for f in broker.log host-a.log app-a.log host-b.log app-b.log eval.log run-a.err run-b.err batch.err batch.out \
           host2-a-killed.log host2-a.log host2-b.log host2-d.log app2-a.log; do
    echo "--- $f"; tail -15 "$TMP/$f" 2>/dev/null
  done
  exit 1
fi
echo "all checks passed"
