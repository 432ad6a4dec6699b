#!/usr/bin/env python3
"""A Python client in the cross-process linearizability history, through the
repository's Python package (python/, import agentstate).

Usage: interop_lin.py PATH OPS CLIENT SEED [MODE]

Performs OPS random operations on the status document at PATH: changes with
agentstate.mutate (MODE "lock", the default) or, as the control, with the
same read-modify-write without the lock (MODE "bare"), and reads with
agentstate.load (no lock). Each operation is stamped with
clock_gettime(CLOCK_MONOTONIC) before the call and after the return: the
same machine-wide clock the Go children use, so the Go test can merge the
histories. Talks over stdout: "ready", then waits for one line on stdin,
then prints one "op {json}" line per operation (the Go cpLinRecord layout)
and "end".
"""

import json
import random
import sys
import time

from agentlib import unlocked_mutate
import agentstate

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


def change(op):
    def fn(doc):
        if op["Op"] == "inc":
            doc["runs"] = doc.get("runs", 0) + 1
        elif op["Op"] == "set":
            doc["note"] = op["Value"]
        elif op["Op"] == "transition":
            agentstate.transition(doc, op["To"], op["From"])
    return fn


def apply(path, op, mode):
    try:
        if op["Op"] == "read":
            return {"Doc": project(agentstate.load(path))}
        if mode == "bare":
            return {"Doc": project(unlocked_mutate(path, change(op)))}
        return {"Doc": project(agentstate.mutate(path, change(op)))}
    except agentstate.TransitionConflict as e:
        return {"Doc": {"Runs": 0, "Note": "", "State": e.current}, "Conflict": True}
    except Exception as e:  # reported, and illegal in the model
        return {"Err": "%s: %s" % (type(e).__name__, e)}


def main():
    path, ops, client, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    mode = sys.argv[5] if len(sys.argv) > 5 else "lock"
    rng = random.Random(seed * 1000 + client)
    print("ready", flush=True)
    sys.stdin.readline()
    records = []
    for i in range(ops):
        op = random_input(rng, client, i)
        call = now()
        out = apply(path, op, mode)
        ret = now()
        records.append({"Client": client, "In": op, "Out": out, "Call": call, "Return": ret})
    for r in records:
        print("op " + json.dumps(r))
    print("end", flush=True)


if __name__ == "__main__":
    main()
