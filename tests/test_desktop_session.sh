#!/usr/bin/env bash
# test_desktop_session.sh - scripts/desktop-session: run, exit status, teardown, start/stop,
# two sessions side by side, stop twice, refusing a foreign directory, the owner watchdog.
# Every wait is bounded.
set -u
S="${UFO_SOURCE_DIR:?}/scripts/desktop-session"
failed=0
check () { if eval "$1"; then echo "ok   $1"; else echo "FAIL $1"; failed=1; fi; }
gone () { for _ in $(seq 1 200); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.05; done; return 1; }

# run: the command sees a display and a session bus; the session is removed afterwards
out=$("$S" run -- sh -c 'echo "$UFO_DESKTOP_SESSION"; test -S "/tmp/.X11-unix/X${DISPLAY#:}" &&
  dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.ListNames >/dev/null &&
  dbus-send --session --print-reply --dest=org.a11y.Bus /org/a11y/bus org.a11y.Bus.GetAddress >/dev/null &&
  test -d "$XDG_RUNTIME_DIR" && test -z "${NO_AT_BRIDGE:-}" &&
  test "${QT_ACCESSIBILITY:-}" = 1 && test "${QT_LINUX_ACCESSIBILITY_ALWAYS_ON:-}" = 1 &&
  test "${GNOME_ACCESSIBILITY:-}" = 1 && echo fine')
# start prints the Qt/Gecko accessibility variables for the caller's shell too
e0=$("$S" start)
qt=$(eval "$e0"; "$S" stop "$UFO_DESKTOP_SESSION"
     echo "$QT_ACCESSIBILITY$QT_LINUX_ACCESSIBILITY_ALWAYS_ON$GNOME_ACCESSIBILITY")
check '[ "$qt" = 111 ]'
check '[ "$(echo "$out" | tail -1)" = fine ]'
dir=$(echo "$out" | head -1)
check '[ -n "$dir" ] && [ ! -e "$dir" ]'
"$S" run -- sh -c 'exit 7'
check '[ $? -eq 7 ]'

# start / stop, two at once
e1=$("$S" start) && e2=$("$S" start)
d1=$(eval "$e1"; echo "$UFO_DESKTOP_SESSION") ; x1=$(eval "$e1"; echo "$DISPLAY")
d2=$(eval "$e2"; echo "$UFO_DESKTOP_SESSION") ; x2=$(eval "$e2"; echo "$DISPLAY")
check '[ -d "$d1" ] && [ -d "$d2" ] && [ "$x1" != "$x2" ]'
p1=$(cat "$d1/xvfb.pid")
check 'kill -0 "$p1"'
"$S" stop "$d1"
check '[ ! -e "$d1" ] && gone "$p1"'
check '"$S" stop "$d1"'                       # safe twice
check '! "$S" stop /tmp 2>/dev/null'          # not a session directory: refused
check '[ -d /tmp ]'
p2=$(cat "$d2/xvfb.pid")
"$S" stop "$d2"
check '[ ! -e "$d2" ] && gone "$p2"'

# --owner: the session goes away when its owner does
sleep 300 & owner=$!
e3=$("$S" start --owner "$owner")
d3=$(eval "$e3"; echo "$UFO_DESKTOP_SESSION")
p3=$(cat "$d3/xvfb.pid")
kill "$owner"; wait "$owner" 2>/dev/null
for _ in $(seq 1 200); do [ -e "$d3" ] || break; sleep 0.05; done
check '[ ! -e "$d3" ] && gone "$p3"'

# bad options
check '! "$S" start --size huge 2>/dev/null'
check '! "$S" frobnicate 2>/dev/null'
exit $failed
