#!/usr/bin/python3
"""Baseline for bench/desktop_bench: a full walk of one application window with pyatspi,
reading per node the fields a ufobus control snapshot reads (role, name, states,
interfaces, extents in window coordinates, children) and, for nodes whose role is a
control type of CONTROL_LIST, the actions and a text/value excerpt.

usage: pyatspi_walk.py PID TITLE RUNS
  -> one JSON line {"times_ms": [...], "find_ms": F, "nodes": N}
times_ms: each walk; find_ms: finding the application and window (once, before the first
walk), as a ufobus first step also does. Interpreter start-up is not timed."""
import json
import sys
import time

import pyatspi

R = pyatspi
CONTROL_ROLES = {
    R.ROLE_PUSH_BUTTON, R.ROLE_TOGGLE_BUTTON, R.ROLE_ENTRY, R.ROLE_PASSWORD_TEXT, R.ROLE_TEXT,
    R.ROLE_PAGE_TAB, R.ROLE_DOCUMENT_FRAME, R.ROLE_DOCUMENT_TEXT, R.ROLE_DOCUMENT_WEB,
    R.ROLE_LIST_ITEM, R.ROLE_MENU_ITEM, R.ROLE_CHECK_MENU_ITEM, R.ROLE_RADIO_MENU_ITEM,
    R.ROLE_MENU, R.ROLE_SCROLL_BAR, R.ROLE_TREE_ITEM, R.ROLE_LINK, R.ROLE_COMBO_BOX,
    R.ROLE_RADIO_BUTTON, R.ROLE_SPIN_BUTTON, R.ROLE_SLIDER, R.ROLE_CHECK_BOX, R.ROLE_GROUPING,
    R.ROLE_LABEL, R.ROLE_STATIC, R.ROLE_CAPTION, R.ROLE_HEADING, R.ROLE_TABLE_CELL,
}


def walk(acc, out):
    role = acc.getRole()
    name = acc.name
    states = acc.getState().getStates()
    ifaces = pyatspi.listInterfaces(acc)
    ext = None
    if "Component" in ifaces:
        ext = acc.queryComponent().getExtents(pyatspi.WINDOW_COORDS)
    node = {"role": int(role), "name": name, "states": len(states),
            "ext": (ext.x, ext.y, ext.width, ext.height) if ext else None}
    if role in CONTROL_ROLES:
        if "Action" in ifaces:
            a = acc.queryAction()
            node["actions"] = [a.getName(i) for i in range(a.nActions)]
        if "Text" in ifaces:
            node["text"] = acc.queryText().getText(0, 121)
        elif "Value" in ifaces:
            node["text"] = str(acc.queryValue().currentValue)
    out.append(node)
    for i in range(acc.childCount):
        child = acc.getChildAtIndex(i)
        if child is not None:
            walk(child, out)


def find_window(pid, title):
    desktop = pyatspi.Registry.getDesktop(0)
    for app in desktop:
        if app is None or app.get_process_id() != pid:
            continue
        frames = [w for w in app if w is not None]
        for w in frames:
            if w.name == title:
                return w
        if len(frames) == 1:
            return frames[0]
    return None


def main():
    pid, title, runs = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    t0 = time.perf_counter()
    win = find_window(pid, title)
    find_ms = (time.perf_counter() - t0) * 1000.0
    if win is None:
        print(json.dumps({"error": "window not found"}))
        return 1
    times, nodes = [], 0
    for _ in range(runs):
        out = []
        t0 = time.perf_counter()
        walk(win, out)
        times.append((time.perf_counter() - t0) * 1000.0)
        nodes = len(out)
    print(json.dumps({"times_ms": times, "find_ms": find_ms, "nodes": nodes}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
