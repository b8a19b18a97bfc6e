#!/usr/bin/python3
"""Baseline for bench/step_bench: how the OSWorld harness observes a Linux desktop at each
step, done on one window: its accessibility tree walked with pyatspi into XML (per node the
role as the tag, the name, every state, the object attributes, extents on screen when
visible and showing, the whole text, image / selection flags, the value with its bounds,
each action's description and key binding; children up to depth 50 and 1024 per node), and
a PNG screenshot of the window (Pillow's ImageGrab, as pyautogui uses on Linux). The XML is
built with the standard library's ElementTree (OSWorld uses lxml, which is not installed here;
the calls to AT-SPI, which dominate, are the same).

usage: osworld_observe.py PID TITLE RUNS
  -> one JSON line {"tree_ms": [...], "shot_ms": [...], "total_ms": [...], "nodes": N,
                    "xml_bytes": B, "png_bytes": P}
The application and window are found once before the runs; interpreter start-up is not
timed."""
import io
import json
import sys
import time
import xml.etree.ElementTree as ET

import pyatspi
from PIL import ImageGrab

from pyatspi_walk import find_window  # the same look-up as desktop_bench's baseline

MAX_DEPTH = 50
MAX_WIDTH = 1024
NS_ST = "https://accessibility.ubuntu.example.org/ns/state"
NS_ATTR = "https://accessibility.ubuntu.example.org/ns/attributes"
NS_CP = "https://accessibility.ubuntu.example.org/ns/component"
NS_VAL = "https://accessibility.ubuntu.example.org/ns/value"
NS_ACT = "https://accessibility.ubuntu.example.org/ns/action"


def node_xml(node, depth, counter):
    counter[0] += 1
    attrs = {"name": node.name or ""}
    for st in node.getState().getStates():
        name = pyatspi.StateType._enum_lookup[st].split("_", 1)[1].lower()
        if name:
            attrs["{%s}%s" % (NS_ST, name)] = "true"
    try:
        for key, value in node.get_attributes().items():
            attrs["{%s}%s" % (NS_ATTR, key)] = value
    except Exception:
        pass
    if attrs.get("{%s}visible" % NS_ST) == "true" and attrs.get("{%s}showing" % NS_ST) == "true":
        try:
            comp = node.queryComponent()
        except NotImplementedError:
            pass
        else:
            ext = comp.getExtents(pyatspi.XY_SCREEN)
            attrs["{%s}screencoord" % NS_CP] = str((ext.x, ext.y))
            attrs["{%s}size" % NS_CP] = str((ext.width, ext.height))
    text = ""
    try:
        t = node.queryText()
        text = t.getText(0, t.characterCount).replace("\ufffc", "").replace("\ufffd", "")
    except NotImplementedError:
        pass
    try:
        node.queryImage()
        attrs["image"] = "true"
    except NotImplementedError:
        pass
    try:
        node.querySelection()
        attrs["selection"] = "true"
    except NotImplementedError:
        pass
    try:
        v = node.queryValue()
        for key, fn in (("value", lambda: v.currentValue), ("min", lambda: v.minimumValue),
                        ("max", lambda: v.maximumValue), ("step", lambda: v.minimumIncrement)):
            try:
                attrs["{%s}%s" % (NS_VAL, key)] = str(fn())
            except Exception:
                pass
    except NotImplementedError:
        pass
    try:
        a = node.queryAction()
        for i in range(a.nActions):
            name = a.getName(i).replace(" ", "-")
            attrs["{%s}%s_desc" % (NS_ACT, name)] = a.getDescription(i)
            attrs["{%s}%s_kb" % (NS_ACT, name)] = a.getKeyBinding(i)
    except Exception:       # NotImplementedError; GTK4 may count actions it then refuses
        pass
    role = (node.getRoleName().strip() or "unknown").replace(" ", "-")
    el = ET.Element(role, attrs)
    if text:
        el.text = text
    if depth < MAX_DEPTH:
        for i, child in enumerate(node):
            if i == MAX_WIDTH:
                break
            if child is not None:
                el.append(node_xml(child, depth + 1, counter))
    return el


def main():
    pid, title, runs = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    win = find_window(pid, title)
    if win is None:
        print(json.dumps({"error": "window not found"}))
        return 1
    tree_ms, shot_ms, total_ms = [], [], []
    nodes = xml_bytes = png_bytes = 0
    for _ in range(runs):
        t0 = time.perf_counter()
        counter = [0]
        xml = ET.tostring(node_xml(win, 0, counter), encoding="unicode")
        t1 = time.perf_counter()
        ext = win.queryComponent().getExtents(pyatspi.XY_SCREEN)
        img = ImageGrab.grab(bbox=(ext.x, ext.y, ext.x + ext.width, ext.y + ext.height))
        buf = io.BytesIO()
        img.save(buf, format="PNG")
        t2 = time.perf_counter()
        tree_ms.append((t1 - t0) * 1000.0)
        shot_ms.append((t2 - t1) * 1000.0)
        total_ms.append((t2 - t0) * 1000.0)
        nodes, xml_bytes, png_bytes = counter[0], len(xml.encode()), buf.tell()
    print(json.dumps({"tree_ms": tree_ms, "shot_ms": shot_ms, "total_ms": total_ms,
                      "nodes": nodes, "xml_bytes": xml_bytes, "png_bytes": png_bytes}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
