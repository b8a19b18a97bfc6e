#!/usr/bin/env bash
# mcp_desktop_bench.sh - what an MCP client waits for when it asks `ufo mcp-server` for a
# device's windows or a screenshot: the device's own desktop agent through the broker
# (service "desktop": dispatch.state check, task, the device's `ufo-app --desktop-service`,
# PNG through the blob store) against the baseline of the same server reading its own $DISPLAY (the local fallback,
# what the tools did before devices could be asked), on the same virtual desktop and window.
#
#   bench/mcp_desktop_bench.sh [REPS]      (default 30; scripts/bench BUILD mcpdesktop)
#
# Prints the median and p95 of each tool call (request written -> reply read, one client, one
# call at a time) and the ratio remote / local.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${UFO_BUILD_DIR:-$ROOT/build}
REPS=${1:-30}
T=$(mktemp -d /tmp/ufo-mcpdesk-bench.XXXXXX)
PIDS=()
DESK=
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
  [ -n "$DESK" ] && "$ROOT/scripts/desktop-session" stop "$DESK" >/dev/null 2>&1
  rm -rf "$T"
}
trap cleanup EXIT
for b in cli/ufo blackboard_broker/ufo-broker app_agent/ufo-app; do
  [ -x "$BUILD/$b" ] || { echo "mcp_desktop_bench: $BUILD/$b is not built" >&2; exit 1; }
done
"$ROOT/scripts/desktop-session" start --owner $$ >"$T/desk.env" || exit 1
. "$T/desk.env"
DESK=$UFO_DESKTOP_SESSION
cat >"$T/cfg.json" <<EOF
{"APP_AGENT": {"API_TYPE": "openai_compatible", "API_BASE": "http://127.0.0.1:9/v1", "API_MODEL": "none"},
 "log": {"dir": "$T/logs", "level": "warn"}}
EOF
# broker A with the device's desktop agent; broker B with no worker at all (the local fallback)
for b in a b; do
  "$BUILD/blackboard_broker/ufo-broker" --config "$T/cfg.json" --data-dir "$T/data-$b" --cmd "ipc://$T/$b.cmd" \
    --bus "ipc://$T/$b.bus" >"$T/broker-$b.log" 2>&1 &
  PIDS+=($!)
done
echo "benchmark notes" >"$T/bench-notes.txt"
mousepad "$T/bench-notes.txt" >/dev/null 2>&1 &
PIDS+=($!)
"$BUILD/app_agent/ufo-app" --desktop-service --device bench --config "$T/cfg.json" --broker "ipc://$T/a.cmd" \
  >"$T/app.log" 2>&1 &
PIDS+=($!)
export UFO_CONFIG=$T/cfg.json UFO_RUN_DIR=$T/run
python3 - "$BUILD/cli/ufo" "ipc://$T/a.cmd" "ipc://$T/b.cmd" "$REPS" <<'EOF'
import json, subprocess, sys, time
ufo, remote_ep, local_ep, reps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

class Server:
    def __init__(self, endpoint):
        self.p = subprocess.Popen([ufo, "mcp-server", "--broker", endpoint], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, bufsize=1)
        self.n = 0
        self.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "bench", "version": "1"}})
    def call(self, method, params):
        self.n += 1
        t0 = time.perf_counter()
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params}) + "\n")
        self.p.stdin.flush()
        while True:
            msg = json.loads(self.p.stdout.readline())
            if msg.get("id") == self.n:
                return time.perf_counter() - t0, msg
    def tool(self, name, args):
        dt, msg = self.call("tools/call", {"name": name, "arguments": args})
        r = msg.get("result", {})
        if r.get("isError") or "error" in msg:
            raise SystemExit("%s %s failed: %s" % (name, args, json.dumps(msg)[:400]))
        return dt, r
    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=10)

remote, local = Server(remote_ep), Server(local_ep)
# wait (bounded) until the device's desktop agent answers and Mousepad's window is listed
xid = None
for _ in range(200):
    try:
        _, r = remote.tool("list_windows", {"device": "bench"})
        wins = [w for w in r["structuredContent"]["windows"] if "bench-notes" in w["title"]]
        if wins:
            xid = wins[0]["xid"]
            break
    except SystemExit:
        pass
    time.sleep(0.1)
if not xid:
    raise SystemExit("the desktop agent never listed Mousepad's window")
local.tool("list_windows", {})      # the local server opens its desktop on first use

def measure(server, name, args):
    times, size = [], 0
    for _ in range(reps):
        dt, r = server.tool(name, args)
        times.append(dt * 1000)
        img = [c for c in r.get("content", []) if c.get("type") == "image"]
        size = len(img[0]["data"]) * 3 // 4 if img else 0
    times.sort()
    return times[len(times) // 2], times[min(len(times) - 1, int(len(times) * 0.95))], size

rows = [("list_windows", {}, "windows"), ("screenshot", {"xid": xid}, "screenshot of the window"),
        ("screenshot", {}, "screenshot of the screen")]
print("%d calls each; times in ms, request written -> reply read (ufo mcp-server on stdio)" % reps)
print("%-26s %10s %10s %10s %10s %8s %10s" % ("tool", "local p50", "local p95", "remote p50", "remote p95", "ratio", "PNG bytes"))
for name, args, label in rows:
    l50, l95, _ = measure(local, name, args)
    r50, r95, size = measure(remote, name, dict(args, device="bench"))
    print("%-26s %10.1f %10.1f %10.1f %10.1f %7.2fx %10s" % (label, l50, l95, r50, r95, r50 / l50, size or "-"))
remote.close()
local.close()
EOF
