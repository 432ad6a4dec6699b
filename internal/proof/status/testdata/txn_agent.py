#!/usr/bin/env python3
"""A non-Go agent that changes several status documents in one transaction,
following the protocol of status/doc.go (Locking protocol: several
documents, commit and Recovery), opening rules and trust rule included.
Standard library only. interop_counter.py imports its recovery.

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
release the lock (the next locker's duty). Exit status 1 and "untrusted
..." or "conflict ..." on stderr when recovery stops.

Talks to the Go test over stdout: "ready", then one line on stdin starts
it; "ack" after each committed transaction; "dying" before a SIGKILL;
"result {json}" at the end.
"""

import errno
import fcntl
import hashlib
import json
import os
import re
import secrets
import signal
import stat
import sys
import time

LOCK, MARKER, TEMP, CONFLICT = ".lock", ".txn", ".txn.tmp", ".conflict-"
JOURNAL_NAME = re.compile(r"\.txn-[0-9a-f]{16}\.journal")
MAX_MARKER, MAX_JOURNAL, MAX_DOCUMENTS = 4 << 10, 1 << 20, 1024
MAX_DOCUMENT = 16 << 20  # the Go package's default limit
DIE_AT = None


class Untrusted(Exception):
    """A transaction file recovery will not act on; nothing was changed."""


class Conflict(Exception):
    """The document changed after the commit point; the copy was kept."""


def step(name):
    if DIE_AT == name:
        print("dying", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)


def fsync_path(path):
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
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
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        return read_all(fd, MAX_DOCUMENT, path)
    finally:
        os.close(fd)


# Locking (steps 1 to 3).

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


# Recovery (step 4), by the opening rules and the trust rule.

def valid_path(p):
    return (len(p) > 1 and p.startswith("/") and os.path.normpath(p) == p
            and not p.startswith("//") and "\0" not in p and "\n" not in p)


def open_dir(path):
    """A directory to act in: O_DIRECTORY refuses anything else unopened."""
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NONBLOCK | os.O_CLOEXEC)


def lstat_at(dfd, name):
    try:
        return os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None


def open_regular(dfd, name, limit, shown):
    """Open name in dfd only if it is a regular file (refused before it is
    opened otherwise), never through a link, never blocking; None if it
    does not exist."""
    st = lstat_at(dfd, name)
    if st is None:
        return None, None
    if not stat.S_ISREG(st.st_mode):
        raise Untrusted(shown + ": not a regular file")
    if limit and st.st_size > limit:
        raise Untrusted(shown + ": too large")
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd)
    fst = os.fstat(fd)
    if not stat.S_ISREG(fst.st_mode) or (fst.st_dev, fst.st_ino) != (st.st_dev, st.st_ino):
        os.close(fd)
        raise Untrusted(shown + ": replaced while it was opened")
    return fd, fst


def read_all(fd, limit, shown):
    data = b""
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            return data
        data += chunk
        if limit and len(data) > limit:
            raise Untrusted(shown + ": too large")


def trust(dst, fst, doc_uid, shown):
    """The trust rule: one hard link, and in a sticky directory an owner
    that is the document's, ours or the directory's."""
    if fst.st_nlink != 1:
        raise Untrusted(shown + ": more than one hard link")
    if dst.st_mode & stat.S_ISVTX and fst.st_uid not in (doc_uid, os.geteuid(), dst.st_uid):
        raise Untrusted(shown + ": owned by uid %d in a sticky directory" % fst.st_uid)


def parse_marker(data):
    """(journal, before), before None for the earlier one-line format; or
    "torn" for a marker that was never completed (no journal can exist for
    it)."""
    try:
        s = data.decode()
    except UnicodeDecodeError:
        raise Untrusted("marker: not UTF-8")
    if "\n" not in s:
        if s == "" or (s.startswith("/") and "\0" not in s):
            return "torn"
        raise Untrusted("marker: malformed")
    line, rest = s.split("\n", 1)
    if not valid_path(line) or not JOURNAL_NAME.fullmatch(os.path.basename(line)):
        raise Untrusted("marker: malformed")
    if rest == "":
        return line, None
    if not rest.endswith("\n") or "\n" in rest[:-1]:
        raise Untrusted("marker: malformed")
    before = rest[:-1]
    if before != "none" and not re.fullmatch(r"[0-9a-f]{64}", before):
        raise Untrusted("marker: malformed")
    return line, before


