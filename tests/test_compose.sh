#!/usr/bin/env bash
# Validates docker-compose.yml with Debian's docker-compose (no container engine runs here)
# and checks the topology it describes: the services of issue 9, scalable AppAgent workers
# sharing their device's desktop, commands that exist in the build, entry scripts present;
# and that it works as shipped (issue 20): every environment variable it sets is one the
# programs read, the model settings reach the agents only, ports on 127.0.0.1 unless opted
# in, logs in a bind-mounted ./logs, the keygen service (run here for real) makes every key
# a service mounts, devices offer the same default launchers as `ufo up`, and each device runs
# its desktop service (`ufo-app --desktop-service`).
set -euo pipefail
SRC=$(cd "${UFO_SOURCE_DIR:?}" && pwd)
BUILD=$(cd "${UFO_BUILD_DIR:?}" && pwd)
cd "$SRC"
command -v docker-compose >/dev/null || { echo "docker-compose missing (scripts/bootstrap)"; exit 1; }
docker-compose -f docker-compose.yml config -q
( unset UFO_API_BASE UFO_API_MODEL UFO_PUBLISH_ADDR
  docker-compose -f docker-compose.yml config > "$BUILD/compose-resolved.yml"
  # what a user passes from the shell, and the opt-in to publish the ports on every interface
  UFO_API_BASE=http://model.example/v1 UFO_API_MODEL=m-1 UFO_PUBLISH_ADDR=0.0.0.0 \
    docker-compose -f docker-compose.yml config > "$BUILD/compose-resolved-set.yml" )
"$BUILD/tests/test_config" --markdown > "$BUILD/compose-config-keys.md"
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
    if name in ("broker", "keygen"):
        continue
    env = svc.get("environment", {})
    need(env.get("UFO_BROKER__CMD_ENDPOINT") == "tcp://broker:5570", f"{name}: wrong command endpoint")
# the commands exist: built binaries or our entry scripts
known = {"ufo-broker": "blackboard_broker/ufo-broker", "ufo-eval": "eval_agent/ufo-eval",
         "ufo": "cli/ufo", "device-entrypoint": None, "app-entrypoint": None, "keygen-entrypoint": None}
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
    if name == "keygen":
        continue            # the one service that writes ./keys (checked below)
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

# --- issue 20: works as shipped ------------------------------------------------------------
import re, glob, json
src = os.getcwd()
# every environment variable set is read: a configuration key (UFO_<KEY>, "__" for "."), a
# UFO_ variable the configuration knows to leave alone (ufo_config_env_ignored: else every
# process warns about it), or a variable a program or entry script reads
cfg_keys = {m.group(1).lower() for m in re.finditer(r"^\| `([^`]+)` \|", open(os.path.join(build, "compose-config-keys.md")).read(), re.M)}
schema_c = open(os.path.join(src, "common/config/ufo_config_schema.c")).read()
ignored_block = schema_c[schema_c.index("s_env_ignored []"):]
ignored_block = ignored_block[:ignored_block.index("NULL")]
ignored = set(re.findall(r'"(UFO_[A-Z_]+)"', ignored_block))
c_sources = ""
for f in glob.glob(os.path.join(src, "*/*.c")):
    if "/tests/" not in f and "/build" not in f:
        c_sources += open(f, errors="replace").read()
scripts = "".join(open(os.path.join(src, f)).read() for f in
                  ["docker/device-entrypoint", "docker/app-entrypoint", "docker/keygen-entrypoint",
                   "docker/default-launchers", "scripts/desktop-session"])
def read_by_programs(var):
    if var.startswith("UFO_"):
        if var[4:].replace("__", ".").lower() in cfg_keys:
            return True
        return var in ignored
    return f'getenv ("{var}")' in c_sources or re.search(r"\$\{?" + var + r"\b", scripts) is not None
need(not read_by_programs("UFO_NO_SUCH_SETTING") and not read_by_programs("NO_SUCH_VARIABLE"),
     "the variable check accepts anything")
need(read_by_programs("UFO_HOST_AGENT__API_MODEL") and read_by_programs("OPENAI_API_KEY"),
     "the variable check refuses known variables")
