#!/usr/bin/env bash
# `ufo knowledge index|search` as a user runs them: a configuration naming a private index,
# the installed help of gnome-calculator and zenity plus a folder of notes; a second index
# reads nothing; search finds the right page; bad usage exits 2; a file that is not an index
# is refused and left alone.
set -euo pipefail
UFO=${UFO_BUILD_DIR:?}/cli/ufo
T=$(mktemp -d /tmp/ufo-knowledge-cli.XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir "$T/notes"
printf '# Shortcuts\n\n## Clear\n\nPress Escape to clear the display.\n' > "$T/notes/shortcuts.md"
cat > "$T/ufo.json" <<JSON
{ "knowledge": { "index": "$T/data/knowledge.db", "folders": { "gnome-calculator": ["$T/notes"] } } }
JSON
fail () { echo "FAIL: $*"; exit 1; }

out=$("$UFO" knowledge index --app gnome-calculator --config "$T/ufo.json")
echo "$out"
echo "$out" | grep -Eq '^[0-9]+ documents: [0-9]+ indexed' || fail "no summary"
echo "$out" | grep -q ' 0 skipped' || fail "a real help page was skipped"
[ -f "$T/data/knowledge.db" ] || fail "index file not created"
"$UFO" knowledge index --app zenity --config "$T/ufo.json" >/dev/null
out=$("$UFO" knowledge index --app zenity --config "$T/ufo.json")
echo "$out" | grep -q ' 0 indexed' || fail "unchanged files indexed again: $out"

out=$("$UFO" knowledge search "add 15% tax to a price" --app gnome-calculator --top 3 --config "$T/ufo.json")
echo "$out"
echo "$out" | head -2 | grep -q 'percentage.page' || fail "percentage.page not first"
out=$("$UFO" knowledge search "clear the display" --app gnome-calculator --json --config "$T/ufo.json")
echo "$out" | grep -q '"title":"Shortcuts › Clear"' || fail "note not found: $out"
out=$("$UFO" knowledge search "zzzqqq" --config "$T/ufo.json")
[ "$out" = "no passage matches" ] || fail "expected no match: $out"

set +e
"$UFO" knowledge search --config "$T/ufo.json" >/dev/null 2>&1; rc1=$?
"$UFO" knowledge frobnicate >/dev/null 2>&1; rc2=$?
"$UFO" knowledge search x --top 0 >/dev/null 2>&1; rc3=$?
echo "not a database" > "$T/other.db"
"$UFO" knowledge search x --index "$T/other.db" >/dev/null 2>&1; rc4=$?
set -e
[ $rc1 = 2 ] && [ $rc2 = 2 ] && [ $rc3 = 2 ] || fail "bad usage exit codes: $rc1 $rc2 $rc3"
[ $rc4 = 1 ] || fail "a file that is not an index: exit $rc4"
[ "$(cat "$T/other.db")" = "not a database" ] || fail "the other file was changed"
echo PASS
