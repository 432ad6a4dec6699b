#!/usr/bin/env python3
"""A non-Go agent that changes several status documents in one transaction,
following the protocol of status/doc.go (Locking protocol: several
documents, and Recovery). Standard library only.

Usage:
  txn_agent.py toggle REGISTRY TASK... [--rounds N] [--die-at STEP]
  txn_agent.py spawn REGISTRY TASK...
  txn_agent.py recover PATH

toggle: N transactions (default 1), each on the registry and one task (in
turn): the task goes queued <-> running, the registry's active_count and
agents follow, total_spawned and the task's runs count the transaction.
With --die-at STEP the agent SIGKILLs itself at that step of its first
commit of two documents (marker 0, temp 0, marker 1, temp 1, prepared,
journal, committed, renamed 0, renamed 1, installed, forgotten, unmarked 0,
unmarked 1), as the Go commit hook does.

spawn: admission control, for each task in turn: spawn it (queued ->
running, registered) when active_count < max_concurrent, retrying until
there is room, then finish it (running -> completed, unregistered), each
step one transaction.

recover: take PATH's lock, complete or undo a transaction left on it, and
release the lock (the next locker's duty).

Talks to the Go test over stdout: "ready", then one line on stdin starts
it; "ack" after each committed transaction; "dying" before a SIGKILL;
"result {json}" at the end.
"""

import fcntl
import json
import os
import secrets
import signal
import stat
import sys
import time

LOCK, MARKER, TEMP = ".lock", ".txn", ".txn.tmp"
JOURNAL_PREFIX, JOURNAL_SUFFIX = ".txn-", ".journal"
DIE_AT = None


def step(name):
    if DIE_AT == name:
        print("dying", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)


