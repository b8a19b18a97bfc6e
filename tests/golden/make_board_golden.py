#!/usr/bin/python3
"""Writes the golden files of test_board's prompt test.

board_input.json  - the board content: questions, requests, trajectories (added with
                    add_data in this order) and screenshots (added with add_image).
board_prompt.json - json.dumps() of the prompt content parts that the original UFO's
                    Blackboard.blackboard_to_prompt() produces for that board.

The blackboard here is a small re-statement, in our own words, of the original's
algorithm: items keep their fields in insertion order, a memory's prompt text is
json.dumps() of its list of dicts, images are base64 data URLs.
Run with /usr/bin/python3 from any directory; it writes next to itself.
"""
import base64
import json
import mimetypes
import os

HERE = os.path.dirname(os.path.abspath(__file__))

BOARD = {
    "questions": [
        {"question": "Which file should I open?", "answer": "report_\u00e9t\u00e9.docx"},
        "a bare string becomes {\"text\": ...}",
        {"question": "\u4e2d\u6587?", "answer": "\U0001F600 yes", "score": 0.1},
    ],
    "requests": [
        {"request_1": "Open Notepad and type \"hello\\world\"\n then save"},
        {"request_2": "tab\there, bell\u0007, del\u007f, nul\u0000 end"},
    ],
    "trajectories": [
        {"Step": 1, "Subtask": "open", "Action": {"Function": "click_input",
         "Args": {"button": "left", "double": False}}, "UserConfirm": None,
         "Cost": 0.0123, "Big": 9223372036854775807, "Neg": -9223372036854775808},
        {"Step": 2, "Subtask": "type", "Action": [1, 2.5, 1e16, 1.5e-07, -0.0, [], {}],
         "UserConfirm": True, "Nested": {"a": {"b": {"c": ["deep", {"d": None}]}}}},
    ],
    "screenshots": [
        {"path": "board_shot.png", "metadata": {"step": 1, "reason": "before typing \u2713"}},
        {"path": "board_shot.png", "metadata": "plain metadata"},
    ],
}


class Item:
    """A memory item: attributes set one by one, dumped in insertion order."""

    def __init__(self):
        self._keys = []

    def set_value(self, key, value):
        setattr(self, key, value)
        if key not in self._keys:
            self._keys.append(key)

    def to_dict(self):
        return {k: getattr(self, k) for k in self._keys}


def add_data(memory, data):
    item = Item()
    if isinstance(data, dict):
        for k, v in data.items():
            item.set_value(k, v)
    elif isinstance(data, str):
        item.set_value("text", data)
    else:
        return
    memory.append(item)


def image_url(path):
    mime = mimetypes.guess_type(os.path.basename(path))[0]
    with open(path, "rb") as f:
        encoded = base64.b64encode(f.read()).decode("ascii")
    if mime is None or not mime.startswith("image/"):
        mime = "image/png"
    return f"data:{mime};base64," + encoded


def to_prompt(questions, requests, trajectories, screenshots):
    def texts(memory, prefix):
        listed = [item.to_dict() for item in memory]
        return [{"type": "text", "text": f"{prefix}\n {json.dumps(listed)}"}]

    parts = [{"type": "text", "text": "[Blackboard:]"}]
    parts += texts(questions, "[Questions & Answers:]")
    parts += texts(requests, "[Request History:]")
    parts += texts(trajectories, "[Step Trajectories Completed Previously:]")
    for item in screenshots:
        d = item.to_dict()
        parts.append({"type": "text", "text": json.dumps(d.get("metadata", ""))})
        parts.append({"type": "image_url", "image_url": {"url": d.get("image_str", "")}})
    return parts


def main():
    questions, requests, trajectories, screenshots = [], [], [], []
    for q in BOARD["questions"]:
        add_data(questions, q)
    for r in BOARD["requests"]:
        add_data(requests, r)
    for t in BOARD["trajectories"]:
        add_data(trajectories, t)
    for s in BOARD["screenshots"]:
        path = os.path.join(HERE, s["path"])
        item = Item()
        item.set_value("metadata", s["metadata"])
        item.set_value("image_path", path)
        item.set_value("image_str", image_url(path))
        screenshots.append(item)
    prompt = to_prompt(questions, requests, trajectories, screenshots)
    with open(os.path.join(HERE, "board_input.json"), "w", encoding="ascii") as f:
        f.write(json.dumps(BOARD, indent=2) + "\n")
    with open(os.path.join(HERE, "board_prompt.json"), "w", encoding="ascii") as f:
        f.write(json.dumps(prompt) + "\n")


if __name__ == "__main__":
    main()
