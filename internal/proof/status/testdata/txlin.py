#!/usr/bin/env python3
"""A Python client in the linearizability history of two documents (see
linearizability_linux_test.go), through the repository's Python package
(python/, import agentstate).

Usage: txlin.py DIR OPS CLIENT SEED [MODE]

Performs OPS random operations on DIR/a.json and DIR/b.json (member "n"):
"tx" adds DA to a and DB to b in one agentstate.mutate_all (MODE "tx", the
default; MODE "two", the CONTROL, makes it two agentstate.mutate calls, a
then b); "a" and "b" add DA to one document with agentstate.mutate; "read"
reads both with agentstate.load_all. Each operation is stamped with
CLOCK_MONOTONIC before the call and after the return, the clock the Go
children use. Talks over stdout: "ready", then waits for one line on stdin,
then prints one "op {json}" line per operation (the Go txLinRecord layout)
and "done".
"""

import json
import os
import random
import sys
import time

import agentlib  # noqa: F401
import agentstate


def now():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def add(key, n):
    def fn(doc):
        doc["n"] = doc.get("n", 0) + n
    return fn


def do(a, b, mode, op):
    kind = op["Op"]
    if kind == "tx":
        if mode == "two":
            ca = agentstate.mutate(a, add("n", op["DA"]))
            cb = agentstate.mutate(b, add("n", op["DB"]))
            return {"A": ca["n"], "B": cb["n"]}
        da, db = agentstate.mutate_all([a, b], lambda ds: (add("n", op["DA"])(ds[0]), add("n", op["DB"])(ds[1])))
        return {"A": da["n"], "B": db["n"]}
    if kind in ("a", "b"):
        d = agentstate.mutate(a if kind == "a" else b, add("n", op["DA"]))
        return {"A": d["n"]}
    da, db = agentstate.load_all([a, b])
    return {"A": da.get("n", 0), "B": db.get("n", 0)}


def main():
    directory, ops, client, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    mode = sys.argv[5] if len(sys.argv) > 5 else "tx"
    a, b = os.path.join(directory, "a.json"), os.path.join(directory, "b.json")
    rng = random.Random(seed * 1000 + client)
    print("ready", flush=True)
    sys.stdin.readline()
    records = []
    for _ in range(ops):
        op = {"Op": rng.choice(["tx", "tx", "a", "b", "read"]), "DA": rng.randint(1, 5), "DB": rng.randint(1, 5)}
        call = now()
        try:
            out = do(a, b, mode, op)
        except Exception as e:  # reported, and illegal in the model
            out = {"Err": "%s: %s" % (type(e).__name__, e)}
        ret = now()
        records.append({"Client": client, "In": op, "Out": out, "Call": call, "Return": ret})
    for r in records:
        print("op " + json.dumps(r))
    print("done", flush=True)


if __name__ == "__main__":
    main()
