#!/usr/bin/env python3
"""A non-Go agent joining the status package's locking protocol.

Usage: interop_counter.py PATH ITERATIONS MODE

MODE "lock" follows the locking protocol, steps 1 to 6 as the status
package doc states them (go doc github.com/agentstate/core/status,
"Locking protocol"): open_lock is steps 1 to 3, recover (from
txn_agent.py) and read_doc step 4, replace step 5.
MODE "basic" is an agent written before transactions: the same steps
without the recovery of step 4 (lock, read, replace, unlock), as a
conforming client that never learns the extension; "basic-remove" removes
the document that way once (ITERATIONS unused).
MODE "nolock" does the same read-modify-write without steps 1, 2 and 5: the
control that shows what the lock is for. MODE "hold" takes the lock, prints
"inside" and blocks reading stdin until it is killed (ITERATIONS unused).

Each iteration adds 1 to "runs" and sets "py_extra", a field the Go Status
type does not know; every other field is kept as read. Talks to the Go test
over stdout: prints "ready", waits for one line on stdin, runs, prints
"result {json}". Standard library only.
"""

import fcntl
import json
import os
import stat
import sys
import tempfile

from txn_agent import recover

PY_EXTRA = {"lang": "python", "tags": ["a", "b"], "ratio": 0.5}


def read_doc(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return {}
    # A torn or corrupt document must stop us, not be overwritten.
    return json.loads(data)


def replace(path, doc):
    directory = os.path.dirname(path) or "."
    try:
        mode = os.stat(path).st_mode & 0o777
    except FileNotFoundError:
        mode = 0o644
    fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            os.fchmod(f.fileno(), mode)
            f.write(json.dumps(doc, indent=2) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    dfd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def increment(path):
    doc = read_doc(path)
    doc["runs"] = doc.get("runs", 0) + 1
    doc["py_extra"] = PY_EXTRA
    replace(path, doc)


def open_lock(path):
    """Steps 1-3: a fresh descriptor of PATH.lock, locked, still current."""
    name = path + ".lock"
    flags = os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
    while True:
        try:
            mode = os.lstat(path).st_mode & 0o666
        except FileNotFoundError:
            mode = 0o644
        try:
            lfd = os.open(name, flags)
        except FileNotFoundError:
            try:
                lfd = os.open(name, flags | os.O_CREAT | os.O_EXCL, mode)
                os.fchmod(lfd, mode)
            except FileExistsError:
                continue
        if not stat.S_ISREG(os.fstat(lfd).st_mode):
            os.close(lfd)
            raise OSError(name + " is not a regular file")
        fcntl.flock(lfd, fcntl.LOCK_EX)
        mine = os.fstat(lfd)
        try:
            now = os.lstat(name)
            if (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino):
                return lfd
        except FileNotFoundError:
            pass
        os.close(lfd)  # deleted (and maybe recreated) meanwhile: start over


def locked_increment(path):
    # A fresh open file description per acquisition: flock locks belong to it.
    lfd = open_lock(path)
    try:
        recover(os.path.abspath(path))
        increment(path)
    finally:
        os.close(lfd)  # releases the lock; the lock file stays


def basic_increment(path):
    lfd = open_lock(path)
    try:
        increment(path)
    finally:
        os.close(lfd)


def basic_remove(path):
    lfd = open_lock(path)
    try:
        os.unlink(path)
        os.unlink(path + ".lock")
        dfd = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    finally:
        os.close(lfd)


def hold(path):
    lfd = open_lock(path)
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
    step = {"lock": locked_increment, "basic": basic_increment, "nolock": increment}[mode]
    print("ready", flush=True)
    sys.stdin.readline()
    acked = 0
    for _ in range(iterations):
        step(path)
        acked += 1
    print("result " + json.dumps({"Acked": acked}), flush=True)


if __name__ == "__main__":
    main()