def parse_journal(data, shown):
    try:
        j = json.loads(data.decode())
    except (UnicodeDecodeError, ValueError):
        raise Untrusted(shown + ": not a journal")
    if not isinstance(j, dict) or set(j) != {"documents"} or not isinstance(j["documents"], list):
        raise Untrusted(shown + ": not a journal")
    docs = j["documents"]
    if not 1 <= len(docs) <= MAX_DOCUMENTS or len(set(docs)) != len(docs):
        raise Untrusted(shown + ": not a journal")
    if not all(isinstance(d, str) and valid_path(d) for d in docs):
        raise Untrusted(shown + ": lists a path that is not absolute and clean")
    return docs


def before_line(data):
    return "none" if data is None else hashlib.sha256(data).hexdigest()


def names(doc, jpath, jst, ours):
    """Whether doc's marker names the journal jpath (identity jst). ours,
    if given, is a marker stat that does not count."""
    try:
        dfd = open_dir(os.path.dirname(doc))
    except (FileNotFoundError, NotADirectoryError):
        return False
    try:
        fd, mst = open_regular(dfd, os.path.basename(doc) + MARKER, MAX_MARKER, doc + MARKER)
    except Untrusted:
        return False
    finally:
        os.close(dfd)
    if fd is None:
        return False
    try:
        if ours is not None and os.path.samestat(mst, ours):
            return False
        parsed = parse_marker(read_all(fd, MAX_MARKER, doc + MARKER))
    except Untrusted:
        return False
    finally:
        os.close(fd)
    if parsed == "torn":
        return False
    if parsed[0] == jpath:
        return True
    if os.path.basename(parsed[0]) != os.path.basename(jpath):
        return False
    try:
        return os.path.samestat(os.lstat(parsed[0]), jst)
    except FileNotFoundError:
        return False


def unlink_at(dfd, name):
    try:
        os.unlink(name, dir_fd=dfd)  # never a directory
    except FileNotFoundError:
        pass


def undo(dfd, base, shown):
    st = lstat_at(dfd, base + TEMP)
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise Untrusted(shown + TEMP + ": a directory")
    unlink_at(dfd, base + TEMP)
    unlink_at(dfd, base + MARKER)


def recover(path, max_size=MAX_DOCUMENT):
    """Recovery, under PATH's lock. Returns the other documents whose
    markers still name the journal; raises Untrusted or Conflict."""
    try:
        os.lstat(path + MARKER)
    except FileNotFoundError:
        return []
    if not valid_path(path):
        raise Untrusted(path + ": not an absolute, clean path")
    base = os.path.basename(path)
    dfd = open_dir(os.path.dirname(path))
    opened = [dfd]
    try:
        dst = os.fstat(dfd)
        doc = lstat_at(dfd, base)
        doc_uid = doc.st_uid if doc is not None and stat.S_ISREG(doc.st_mode) else None
        mfd, mst = open_regular(dfd, base + MARKER, MAX_MARKER, path + MARKER)
        if mfd is None:
            return []
        opened.append(mfd)
        trust(dst, mst, doc_uid, path + MARKER)
        parsed = parse_marker(read_all(mfd, MAX_MARKER, path + MARKER))
        if parsed == "torn":
            undo(dfd, base, path)
            return []
        jpath, before = parsed
        jdir = os.path.dirname(jpath)
        try:
            jdfd = dfd if jdir == os.path.dirname(path) else open_dir(jdir)
        except (FileNotFoundError, NotADirectoryError):
            undo(dfd, base, path)  # no journal: not committed
            return []
        if jdfd != dfd:
            opened.append(jdfd)
        jfd, jst = open_regular(jdfd, os.path.basename(jpath), MAX_JOURNAL, jpath)
        if jfd is None:
            undo(dfd, base, path)
            return []
        opened.append(jfd)
        trust(os.fstat(jdfd), jst, doc_uid, jpath)
        docs = parse_journal(read_all(jfd, MAX_JOURNAL, jpath), jpath)
        if path not in docs and not any(_same_marker(d, mst) for d in docs):
            raise Untrusted(jpath + ": does not list " + path)
        if not any(os.path.dirname(d) == jdir for d in docs):
            raise Untrusted(jpath + ": not in the directory of a document it lists")
        # Committed.
        tfd, tst = open_regular(dfd, base + TEMP, max_size, path + TEMP)
        conflict = None
        if tfd is not None:
            opened.append(tfd)
            trust(dst, tst, doc_uid, path + TEMP)
            if before is not None:
                now = "none"
                if doc is not None:
                    if not stat.S_ISREG(doc.st_mode):
                        raise Untrusted(path + ": not a regular file")
                    cfd, _ = open_regular(dfd, base, max_size, path)
                    try:
                        now = before_line(read_all(cfd, max_size, path))
                    finally:
                        os.close(cfd)
                if now != before:
                    conflict = True
        os.fsync(jfd)
        os.fsync(jdfd)
        if tfd is not None:
            if conflict:
                moved = move_aside(dfd, base, path)
                conflict = Conflict("%s: replaced or removed after its transaction %s committed; the transaction's copy is %s" % (path, jpath, moved))
            else:
                os.fsync(tfd)
                os.rename(base + TEMP, base, src_dir_fd=dfd, dst_dir_fd=dfd)
                now = lstat_at(dfd, base)
                if now is None or not os.path.samestat(now, tst):
                    raise Untrusted(path + TEMP + ": replaced while it was installed")
                os.fsync(dfd)
        # Cleanup without orphaning the journal.
        jbase = os.path.basename(jpath)
        others = [d for d in docs if d != path and names(d, jpath, jst, mst)]
        if not others:
            unlink_at(jdfd, jbase)
            unlink_at(dfd, base + MARKER)
        else:
            unlink_at(dfd, base + MARKER)
            others = [d for d in docs if d != path and names(d, jpath, jst, None)]
            if not others:
                unlink_at(jdfd, jbase)
        if conflict:
            raise conflict
        return others
    finally:
        for fd in reversed(opened):
            os.close(fd)


