#!/usr/bin/env python3
"""A QA bot in Python that shares the workspaces with the Go servers,
through the repository's Python package (python/, import agentstate), which
follows the locking protocol of the Go status package.

Usage: qa_agent.py ROOT WORKSPACES ROUNDS
Prints RACE-READY, waits for one line on stdin (the start gate), then updates
every workspace ROUNDS times (as soon as it exists). Each update increments
race_acks["py/qa"] and its own field qa.checked, which the Go structs do not
declare. It prints RACE-RESULT {"task-00": n, ...}: the updates it committed.
"""

import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "src")))
import agentstate  # noqa: E402

MAX_PASSES = 200000


class NotYet(Exception):
    """The workspace's document does not exist yet: write nothing."""


def check(path):
    def fn(doc):
        if not os.path.lexists(path):  # we hold its lock: this cannot change
            raise NotYet()
        acks = doc.setdefault("race_acks", {})
        acks["py/qa"] = acks.get("py/qa", 0) + 1
        qa = doc.setdefault("qa", {})
        qa["checked"] = qa.get("checked", 0) + 1
    return fn


def mutate(path):
    """One update of the document at path; True if committed."""
    try:
        agentstate.mutate(path, check(path))
        return True
    except (NotYet, agentstate.NotFoundError):
        return False  # the document, or its directory, does not exist yet


def main():
    root, workspaces, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    print("RACE-READY", flush=True)
    sys.stdin.readline()
    done = {"task-%02d" % w: 0 for w in range(workspaces)}
    # ROUNDS updates of every workspace, passing again over the ones the
    # Go spawners have not created yet; bounded in case one never appears.
    for _ in range(MAX_PASSES):
        todo = [name for name, n in sorted(done.items()) if n < rounds]
        if not todo:
            break
        for name in todo:
            path = os.path.join(root, "agentstate", "core", name, "status.json")
            if mutate(path):
                done[name] += 1
    print("RACE-RESULT " + json.dumps(done), flush=True)


if __name__ == "__main__":
    main()