for name, svc in services.items():
    for var in svc.get("environment", {}):
        need(read_by_programs(var), f"{name}: environment variable {var} is read by no program")
# the model settings: every agent gets them, nobody else gets a key
model_vars = ["UFO_API_TYPE", "UFO_API_BASE", "UFO_API_MODEL", "UFO_API_KEY", "UFO_REASONING_MODEL"]
for name in ["evaluator", "device-a", "app-a", "device-b", "app-b"]:
    env = services[name].get("environment", {})
    need(all(v in env for v in model_vars), f"{name}: model settings missing: {[v for v in model_vars if v not in env]}")
for name in ["broker", "monitor", "client", "keygen"]:
    env = services.get(name, {}).get("environment", {})
    need("UFO_API_KEY" not in env and "OPENAI_API_KEY" not in env, f"{name} gets the model's key")
doc_set = yaml.safe_load(open(os.path.join(build, "compose-resolved-set.yml")))["services"]
need(doc_set["app-a"]["environment"].get("UFO_API_BASE") == "http://model.example/v1"
     and doc_set["evaluator"]["environment"].get("UFO_API_MODEL") == "m-1", "UFO_API_* from the shell do not reach the agents")
# ports: loopback only unless UFO_PUBLISH_ADDR opts in
def port_ips(svc):
    out = []
    for p in svc.get("ports", []):
        out.append(p.get("host_ip", "") if isinstance(p, dict) else (p.split(":")[0] if p.count(":") == 2 else ""))
    return out
for name, svc in services.items():
    need(all(ip == "127.0.0.1" for ip in port_ips(svc)), f"{name}: port published beyond 127.0.0.1: {svc.get('ports')}")
need(port_ips(services["broker"]) and port_ips(doc_set["broker"]) == ["0.0.0.0", "0.0.0.0"],
     "UFO_PUBLISH_ADDR does not publish the broker's ports")
# logs: a bind-mounted ./logs wherever /logs is mounted, and the log root points there
logs = os.path.join(src, "logs")
for name, svc in services.items():
    for s_, d, _ in mounts(svc):
        if d == "/logs":
            need(os.path.normpath(s_) == logs, f"{name}: /logs is {s_}, not ./logs")
    env = svc.get("environment", {})
    if name in ["evaluator", "device-a", "app-a", "device-b", "app-b"]:
        need(env.get("UFO_LOG__DIR") == "/logs" and any(d == "/logs" for _, d, _ in mounts(svc)),
             f"{name}: session logs do not go to ./logs")
need("logs" not in (doc.get("volumes") or {}), "a named volume 'logs' is still declared")
# keygen: makes every key a service mounts, with the role its service needs
kg = services.get("keygen", {})
need(kg.get("command") == ["keygen-entrypoint"] and "tools" in kg.get("profiles", []), "keygen service missing or not one-shot")
pairs = dict(p.split(":") for p in kg.get("environment", {}).get("KEYGEN_SERVICES", "").split())
roles = {"broker": "broker", "monitor": "monitor", "client": "client"}
for name, svc in services.items():
    for s_, d, _ in mounts(svc):
        if under_keys(s_) and s_.endswith(".cert_secret"):
            owner = os.path.basename(s_)[:-len(".cert_secret")]
            need(pairs.get(owner) == roles.get(owner, "agent"), f"keygen does not make {owner}'s key (role {roles.get(owner, 'agent')})")
need(any(d == "/keys" and os.path.normpath(s_) == keys for s_, d, _ in mounts(kg)), "keygen does not write ./keys")
open(os.path.join(build, "compose-keygen.txt"), "w").write(" ".join(f"{k}:{v}" for k, v in pairs.items()))
# launchers: the devices' default is `ufo up`'s (and the doctor's) list
def c_list(path):
    text = open(os.path.join(src, path)).read()
    m = re.search(r'\{([^{}]*"mousepad"[^{}]*)\}', text)      # the list of known applications
    return re.findall(r'"([^"]+)"', m.group(1)) if m else None
