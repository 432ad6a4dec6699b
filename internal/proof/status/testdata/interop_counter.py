#!/usr/bin/env python3
"""A Python agent joining the status package's locking protocol through the
repository's Python package (python/, import agentstate).

Usage: interop_counter.py PATH ITERATIONS MODE

MODE "lock" increments with agentstate.mutate: the whole protocol, recovery
of transactions included.
MODE "basic" is an agent written before transactions: the same steps
without the recovery of step 4 (lock, read, replace, unlock), as a
conforming client that never learns the extension; "basic-remove" removes
the document that way once (ITERATIONS unused).
MODE "nolock" does the same read-modify-write without the lock: the control
that shows what the lock is for. MODE "hold" takes the lock, prints
"inside" and blocks reading stdin until it is killed (ITERATIONS unused).

Each iteration adds 1 to "runs" and sets "py_extra", a field the Go Status
type does not know; every other member keeps its bytes. Talks to the Go
test over stdout: prints "ready", waits for one line on stdin, runs, prints
"result {json}".
"""

import json
import sys

from agentlib import unlocked_mutate
import agentstate
from agentstate import _files, _lock, _store, _txn

PY_EXTRA = {"lang": "python", "tags": ["a", "b"], "ratio": 0.5}


def increment(doc):
    doc["runs"] = doc.get("runs", 0) + 1
    doc["py_extra"] = PY_EXTRA


def locked_increment(path):
    agentstate.mutate(path, increment)


def basic_increment(path):
    _txn.recover = lambda *a: []  # a basic client: lock, read, replace, unlock
    agentstate.mutate(path, increment)


def unlocked_increment(path):
    unlocked_mutate(path, increment)  # the control


def basic_remove(path):
    key = _files.doc_key(path, "remove")
    h = _lock.lock_one(key, 0o644, _lock.Deadline(30), "remove", path)
    try:
        _store._remove_doc(key, "remove", path)
    finally:
        h.close()


def hold(path):
    with agentstate.locked(path):
        print("inside", flush=True)
        sys.stdin.read()  # until the parent kills us
    sys.exit("stdin closed: the parent should have killed this process")


def main():
    path, iterations, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if mode == "hold":
        hold(path)
    if mode == "basic-remove":
        basic_remove(path)
        return
    step = {"lock": locked_increment, "basic": basic_increment, "nolock": unlocked_increment}[mode]
    print("ready", flush=True)
    sys.stdin.readline()
    acked = 0
    for _ in range(iterations):
        step(path)
        acked += 1
    print("result " + json.dumps({"Acked": acked}), flush=True)


if __name__ == "__main__":
    main()
