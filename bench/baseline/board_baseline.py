#!/usr/bin/python3
"""Baseline for bench/board_bench: the original UFO blackboard's algorithms, restated.

This is a faithful re-statement, in our own words, of how the original Python UFO keeps its
blackboard (ufo/agents/memory/memory.py and blackboard.py): a MemoryItem is a dataclass
whose fields are set one by one with setattr() and remembered in a class-level list of
attribute names; a Memory is a list of items; to_dict() / to_json() / the prompt are rebuilt
from the items at every call with json.dumps(); loading goes through json.loads() and
from_list_of_dicts(). Nothing is cached, exactly as in the original.

Usage: board_baseline.py DATADIR SIZES REPS   (SIZES like 1000,10000)
Reads the files board_bench wrote into DATADIR and prints one JSON object on stdout:
{"<op>": {"<size>": seconds_per_call, ...}, ...}; "add" is seconds per item.
"""
import json
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


@dataclass
class MemoryItem:
    """One record; attributes are added dynamically."""

    _memory_attributes = []     # shared by all items, as in the original

    def to_dict(self) -> Dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k in self._memory_attributes}

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    def filter(self, keys: List[str] = []) -> Dict[str, Any]:
        return {k: v for k, v in self.to_dict().items() if k in keys}

    def set_value(self, key: str, value: Any) -> None:
        setattr(self, key, value)
        if key not in self._memory_attributes:
            self._memory_attributes.append(key)

    def add_values_from_dict(self, values: Dict[str, Any]) -> None:
        for key, value in values.items():
            self.set_value(key, value)

    def get_value(self, key: str) -> Optional[Any]:
        return getattr(self, key, None)


@dataclass
class Memory:
    _content: List[MemoryItem] = field(default_factory=list)

    def add_memory_item(self, item: MemoryItem) -> None:
        self._content.append(item)

    def delete_memory_item(self, step: int) -> None:
        self._content = [it for it in self._content if getattr(it, "step", None) != step]

    def filter_memory_from_steps(self, steps: List[int]) -> List[Dict[str, Any]]:
        return [it.to_dict() for it in self._content if getattr(it, "step", None) in steps]

    def filter_memory_from_keys(self, keys: List[str]) -> List[Dict[str, Any]]:
        return [it.filter(keys) for it in self._content]

    def get_latest_item(self) -> Optional[MemoryItem]:
        return self._content[-1] if self._content else None

    def to_json(self) -> str:
        return json.dumps([it.to_dict() for it in self._content if it is not None])

    def to_list_of_dicts(self) -> List[Dict[str, Any]]:
        return [it.to_dict() for it in self._content]

    def from_list_of_dicts(self, data: List[Dict[str, Any]]) -> None:
        self._content = []
        for d in data:
            item = MemoryItem()
            item.add_values_from_dict(d)
            self._content.append(item)

    def clear(self) -> None:
        self._content = []

    @property
    def length(self) -> int:
        return len(self._content)

    @property
    def list_content(self) -> List[Dict[str, Any]]:
        return [it.to_dict() for it in self._content]

    def is_empty(self) -> bool:
        return self.length == 0