def _same_marker(doc, mst):
    try:
        return os.path.samestat(os.lstat(doc + MARKER), mst)
    except OSError:
        return False


def move_aside(dfd, base, path):
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    for i in range(1, 1001):
        name = base + CONFLICT + stamp + ("" if i == 1 else "-%d" % i)
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dfd)
        except FileExistsError:
            continue
        os.close(fd)
        os.rename(base + TEMP, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        os.fsync(dfd)
        return os.path.join(os.path.dirname(path), name)
    raise OSError(errno.EEXIST, "no free conflict name for " + path)


# Reading and writing (steps 4 and 5) and the commit.

def read_doc(path):
    data = read_small(path)
    return {} if data is None else json.loads(data)


def encode(doc):
    return (json.dumps(doc, indent=2) + "\n").encode()


def write_temp(path, name, data):
    """Create name exclusively with PATH's mode (and owner, as root) and
    write data."""
    try:
        st = os.lstat(path)
        mode = st.st_mode & 0o7777
    except FileNotFoundError:
        st, mode = None, 0o644
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    if st is not None and os.geteuid() == 0:
        os.fchown(fd, st.st_uid, st.st_gid)
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


def remove_temp(name):
    """Unlink a new content left by an earlier commit; never a directory."""
    st = None
    try:
        st = os.lstat(name)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        raise Untrusted(name + ": a directory")
    os.unlink(name)


def commit(changed, before):
    """Commit two or more changed documents {path: bytes}; before holds
    each one's bytes as read under the lock (None: it did not exist)."""
    paths = sorted(changed)
    d0 = os.path.dirname(paths[0])
    jpath = os.path.join(d0, ".txn-" + secrets.token_hex(8) + ".journal")
    jtemp = os.path.join(d0, "." + os.path.basename(jpath) + "." + secrets.token_hex(8) + ".tmp")
    fds = []
    for i, p in enumerate(paths):
        fd = os.open(p + MARKER, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        os.write(fd, (jpath + "\n" + before_line(before[p]) + "\n").encode())
        fds.append(fd)
        step("marker %d" % i)
        remove_temp(p + TEMP)
        fds.append(write_temp(p, p + TEMP, changed[p]))
        step("temp %d" % i)
    fd = os.open(jtemp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    os.write(fd, (json.dumps({"documents": paths}) + "\n").encode())
    fds.append(fd)
    for fd in fds:
        os.fsync(fd)
        os.close(fd)
    for d in {os.path.dirname(p) for p in paths}:
        fsync_path(d)
    step("prepared")
    os.rename(jtemp, jpath)
    step("journal")
    fsync_path(d0)
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
        raw = {p: read_small(p) for p in paths}
        docs = {p: {} if raw[p] is None else json.loads(raw[p]) for p in paths}
        before = {p: encode(d) for p, d in docs.items()}
        result = fn(docs)
        changed = {p: encode(d) for p, d in docs.items() if encode(d) != before[p]}
        if len(changed) == 1:
            (p, data), = changed.items()
            replace(p, data)
        elif changed:
            commit(changed, raw)
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
        except Untrusted as e:
            sys.exit("untrusted " + str(e))
        except Conflict as e:
            sys.exit("conflict " + str(e))
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
