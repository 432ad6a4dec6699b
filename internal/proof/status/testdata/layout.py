#!/usr/bin/env python3
"""Writes and reads documents with the repository's Python package
(python/, import agentstate) for the Go tests that compare its output with
the Go package's, byte for byte, and each reading the other's.

Usage: layout.py set
  reads lines "PATH<TAB>JSON-OBJECT" from stdin; for each, sets the
  object's members in the document at PATH with agentstate.mutate (the
  other members keep their bytes), and prints "ok" or "error <message>".
Usage: layout.py dumps
  the CONTROL: the same with json.dumps(doc, indent=2), the layout a Python
  program writes by default, instead of agentstate.
Usage: layout.py read PATH
  prints the document as agentstate.load returns it, as JSON.
Usage: layout.py check KIND
  reads lines "PATH"; for each, reads the document as a document of KIND
  ("status" or "json") and prints "ok" or "corrupt OFFSET".
Usage: layout.py times
  reads a JSON list of strings, prints the list of whether Go's time.Time
  reads each (agentstate's check of a status document's times).
"""

import json
import sys

import agentlib  # noqa: F401
import agentstate
from agentstate import _json


def number(s):
    # Go writes a float64 negative zero as "-0", which json.loads would
    # read as the int 0: read it as the float it was.
    return -0.0 if s == "-0" else int(s)


def main():
    if sys.argv[1] == "read":
        print(json.dumps(agentstate.load(sys.argv[2])), flush=True)
        return
    if sys.argv[1] == "times":
        print(json.dumps([_json.go_time_ok(t) for t in json.load(sys.stdin)]), flush=True)
        return
    if sys.argv[1] == "check":
        for line in sys.stdin:
            try:
                agentstate.load(line.rstrip("\n"), kind=sys.argv[2])
                print("ok", flush=True)
            except agentstate.CorruptError as e:
                print("corrupt %d" % e.offset, flush=True)
        return
    for line in sys.stdin:
        path, members = line.rstrip("\n").split("\t", 1)
        if sys.argv[1] == "dumps":
            with open(path, "w") as f:
                f.write(json.dumps(json.loads(members), indent=2) + "\n")
            print("ok", flush=True)
            continue
        try:
            agentstate.mutate(path, lambda d: d.update(json.loads(members, parse_int=number)))
            print("ok", flush=True)
        except agentstate.Error as e:
            print("error %s" % e, flush=True)


if __name__ == "__main__":
    main()
