#!/usr/bin/env python3
"""Writes seed inputs for fuzz_bb_request: valid broker requests in the target's framing
(byte 0 = frame count, 2-byte length before every frame but the last)."""
import os, struct

def mp(v):
    if v is None: return b'\xc0'
    if v is True: return b'\xc3'
    if v is False: return b'\xc2'
    if isinstance(v, int):
        if 0 <= v < 128: return bytes([v])
        return b'\xd3' + struct.pack('>q', v)
    if isinstance(v, str):
        b = v.encode()
        if len(b) < 32: return bytes([0xa0 | len(b)]) + b
        return b'\xd9' + bytes([len(b)]) + b
    if isinstance(v, list):
        return bytes([0x90 | len(v)]) + b''.join(mp(x) for x in v)
    if isinstance(v, dict):
        return bytes([0x80 | len(v)]) + b''.join(mp(k) + mp(x) for k, x in v.items())
    raise TypeError(v)

def env(t, body):
    return mp([1, t, "0123456789abcdef0123456789abcdef", "seed", "", 1700000000000000, body])

def frames(*fs):
    out = bytes([len(fs)])
    for f in fs[:-1]:
        out += struct.pack('>H', len(f)) + f
    return out + fs[-1]

blob = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
seeds = {
    "add": frames(env("bb.add", {"board": "s1", "memory": "questions", "items": [{"q": "a"}, "text"]})),
    "add1": frames(env("bb.add", {"board": "global", "memory": "screenshots",
                                  "item": {"image_path": "a.png", "blob": blob, "metadata": {"step": 1}}})),
    "snap": frames(env("bb.snapshot", {"board": "s1", "memory": "trajectories", "after": 7})),
    "clear": frames(env("bb.clear", {"board": "s1"})),
    "delete": frames(env("bb.delete", {"board": "s1"})),
    "list": frames(env("bb.list", {})),
    "put": frames(env("blob.put", {}), b"\x89PNG bytes"),
    "get": frames(env("blob.get", {"blob": blob})),
    "stats": frames(env("stats", None)),
    "ping": frames(env("ping", {})),
}
here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz_bb_request")
os.makedirs(here, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(here, name), "wb") as f:
        f.write(data)