sh = re.search(r"for app in ([^;]+);", open(os.path.join(src, "docker/default-launchers")).read())
need(sh and c_list("cli/ufo_cmd_up.c") == sh.group(1).split(), "docker/default-launchers differs from ufo up's list")
need(c_list("cli/ufo_cmd_doctor.c") == c_list("cli/ufo_cmd_up.c"), "ufo doctor's launcher list differs from ufo up's")
dev = open(os.path.join(src, "docker/device-entrypoint")).read()
need("default-launchers" in dev and "UFO_DESKTOP__LAUNCHERS)=" in dev, "device-entrypoint does not default and share the launchers")
dockerfile = open(os.path.join(src, "docker/Dockerfile")).read()
need("docker/default-launchers" in dockerfile and "docker/keygen-entrypoint" in dockerfile, "the image lacks the new scripts")
if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"{len(services)} services checked")
PY
# the keygen service's script, for real (as the image runs it, with this build's ufo)
K=$(mktemp -d /tmp/ufo-compose-keys-XXXXXX)
trap 'rm -rf "$K"' EXIT
mkdir -p "$K/logs"
run_keygen () { PATH="$BUILD/cli:$PATH" KEYGEN_DIR="$K/keys" KEYGEN_LOGS="$K/logs" KEYGEN_OWNER="$(id -u):$(id -g)" \
  KEYGEN_SERVICES="$(cat "$BUILD/compose-keygen.txt")" docker/keygen-entrypoint; }
run_keygen > "$K/out1"
for pair in $(cat "$BUILD/compose-keygen.txt"); do
  n=${pair%%:*} r=${pair#*:}
  [ -s "$K/keys/$n.cert" ] && [ -s "$K/keys/$n.cert_secret" ] || { echo "keygen: no key pair for $n"; exit 1; }
  [ "$(stat -c %a "$K/keys/$n.cert_secret")" = 600 ] || { echo "keygen: $n.cert_secret is not 0600"; exit 1; }
  grep -q "role *= *\"*$r" "$K/keys/$n.cert" || grep -q "$r" "$K/keys/$n.cert" || { echo "keygen: $n is not role $r"; exit 1; }
  if [ "$r" = broker ]; then [ ! -e "$K/keys/allowed/$n.cert" ] || { echo "keygen: the broker's cert in allowed"; exit 1; }
  else cmp -s "$K/keys/$n.cert" "$K/keys/allowed/$n.cert" || { echo "keygen: $n.cert not in allowed"; exit 1; }; fi
done
sum1=$(cat "$K"/keys/*.cert_secret | md5sum)
run_keygen > "$K/out2"           # again: keys kept, nothing overwritten
[ "$(cat "$K"/keys/*.cert_secret | md5sum)" = "$sum1" ] && grep -q "kept" "$K/out2" || { echo "keygen: not idempotent"; exit 1; }
# the devices' default launchers: what is installed among ufo up's list, as JSON
mkdir -p "$K/bin"; for a in mousepad xterm; do printf '#!/bin/sh\n' > "$K/bin/$a"; chmod +x "$K/bin/$a"; done
ln -s "$(command -v bash)" "$K/bin/bash"
L=$(PATH="$K/bin" docker/default-launchers)
/usr/bin/python3 -c 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(0 if d=={"mousepad":["mousepad"],"xterm":["xterm"]} else 1)' "$L" \
  || { echo "default-launchers printed $L"; exit 1; }
for f in docker/Dockerfile docker/device-entrypoint docker/app-entrypoint scripts/desktop-session scripts/bootstrap; do
  [ -e "$f" ] || { echo "missing $f"; exit 1; }
done
grep -q "ufo-host" docker/device-entrypoint && grep -q "ufo-app" docker/device-entrypoint
# every device runs its desktop service (window lists and screenshots for `ufo mcp-server`),
# with an option this build's ufo-app has
grep -q 'ufo-app --desktop-service --device "\$UFO_DEVICE"' docker/device-entrypoint \
  || { echo "device-entrypoint does not start the desktop service"; exit 1; }
"$BUILD/app_agent/ufo-app" --help | grep -q -- "--desktop-service" || { echo "ufo-app has no --desktop-service"; exit 1; }
echo "1 passed, 0 failed"
