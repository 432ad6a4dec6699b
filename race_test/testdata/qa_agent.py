#!/usr/bin/env python3
"""A QA bot in Python that shares the workspaces with the Go servers.

It follows the locking protocol of the Go status package, steps 1 to 6 as
stated there (go doc github.com/agentstate/core/status, "Locking
protocol").

Usage: qa_agent.py ROOT WORKSPACES ROUNDS
Prints RACE-READY, waits for one line on stdin (the start gate), then updates
every workspace ROUNDS times (as soon as it exists). Each update increments
race_acks["py/qa"] and its own field qa.checked, which the Go structs do not
declare. It prints RACE-RESULT {"task-00": n, ...}: the updates it committed.
"""

import fcntl
import json
import os
import sys

MAX_PASSES = 200000


def mutate(path, fn):
    """Apply fn to the document at path under its lock; True if committed."""
    try:
        lock = os.open(path + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    except FileNotFoundError:
        return False  # the workspace directory does not exist yet
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(path, "rb") as f:
                data = f.read()
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            return False  # not created yet
        doc = json.loads(data)  # a torn document would raise: the test fails
        fn(doc)
        out = json.dumps(doc, separators=(",", ":")).encode()
        d = os.path.dirname(path)
        tmp = os.path.join(d, ".%s.%s.tmp" % (os.path.basename(path), os.urandom(8).hex()))
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        try:
            view = memoryview(out)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            os.unlink(tmp)
            raise
        os.close(fd)
        os.replace(tmp, path)
        dfd = os.open(d, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
        return True
    finally:
        os.close(lock)  # releases the flock


def check(doc):
    acks = doc.setdefault("race_acks", {})
    acks["py/qa"] = acks.get("py/qa", 0) + 1
    qa = doc.setdefault("qa", {})
    qa["checked"] = qa.get("checked", 0) + 1


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
            if mutate(path, check):
                done[name] += 1
    print("RACE-RESULT " + json.dumps(done), flush=True)


if __name__ == "__main__":
    main()