def fsync_path(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_small(path):
    """A regular file's content, or None if it does not exist."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        raise OSError(path + " is not a regular file")
    with open(path, "rb") as f:
        return f.read()


def open_lock(path):
    """Protocol step 1: a fresh descriptor of PATH.lock, not yet locked."""
    name = path + LOCK
    flags = os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
    while True:
        try:
            return checked(name, os.open(name, flags))
        except FileNotFoundError:
            try:
                mode = os.lstat(path).st_mode & 0o666
            except FileNotFoundError:
                mode = 0o644
            try:
                fd = os.open(name, flags | os.O_CREAT | os.O_EXCL, mode)
                os.fchmod(fd, mode)
                return checked(name, fd)
            except FileExistsError:
                continue


def checked(name, fd):
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(name + " is not a regular file")
    return fd


def lock_all(paths):
    """Several documents' locks in the order of (st_dev, st_ino), each
    re-checked (step 3); a replaced lock file restarts the whole
    acquisition."""
    while True:
        fds = [(open_lock(p), p) for p in paths]
        ids = [(os.fstat(fd).st_dev, os.fstat(fd).st_ino, fd, p) for fd, p in fds]
        ids.sort()
        if len({(d, i) for d, i, _, _ in ids}) != len(ids):
            raise OSError("two documents are one file")
        held, ok = [], True
        for dev, ino, fd, p in ids:
            fcntl.flock(fd, fcntl.LOCK_EX)
            held.append(fd)
            try:
                now = os.lstat(p + LOCK)
                ok = (now.st_dev, now.st_ino) == (dev, ino)
            except FileNotFoundError:
                ok = False
            if not ok:
                break
        if ok:
            return [fd for fd, _ in fds]
        for fd, _ in fds:
            os.close(fd)


def other_pending(marker, mst, jpath):
    """Whether marker, another document's than the one of mst, names jpath."""
    try:
        st = os.lstat(marker)
    except FileNotFoundError:
        return False
    if os.path.samestat(st, mst):
        return False
    data = read_small(marker)
    return data is not None and data.decode().rstrip("\n") == jpath


def recover(path):
    """Recovery, under PATH's lock."""
    marker = path + MARKER
    try:
        mst = os.lstat(marker)
    except FileNotFoundError:
        return
    jpath = read_small(marker).decode().rstrip("\n")
    base = os.path.basename(jpath)
    docs, committed, torn = [], False, False
    if os.path.isabs(jpath) and base.startswith(JOURNAL_PREFIX) and base.endswith(JOURNAL_SUFFIX):
        data = read_small(jpath)
        if data is not None:
            try:
                journal = json.loads(data)
                docs = journal["documents"]
            except (ValueError, KeyError, TypeError):
                torn = True
            for doc in docs:
                try:
                    st = os.lstat(doc + MARKER)
                except FileNotFoundError:
                    continue
                if (st.st_dev, st.st_ino) == (mst.st_dev, mst.st_ino):
                    committed = True
    if committed:
        fsync_path(jpath)
        dirs = {os.path.dirname(jpath)}
        for doc in docs:
            for name in (doc + TEMP, doc + MARKER):
                try:
                    fsync_path(name)
                except FileNotFoundError:
                    pass
            dirs.add(os.path.dirname(doc))
        for d in dirs:
            fsync_path(d)
        try:
            os.rename(path + TEMP, path)
            fsync_path(os.path.dirname(path))
        except FileNotFoundError:
            pass  # installed before
        # The journal goes before our marker when no other document needs it.
        if not any(other_pending(d + MARKER, mst, jpath) for d in docs):
            remove(jpath)
    else:
        remove(path + TEMP)
        if torn:
            remove(jpath)
    remove(marker)


def remove(name):
    try:
        os.unlink(name)
    except FileNotFoundError:
        pass


def read_doc(path):
    data = read_small(path)
    return {} if data is None else json.loads(data)


def encode(doc):
    return (json.dumps(doc, indent=2) + "\n").encode()


def write_temp(path, name, data):
    """Create name exclusively with PATH's mode and write data."""
    try:
        mode = os.lstat(path).st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o644
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    os.fchmod(fd, mode)
    os.write(fd, data)
    return fd


def replace(path, data):
    """Step 5 for one document."""
    tmp = os.path.join(os.path.dirname(path), "." + os.path.basename(path) + "." + secrets.token_hex(8) + ".tmp")
    fd = write_temp(path, tmp, data)
    os.fsync(fd)
    os.close(fd)
    os.replace(tmp, path)
    fsync_path(os.path.dirname(path))


def commit(changed):
    """Commit two or more changed documents {path: bytes}."""
    paths = sorted(changed)
    jpath = os.path.join(os.path.dirname(paths[0]), JOURNAL_PREFIX + secrets.token_hex(8) + JOURNAL_SUFFIX)
    fds = []
    for i, p in enumerate(paths):
        fd = os.open(p + MARKER, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        os.write(fd, (jpath + "\n").encode())
        fds.append(fd)
        step("marker %d" % i)
        remove(p + TEMP)
        fds.append(write_temp(p, p + TEMP, changed[p]))
        step("temp %d" % i)
    for fd in fds:
        os.fsync(fd)
        os.close(fd)
    for d in {os.path.dirname(p) for p in paths}:
        fsync_path(d)
    step("prepared")
    fd = os.open(jpath, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    os.write(fd, (json.dumps({"documents": paths}) + "\n").encode())
    step("journal")
    os.fsync(fd)
    os.close(fd)
    fsync_path(os.path.dirname(jpath))
    step("committed")
    for i, p in enumerate(paths):
        os.rename(p + TEMP, p)
        step("renamed %d" % i)
    for d in {os.path.dirname(p) for p in paths}:
        fsync_path(d)
    step("installed")
    os.unlink(jpath)
    step("forgotten")
    for i, p in enumerate(paths):
        os.unlink(p + MARKER)
        step("unmarked %d" % i)


def transaction(paths, fn):
    """Lock, recover, read, change with fn (which may raise to abort),
    commit what changed, unlock. Returns fn's result."""
    paths = [os.path.abspath(p) for p in paths]
    fds = lock_all(paths)
    try:
        for p in paths:
            recover(p)
        docs = {p: read_doc(p) for p in paths}
        before = {p: encode(d) for p, d in docs.items()}
        result = fn(docs)
        changed = {p: encode(d) for p, d in docs.items() if encode(d) != before[p]}
        if len(changed) == 1:
            (p, data), = changed.items()
            replace(p, data)
        elif changed:
            commit(changed)
        return result
    finally:
        for fd in fds:
            os.close(fd)


class AtCapacity(Exception):
    pass


def toggle(docs, reg, task):
    r, t = docs[reg], docs[task]
    name = t.get("task", "")
    r["total_spawned"] = r.get("total_spawned", 0) + 1
    t["runs"] = t.get("runs", 0) + 1
    agents = r.get("agents") or []
    if t.get("status") == "running":
        r["active_count"] = r.get("active_count", 0) - 1
        r["agents"] = [a for a in agents if a != name]
        t["status"] = "queued"
    else:
        r["active_count"] = r.get("active_count", 0) + 1
        r["agents"] = agents + [name]
        t["status"] = "running"


def spawn(docs, reg, task):
    r, t = docs[reg], docs[task]
    if r.get("active_count", 0) >= r.get("max_concurrent", 0):
        raise AtCapacity()
    if t.get("status") != "queued":
        raise ValueError(task + " is not queued")
    r["active_count"] = r.get("active_count", 0) + 1
    r["total_spawned"] = r.get("total_spawned", 0) + 1
    r["agents"] = (r.get("agents") or []) + [t["task"]]
    t["status"] = "running"


def finish(docs, reg, task):
    r, t = docs[reg], docs[task]
    if t.get("status") != "running":
        raise ValueError(task + " is not running")
    r["active_count"] = r.get("active_count", 0) - 1
    r["agents"] = [a for a in r.get("agents") or [] if a != t["task"]]
    t["status"] = "completed"


def main():
    global DIE_AT
    args = sys.argv[1:]
    mode = args.pop(0)
    rounds = 1
    if "--rounds" in args:
        i = args.index("--rounds")
        rounds = int(args[i + 1])
        del args[i:i + 2]
    if "--die-at" in args:
        i = args.index("--die-at")
        DIE_AT = args[i + 1]
        del args[i:i + 2]
    if mode == "recover":
        path = os.path.abspath(args[0])
        fds = lock_all([path])
        try:
            recover(path)
        finally:
            os.close(fds[0])
        return
    reg, tasks = args[0], args[1:]
    print("ready", flush=True)
    sys.stdin.readline()
    acked = rejected = 0
    if mode == "toggle":
        for n in range(rounds):
            task = tasks[n % len(tasks)]
            transaction([reg, task], lambda d: toggle(d, os.path.abspath(reg), os.path.abspath(task)))
            acked += 1
            print("ack", flush=True)
    elif mode == "spawn":
        for task in tasks:
            a, t = os.path.abspath(reg), os.path.abspath(task)
            while True:
                try:
                    transaction([reg, task], lambda d: spawn(d, a, t))
                    break
                except AtCapacity:
                    rejected += 1
                    time.sleep(0.001)  # back off; the Go agents do the same
            print("ack", flush=True)
            transaction([task, reg], lambda d: finish(d, a, t))
            acked += 1
            print("ack", flush=True)
    print("result " + json.dumps({"Acked": acked, "Rejected": rejected}), flush=True)


if __name__ == "__main__":
    main()