class Blackboard:
    def __init__(self) -> None:
        self.questions = Memory()
        self.requests = Memory()
        self.trajectories = Memory()
        self.screenshots = Memory()

    def add_data(self, data, memory: Memory) -> None:
        if isinstance(data, dict):
            item = MemoryItem()
            item.add_values_from_dict(data)
            memory.add_memory_item(item)
        elif isinstance(data, MemoryItem):
            memory.add_memory_item(data)
        elif isinstance(data, str):
            item = MemoryItem()
            item.set_value("text", data)
            memory.add_memory_item(item)

    def add_questions(self, q) -> None:
        self.add_data(q, self.questions)

    def add_trajectories(self, t) -> None:
        self.add_data(t, self.trajectories)

    def blackboard_to_dict(self) -> Dict[str, List[Dict[str, Any]]]:
        return {
            "questions": self.questions.to_list_of_dicts(),
            "requests": self.requests.to_list_of_dicts(),
            "trajectories": self.trajectories.to_list_of_dicts(),
            "screenshots": self.screenshots.to_list_of_dicts(),
        }

    def blackboard_to_json(self) -> str:
        return json.dumps(self.blackboard_to_dict())

    def blackboard_from_dict(self, d: Dict[str, Any]) -> None:
        self.questions.from_list_of_dicts(d.get("questions", []))
        self.requests.from_list_of_dicts(d.get("requests", []))
        self.trajectories.from_list_of_dicts(d.get("trajectories", []))
        self.screenshots.from_list_of_dicts(d.get("screenshots", []))

    @staticmethod
    def texts_to_prompt(memory: Memory, prefix: str) -> List[Dict[str, str]]:
        return [{"type": "text", "text": f"{prefix}\n {json.dumps(memory.list_content)}"}]

    def screenshots_to_prompt(self) -> List[Dict[str, Any]]:
        parts = []
        for d in self.screenshots.list_content:
            parts.append({"type": "text", "text": json.dumps(d.get("metadata", ""))})
            parts.append({"type": "image_url", "image_url": {"url": d.get("image_str", "")}})
        return parts

    def blackboard_to_prompt(self) -> List[Dict[str, Any]]:
        head = [{"type": "text", "text": "[Blackboard:]"}]
        return (head
                + self.texts_to_prompt(self.questions, "[Questions & Answers:]")
                + self.texts_to_prompt(self.requests, "[Request History:]")
                + self.texts_to_prompt(self.trajectories,
                                       "[Step Trajectories Completed Previously:]")
                + self.screenshots_to_prompt())

    @staticmethod
    def read_json_file(path: str, last_k: int = -1) -> List[Any]:
        out = []
        if os.path.exists(path):
            with open(path, "r", encoding="utf-8") as f:
                lines = f.readlines()
            if last_k != -1:
                lines = lines[-last_k:]
            for line in lines:
                try:
                    out.append(json.loads(line.strip()))
                except json.JSONDecodeError:
                    print(f"Warning: Unable to parse line as JSON: {line}", file=sys.stderr)
        return out

    def load_questions(self, path: str, last_k: int = -1) -> None:
        for qa in self.read_json_file(path, last_k):
            self.add_questions(qa)

    def is_empty(self) -> bool:
        return all(m.is_empty() for m in (self.questions, self.requests,
                                          self.trajectories, self.screenshots))

    def clear(self) -> None:
        for m in (self.questions, self.requests, self.trajectories, self.screenshots):
            m.clear()


def read_items(path: str) -> List[Dict[str, Any]]:
    with open(path, "r", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def board_of(items) -> Blackboard:
    board = Blackboard()
    for d in items:
        board.add_trajectories(d)
    return board


def timed(fn, reps: int) -> float:
    """Best (minimum) seconds of fn() over reps runs, as board_bench reports its own side
    (the minimum is least disturbed by other load); results are dropped outside the timing."""
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        result = fn()
        t1 = time.perf_counter()
        del result
        times.append(t1 - t0)
    return min(times)


def main() -> None:
    datadir, sizes, reps = sys.argv[1], [int(s) for s in sys.argv[2].split(",")], int(sys.argv[3])
    res: Dict[str, Dict[str, float]] = {}

    def put(op: str, n: int, sec: float) -> None:
        res.setdefault(op, {})[str(n)] = sec

    for n in sizes:
        r = reps if n <= 1000 else max(3, reps // 2)
        items = read_items(os.path.join(datadir, f"items_{n}.jsonl"))

        adds = []
        for _ in range(r):
            board = Blackboard()
            t0 = time.perf_counter()
            for d in items:
                board.add_trajectories(d)
            adds.append((time.perf_counter() - t0) / n)
            del board
        put("add", n, min(adds))

        board = board_of(items)
        put("to_dict", n, timed(board.blackboard_to_dict, r))
        put("to_json", n, timed(board.blackboard_to_json, r))
        put("to_prompt", n, timed(board.blackboard_to_prompt, r))

        extra = items[0]
        def add_one_and_prompt():
            board.add_trajectories(extra)
            return board.blackboard_to_prompt()
        put("add1_prompt", n, timed(add_one_and_prompt, r))

        for name, fname in (("load_snapshot", f"snapshot_{n}.json"),
                            ("load_snapshot_compact", f"snapshot_compact_{n}.json")):
            with open(os.path.join(datadir, fname), "r", encoding="utf-8") as f:
                text = f.read()
            def load():
                b = Blackboard()
                b.blackboard_from_dict(json.loads(text))
                return b
            put(name, n, timed(load, r))

        for name, fname in (("load_questions", f"items_{n}.jsonl"),
                            ("load_questions_compact", f"items_compact_{n}.jsonl")):
            path = os.path.join(datadir, fname)
            def loadq():
                b = Blackboard()
                b.load_questions(path, -1)
                return b
            put(name, n, timed(loadq, r))

    json.dump(res, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
