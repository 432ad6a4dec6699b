#!/usr/bin/env python3
"""A third-party locker that deletes PATH.lock when it releases the lock.

Usage: lock_deleter.py PATH VARIANT

VARIANT "unlink-then-unlock" does what Python filelock 3.20.4-3.29.4 does on
release: unlink PATH.lock while still holding the flock, then unlock and
close. VARIANT "unlock-then-unlink" does what portalocker's
TemporaryFileLock does: unlock and close, then unlink.

Each round opens (creating) PATH.lock, takes fcntl.flock LOCK_EX, adds 1 to
"runs" in PATH with a durable replace (temp file, fsync, os.replace,
directory fsync), and releases as VARIANT says. It re-checks nothing after
flock, like the tools it imitates, and pauses 1 ms between rounds. Talks to the Go test over stdout: prints
"ready", waits for one line on stdin, runs rounds until stdin is closed,
then prints "result {json}" with the number of increments it made.
Standard library only.
"""

import fcntl
import json
import os
import select
import sys
import tempfile
import time


def increment(path):
    with open(path, "rb") as f:
        doc = json.loads(f.read())
    doc["runs"] = doc.get("runs", 0) + 1
    directory = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        os.fchmod(f.fileno(), 0o644)
        f.write(json.dumps(doc, indent=2) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    dfd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def round_(path, variant):
    lock = path + ".lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    increment(path)
    if variant == "unlink-then-unlock":
        try:
            os.unlink(lock)
        except FileNotFoundError:
            pass
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
        try:
            os.unlink(lock)
        except FileNotFoundError:
            pass


def stopped():
    readable, _, _ = select.select([sys.stdin], [], [], 0)
    return bool(readable)  # EOF (or anything) on stdin ends the run


def main():
    path, variant = sys.argv[1], sys.argv[2]
    if variant not in ("unlink-then-unlock", "unlock-then-unlink"):
        sys.exit("unknown variant " + variant)
    print("ready", flush=True)
    sys.stdin.readline()
    acked = 0
    while not stopped():
        round_(path, variant)
        acked += 1
        time.sleep(0.001)  # a polling tool, not a tight loop
    print("result " + json.dumps({"Acked": acked}), flush=True)


if __name__ == "__main__":
    main()
