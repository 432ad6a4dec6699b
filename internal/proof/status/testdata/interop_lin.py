#!/usr/bin/env python3
"""A python client in the cross-process linearizability history.

Usage: interop_lin.py PATH OPS CLIENT SEED

Performs OPS random operations on the status document at PATH, following the
locking protocol of status/doc.go for every change (see interop_counter.py),
and reads without the lock. Each operation is stamped with
clock_gettime(CLOCK_MONOTONIC) before the call and after the return: the
same machine-wide clock the Go children use, so the Go test can merge the
histories. Talks over stdout: "ready", then waits for one line on stdin,
then prints one "op {json}" line per operation (the Go cpLinRecord layout)
and "end". Standard library only.
"""

import fcntl
import json
import os
import random
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from interop_counter import read_doc, replace  # noqa: E402

CYCLE = [("queued", "running"), ("running", "completed"), ("completed", "queued")]


def now():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def project(doc):
    return {"Runs": doc.get("runs", 0), "Note": doc.get("note", ""), "State": doc.get("status", "")}


def random_input(rng, client, i):
    r = rng.randrange(10)
    if r < 3:
        return {"Op": "inc"}
    if r < 5:
        return {"Op": "set", "Value": "py%d-%d" % (client, i)}
    if r < 7:
        frm, to = rng.choice(CYCLE)
        return {"Op": "transition", "From": frm, "To": to}
    return {"Op": "read"}


def mutate(path, op):
    lfd = os.open(path + ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(lfd, fcntl.LOCK_EX)
        doc = read_doc(path)
        if op["Op"] == "inc":
            doc["runs"] = doc.get("runs", 0) + 1
        elif op["Op"] == "set":
            doc["note"] = op["Value"]
        elif op["Op"] == "transition":
            if doc.get("status", "") != op["From"]:
                return {"Doc": {"Runs": 0, "Note": "", "State": doc.get("status", "")}, "Conflict": True}
            doc["status"] = op["To"]
        replace(path, doc)
        return {"Doc": project(doc)}
    finally:
        os.close(lfd)


def apply(path, op):
    try:
        if op["Op"] == "read":
            return {"Doc": project(read_doc(path))}
        return mutate(path, op)
    except Exception as e:  # reported, and illegal in the model
        return {"Err": "%s: %s" % (type(e).__name__, e)}


def main():
    path, ops, client, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    rng = random.Random(seed * 1000 + client)
    print("ready", flush=True)
    sys.stdin.readline()
    records = []
    for i in range(ops):
        op = random_input(rng, client, i)
        call = now()
        out = apply(path, op)
        ret = now()
        records.append({"Client": client, "In": op, "Out": out, "Call": call, "Return": ret})
    for r in records:
        print("op " + json.dumps(r))
    print("end", flush=True)


if __name__ == "__main__":
    main()
