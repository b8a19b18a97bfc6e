#!/usr/bin/env bash
# test_ufo_up_curve.sh - test_ufo_up (ufo up, a restart, ufo batch on two devices, clean stop)
# with CURVE on: keys made by `ufo keygen` (broker, agent, client, monitor) in a temporary
# directory, every process taking them from UFO_SECURITY__* like a deployment would.
set -euo pipefail
BUILD=${UFO_BUILD_DIR:?UFO_BUILD_DIR}
KEYS=$(mktemp -d /tmp/ufo-up-curve-XXXXXX)
trap 'rm -rf "$KEYS"' EXIT
for c in broker:broker agent:agent client:client monitor:monitor; do
  "$BUILD/cli/ufo" keygen "${c%%:*}" --role "${c##*:}" --dir "$KEYS" >/dev/null
done
mkdir "$KEYS/allowed"
cp "$KEYS/agent.cert" "$KEYS/client.cert" "$KEYS/monitor.cert" "$KEYS/allowed/"
export UFO_SECURITY__CURVE=true UFO_SECURITY__CERT_DIR=$KEYS
"$BUILD/tests/test_ufo_up"
