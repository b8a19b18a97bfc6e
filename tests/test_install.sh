#!/usr/bin/env bash
# `cmake --install` under a prefix gives a working installation, even after the prefix is
# moved: binaries find their default configuration, prompts and helper scripts next to
# themselves, and a program builds against the installed headers and library via pkg-config.
set -euo pipefail
BUILD=${UFO_BUILD_DIR:?}
T=$(mktemp -d /tmp/ufo-install.XXXXXX)
trap 'rm -rf "$T"' EXIT
cmake --install "$BUILD" --prefix "$T/prefix" >/dev/null
mv "$T/prefix" "$T/moved"
P=$T/moved
for f in bin/ufo bin/ufo-broker bin/ufo-host bin/ufo-app bin/ufo-eval lib/libufo.a \
         include/ufobus/ufo.h share/ufobus/config/ufo.json share/ufobus/config/prices.json \
         share/ufobus/prompts/host_agent/system.tmpl share/ufobus/scripts/desktop-session \
         lib/pkgconfig/ufobus.pc; do
  [ -e "$P/$f" ] || { echo "not installed: $f"; exit 1; }
done
if ls "$P/include/ufobus" | grep -q '_int\.h$\|prelude'; then echo "private headers installed"; exit 1; fi
# the moved installation finds its own configuration, from any working directory
cd "$T"
# (it logs which file it loaded at start-up: waited for, bounded, then the broker is stopped)
UFO_LOG_LEVEL=debug timeout 30 "$P/bin/ufo-broker" --data-dir "$T/data" --cmd "ipc://$T/c" --bus "ipc://$T/b" \
  >"$T/broker.log" 2>&1 &
pid=$!
for _ in $(seq 1 200); do grep -q "config: loaded" "$T/broker.log" && break; sleep 0.05; done
kill -TERM $pid 2>/dev/null || true; wait $pid || true
grep -q "config: loaded $P/share/ufobus/config/ufo.json" "$T/broker.log" \
  || { echo "the installed broker did not load its own configuration:"; cat "$T/broker.log"; exit 1; }
"$P/bin/ufo" keygen probe --role monitor --dir "$T/keys" >/dev/null
[ "$(stat -c %a "$T/keys/probe.cert_secret")" = 600 ]
# a program built against the installed library (pkg-config reads the installed ufobus.pc;
# its prefix is the one given at install time, so point it at the moved tree)
cat > "$T/probe.c" <<'C'
#include <ufo.h>
int main (void) {
    ufo_error_t err;
    ufo_value_t *v = ufo_json_parse_str ("{\"ok\": [1, 2.5, \"\\u00e9\"]}", &err);
    char *text = ufo_json_dump (v, UFO_JSON_PY, NULL);
    int rc = strcmp (text, "{\"ok\": [1, 2.5, \"\\u00e9\"]}") != 0;
    free (text);
    ufo_value_destroy (&v);
    return rc;
}
C
flags=$(PKG_CONFIG_PATH="$P/lib/pkgconfig" pkg-config --define-variable=prefix="$P" --cflags --libs ufobus)
cc -std=c11 -D_GNU_SOURCE -include string.h -include stdlib.h -o "$T/probe" "$T/probe.c" $flags
"$T/probe"
echo "1 passed, 0 failed"
