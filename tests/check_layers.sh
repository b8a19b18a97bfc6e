#!/usr/bin/env bash
# test_layers: no layer of libufo includes a header of a higher layer. The layers and what
# each may use are listed once, in common/LAYERS; a file's layer is its folder under common/.
# Every #include "..." of every source and header under common/<layer>/ must name a header of
# the same layer or of a layer it may use (directly or through those), or be an "allow:" line
# of LAYERS. A module directly in common/ (other than the umbrella ufo.h, ufo_modules.h) or in
# a folder that is no layer is an error too, and so is a source anywhere in the tree that
# includes the umbrella ufo.h (sources include the headers they use).
#   check_layers.sh [SOURCE_DIR]   check the tree (default: this checkout)
#   check_layers.sh --self-test    also prove that a planted violation is found
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)

check () {
  local root=$1 common=$1/common
  declare -A uses=() layer_of=() allowed=()
  local layers=() line name deps bad=0
  while IFS= read -r line; do
    [[ $line =~ ^([a-z]+):[[:space:]]*(.*)$ ]] || continue
    name=${BASH_REMATCH[1]} deps=${BASH_REMATCH[2]}
    if [ "$name" = allow ]; then allowed["$deps"]=1; continue; fi
    for d in $deps; do
      [ -n "${uses[$d]+x}" ] || { echo "LAYERS: $name uses $d, which is not a lower layer"; bad=1; }
    done
    # what a layer may use: itself, its lower layers and everything they may use
    local all=" $name "
    for d in $deps; do all+="${uses[$d]:-} "; done
    uses[$name]=$all
    layers+=("$name")
    [ -d "$common/$name" ] || { echo "LAYERS: no folder common/$name"; bad=1; }
  done < "$common/LAYERS"
  local f h l
  for f in "$common"/*.[ch]; do
    case ${f##*/} in ufo.h|ufo_modules.h) ;; *) echo "common/${f##*/}: not in a layer's folder"; bad=1 ;; esac
  done
  for d in "$common"/*/; do
    d=${d%/}; d=${d##*/}
    [ -n "${uses[$d]+x}" ] || { echo "common/$d/: a folder that LAYERS does not list"; bad=1; }
  done
  for l in "${layers[@]}"; do
    for f in "$common/$l"/*.[ch]; do
      [ -e "$f" ] || continue
      layer_of[${f##*/}]=$l
    done
  done
  for l in "${layers[@]}"; do
    for f in "$common/$l"/*.[ch]; do
      [ -e "$f" ] || continue
      while IFS= read -r h; do
        local target=${layer_of[$h]:-}
        if [ -z "$target" ]; then
          # the umbrella headers and the broker's modules are above every layer
          if [ -e "$common/$h" ] || [ -e "$root/blackboard_broker/$h" ]; then target=top; else continue; fi
        fi
        case "${uses[$l]}" in *" $target "*) continue ;; esac
        [ -n "${allowed["$l/${f##*/} -> $h"]+x}" ] && continue
        echo "common/$l/${f##*/} includes $h (layer $target), which layer $l may not use"
        bad=1
      done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
    done
  done
  # sources include the headers they use: nothing in the tree includes the umbrella ufo.h
  # (it is for programs built against the installed library)
  while IFS= read -r f; do
    echo "$f includes the umbrella ufo.h or ufo_modules.h; include the headers it uses"
    bad=1
  done < <(cd "$root" && grep -rlE --include='*.c' --include='*.h' '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]ufo(_modules)?\.h[>"]' \
             --exclude-dir=build\* . | grep -v '^\./common/ufo\.h$' || true)
  return $bad
}

if [ "${1:-}" = --self-test ]; then
  check "$HERE" || exit 1
  T=$(mktemp -d /tmp/ufo-layers.XXXXXX)
  trap 'rm -rf "$T"' EXIT
  mkdir -p "$T/src/blackboard_broker"
  cp -r "$HERE/common" "$T/src/"
  cp "$HERE"/blackboard_broker/*.h "$T/src/blackboard_broker/"
  # planted: the lowest layer includes a header of the highest one, and of the broker
  victim=$(ls "$T/src/common/core/"*.c | head -1)
  echo '#include "ufo_eval.h"' >> "$victim"
  if out=$(check "$T/src" 2>&1); then echo "a planted violation (core includes ufo_eval.h) passed"; exit 1; fi
  echo "$out" | grep -q "includes ufo_eval.h (layer eval)" || { echo "unexpected output: $out"; exit 1; }
  cp "$HERE/common/core/${victim##*/}" "$victim"
  echo '#include "ufo_wal.h"' >> "$T/src/common/model/ufo_item.c"
  if check "$T/src" >/dev/null 2>&1; then echo "a planted violation (model includes ufo_wal.h) passed"; exit 1; fi
  cp "$HERE/common/model/ufo_item.c" "$T/src/common/model/ufo_item.c"
  touch "$T/src/common/ufo_stray.c"
  if check "$T/src" >/dev/null 2>&1; then echo "a module directly in common/ passed"; exit 1; fi
  rm "$T/src/common/ufo_stray.c"
  echo '#include "ufo.h"' >> "$T/src/common/knowledge/ufo_kb.c"
  if check "$T/src" >/dev/null 2>&1; then echo "a source including the umbrella ufo.h passed"; exit 1; fi
  echo "4 planted violations found"
  exit 0
fi
check "${1:-$HERE}"
