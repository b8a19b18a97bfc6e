#!/usr/bin/env bash
# Validates docker-compose.yml with Debian's docker-compose (no container engine runs here)
# and checks the topology it describes: the services of issue 9, scalable AppAgent workers
# sharing their device's desktop, commands that exist in the build, entry scripts present.
set -euo pipefail
SRC=${UFO_SOURCE_DIR:?}
BUILD=${UFO_BUILD_DIR:?}
cd "$SRC"
command -v docker-compose >/dev/null || { echo "docker-compose missing (scripts/bootstrap)"; exit 1; }
docker-compose -f docker-compose.yml config -q
docker-compose -f docker-compose.yml config > "$BUILD/compose-resolved.yml"
/usr/bin/python3 - "$BUILD/compose-resolved.yml" "$BUILD" <<'PY'
import os, sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
build = sys.argv[2]
services = doc["services"]
failures = []
def need(cond, what):
    if not cond:
        failures.append(what)
for name in ["broker", "evaluator", "monitor", "device-a", "app-a", "device-b", "app-b"]:
    need(name in services, f"service {name} missing")
# scalable workers: no fixed names or host ports, and they share their device's network
# namespace (abstract D-Bus sockets) and desktop volumes
for dev in ["a", "b"]:
    app = services.get(f"app-{dev}", {})
    need("container_name" not in app, f"app-{dev} has a container_name (cannot --scale)")
    need("ports" not in app, f"app-{dev} publishes ports (cannot --scale)")
    need(app.get("network_mode") == f"service:device-{dev}", f"app-{dev} does not share device-{dev}'s network")
    vols = {v["target"] if isinstance(v, dict) else v.split(":")[1] for v in app.get("volumes", [])}
    need({"/run/ufo", "/tmp/.X11-unix"} <= vols, f"app-{dev} does not mount the desktop volumes")
    env = services.get(f"device-{dev}", {}).get("environment", {})
    need(env.get("UFO_DEVICE") == dev, f"device-{dev} has UFO_DEVICE={env.get('UFO_DEVICE')}")
# every service reaches the broker by name, on the same endpoints
for name, svc in services.items():
    if name == "broker":
        continue
    env = svc.get("environment", {})
    need(env.get("UFO_BROKER__CMD_ENDPOINT") == "tcp://broker:5570", f"{name}: wrong command endpoint")
# the commands exist: built binaries or our entry scripts
known = {"ufo-broker": "blackboard_broker/ufo-broker", "ufo-eval": "eval_agent/ufo-eval",
         "ufo": "cli/ufo", "device-entrypoint": None, "app-entrypoint": None}
for name, svc in services.items():
    cmd = svc.get("command") or []
    exe = cmd[0] if cmd else None
    need(exe in known, f"{name}: unknown command {exe}")
    if exe in known and known[exe]:
        need(os.access(os.path.join(build, known[exe]), os.X_OK), f"{name}: {known[exe]} not built")
if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"{len(services)} services checked")
PY
for f in docker/Dockerfile docker/device-entrypoint docker/app-entrypoint scripts/desktop-session scripts/bootstrap; do
  [ -e "$f" ] || { echo "missing $f"; exit 1; }
done
grep -q "ufo-host" docker/device-entrypoint && grep -q "ufo-app" docker/device-entrypoint
echo "1 passed, 0 failed"
