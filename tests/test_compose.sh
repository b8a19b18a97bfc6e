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
# keys: only the broker sees ./keys/allowed; every other service mounts exactly its own
# private certificate (read-only, named after the service, security.cert pointing at it)
# and the broker's public certificate, never the whole keys directory or another secret
keys = os.path.join(os.getcwd(), "keys")
def mounts(svc):
    out = []
    for v in svc.get("volumes", []):
        if isinstance(v, dict):
            out.append((v.get("source", ""), v.get("target", ""), bool(v.get("read_only"))))
        else:
            parts = v.split(":")
            out.append((parts[0], parts[1] if len(parts) > 1 else parts[0], len(parts) > 2 and "ro" in parts[2].split(",")))
    return out
def under_keys(src):
    src = os.path.normpath(src)
    return src == keys or src.startswith(keys + os.sep)
for name, svc in services.items():
    env = svc.get("environment", {})
    km = [(os.path.normpath(src), dst, ro) for src, dst, ro in mounts(svc) if under_keys(src)]
    need(all(ro for _, _, ro in km), f"{name}: a key mount is not read-only")
    secrets = [os.path.basename(src) for src, _, _ in km if src.endswith(".cert_secret")]
    if name == "broker":
        need(secrets == ["broker.cert_secret"], f"broker: private certificates mounted: {secrets}")
        need(any(src == os.path.join(keys, "allowed") for src, _, _ in km), "broker: ./keys/allowed not mounted")
        continue
    need(all(src != keys for src, _, _ in km), f"{name}: mounts the whole keys directory")
    need(all(src != os.path.join(keys, "allowed") for src, _, _ in km), f"{name}: mounts the allowed directory")
    need(secrets == [f"{name}.cert_secret"], f"{name}: private certificates mounted: {secrets} (want only its own)")
    need(sorted(os.path.basename(src) for src, _, _ in km) == sorted([f"{name}.cert_secret", "broker.cert"]),
         f"{name}: key mounts {[os.path.basename(s) for s, _, _ in km]} (want its own secret and broker.cert)")
    own = [dst for src, dst, _ in km if src.endswith(f"/{name}.cert_secret")]
    need(own and env.get("UFO_SECURITY__CERT") == own[0],
         f"{name}: UFO_SECURITY__CERT={env.get('UFO_SECURITY__CERT')} is not its mounted secret {own}")
    bc = [dst for src, dst, _ in km if src.endswith("/broker.cert")]
    need(bc and env.get("UFO_SECURITY__BROKER_CERT", env.get("UFO_SECURITY__CERT_DIR", "") + "/broker.cert") == bc[0],
         f"{name}: the broker's certificate is not where security.broker_cert looks")
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
