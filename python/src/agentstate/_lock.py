"""The lock of a document: flock(2) on PATH.lock, steps 1 to 3 and 6 of the
locking protocol, waited for on the lock file's bell (Linux; _bell) or by
polling, with bounded timeouts so that a deadline always ends the wait."""

from __future__ import annotations

import contextlib
import errno
import os
import random
import stat
import sys
import threading
import time
from typing import Iterator, List, Optional, Sequence, Tuple

from . import _bell, _files
from .errors import Error, InvalidArgument, LockTimeout, NestedError, NotRegularError, Unsupported, UntrustedLockError

# flock(2) through fcntl: every system Python runs on but Windows.
HAVE_FLOCK = sys.platform != "win32"

# Never follow a final symbolic link (a link planted in a shared directory
# must not make us create or lock a file elsewhere) and never block in open
# (a named pipe planted as the lock file).
_LOCK_FLAGS = _files.O_CLOEXEC | _files.O_NOFOLLOW | _files.O_NONBLOCK

# The poll's backoff, where there is no bell: from 50 microseconds,
# doubling up to 5 milliseconds, with full jitter so that processes polling
# one lock spread out.
MIN_BACKOFF = 50e-6
MAX_BACKOFF = 5e-3

# A waiter asleep on the bell tries the lock at each ring and at its own
# timeouts (seconds): the first, then as long as it has waited, at most
# the last. The constants of the Go package's waiters.
FIRST_SLEEP = 0.020
MAX_SLEEP = 0.200
MAX_FALSE_RINGS = 4
COURTESY = 1.0
MEMO_SIZE = 1024


class Deadline:
    """When a call must give up waiting; None: never."""

    __slots__ = ("at", "timeout")

    def __init__(self, timeout: Optional[float]) -> None:
        if timeout is not None and timeout < 0:
            raise InvalidArgument("agentstate: timeout %r is negative" % timeout)
        self.timeout = timeout
        self.at = None if timeout is None else time.monotonic() + timeout

    def left(self) -> Optional[float]:
        return None if self.at is None else self.at - time.monotonic()

    def passed(self) -> bool:
        return self.at is not None and time.monotonic() >= self.at

    def check(self, op: str, path: str) -> None:
        if self.passed():
            raise LockTimeout("agentstate: %s %s: timed out after %ss" % (op, path, self.timeout), path)


class Handle:
    """One acquisition's descriptor of a lock file: a fresh open file
    description, so that its flock excludes every other one, in this
    process too."""

    def __init__(self, key: str, perm: int, op: str, shown: str) -> None:
        if not HAVE_FLOCK:
            raise Unsupported("agentstate: %s %s: file locks need flock(2), which this system does not have" % (op, shown), shown)
        self.key = key
        self.name = key + _files.LOCK_SUFFIX
        self.perm = perm
        self.op = op
        self.shown = shown
        self.fd = -1
        self.locked = False
        self.waited = 0.0
        self._open()

    def _error(self, e: OSError) -> Error:
        if _files.is_symlink_error(e):
            try:
                if stat.S_ISLNK(os.lstat(self.name).st_mode):
                    return NotRegularError("agentstate: %s %s: lock file: not a regular file: a symbolic link (lock files are never followed)" % (self.op, self.shown), self.shown)
            except OSError:
                pass
        if e.errno == errno.EISDIR:
            return NotRegularError("agentstate: %s %s: lock file: not a regular file: a directory (another tool's lock?)" % (self.op, self.shown), self.shown)
        if e.errno == errno.ENXIO:
            # What open(2) says of a socket, or of a named pipe without a
            # reader opened for writing: neither is a lock file.
            try:
                mode = os.lstat(self.name).st_mode
            except OSError:
                mode = stat.S_IFREG
            if not stat.S_ISREG(mode):
                return NotRegularError("agentstate: %s %s: lock file: not a regular file: %s" % (self.op, self.shown, _files.kind(mode)), self.shown)
        return _files.oserror(self.op, self.shown, e, "open lock file: ")

    def _open(self) -> None:
        """Step 1: opens the lock file, creating it if it is missing, and
        checks that it is a regular file."""
        fd = -1
        err: Optional[OSError] = None
        try:
            fd = os.open(self.name, os.O_RDWR | _LOCK_FLAGS)
        except OSError as e:
            err = e
        tries = 0
        while err is not None and err.errno == errno.ENOENT and tries < 8:
            tries += 1
            try:
                fd, err = self._create(), None
            except OSError as e:
                err = e
                if e.errno != errno.EEXIST:
                    break
                try:  # created by someone else meanwhile: open theirs
                    fd, err = os.open(self.name, os.O_RDWR | _LOCK_FLAGS), None
                except OSError as e2:
                    err = e2
        if err is not None and err.errno == errno.EACCES:
            # A lock file we may read but not write still takes a flock.
            try:
                fd, err = os.open(self.name, os.O_RDONLY | _LOCK_FLAGS), None
            except OSError:
                pass
        if err is not None:
            raise self._error(err) from None
        try:
            mode = os.fstat(fd).st_mode
        except OSError as e:
            os.close(fd)
            raise self._error(e) from None
        if not stat.S_ISREG(mode):
            os.close(fd)
            raise NotRegularError("agentstate: %s %s: lock file: not a regular file: %s" % (self.op, self.shown, _files.kind(mode)), self.shown)
        try:
            _trusted(os.fstat(fd), self.name, self.key, self.op, self.shown)
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd

    def _create(self) -> int:
        """Creates the lock file with the document's owner and permission
        bits (so that whoever may open the document may open its lock), or
        with perm minus the umask when there is no document yet: the
        document will get the same."""
        if sys.platform == "win32":  # see __init__
            raise NotImplementedError
        try:
            doc: Optional[os.stat_result] = os.lstat(self.key)
        except OSError:
            doc = None
        if doc is not None and not stat.S_ISREG(doc.st_mode):
            doc = None
        mode = stat.S_IMODE(doc.st_mode) & 0o666 if doc is not None else self.perm & 0o666
        fd = os.open(self.name, os.O_RDWR | os.O_CREAT | os.O_EXCL | _LOCK_FLAGS, mode)
        if doc is None:
            return fd
        if doc.st_uid != os.geteuid() or doc.st_gid != os.getegid():
            try:  # only root may give a file away
                os.fchown(fd, doc.st_uid, doc.st_gid)
            except OSError:
                pass
        try:
            os.fchmod(fd, mode)
        except OSError:
            os.close(fd)
            raise
        return fd

    def try_lock(self) -> bool:
        """Steps 2 and 3 without waiting: takes the flock if it is free and
        checks that the file locked is still the one PATH.lock names. A
        lock on a lock file that was removed (and perhaps created anew)
        guards nothing: then it starts over with a fresh descriptor, a few
        times, before it reports the lock as busy."""
        if sys.platform == "win32":  # see __init__
            raise NotImplementedError
        import fcntl

        stale = 0
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            except OSError as e:
                raise _files.oserror(self.op, self.shown, e, "flock lock file: ") from None
            if self.current():
                return True
            os.close(self.fd)
            self.fd = -1
            self._open()
            if stale == 8:
                return False
            stale += 1

    def current(self) -> bool:
        try:
            mine = os.fstat(self.fd)
            now = os.lstat(self.name)
        except FileNotFoundError:
            return False
        except OSError as e:
            raise _files.oserror(self.op, self.shown, e, "lock file: ") from None
        return (mine.st_dev, mine.st_ino) == (now.st_dev, now.st_ino)

    def id(self) -> Tuple[int, int]:
        st = os.fstat(self.fd)
        return (st.st_dev, st.st_ino)

    def lock(self, deadline: Deadline) -> None:
        """Waits for the lock until the deadline: then LockTimeout. On
        Linux it sleeps on the lock file's bell, in one queue with Go's
        waiters, and tries at each ring and at its own timeouts, as Go's
        waiters do; elsewhere it polls with LOCK_NB. A blocking flock could
        not be given up. On failure the handle is closed."""
        start = time.monotonic()
        try:
            self._wait(deadline, start)
        except BaseException:
            self.close()
            raise
        self.locked = True
        self.waited = time.monotonic() - start

    def _wait(self, deadline: Deadline, start: float) -> None:
        _bell.preload(self.fd)
        polite, first = _courtesy(self.name, start)
        if not polite and self.try_lock():
            return
        bell = _bell.open_bell(self.fd, self.name, grow=True)
        if bell is not None:
            try:
                if self._sleep(bell, deadline, start, first):
                    return
            finally:
                bell.close()
        self._poll(deadline, polite)

    def _timed_out(self, deadline: Deadline) -> None:
        if deadline.passed():
            raise LockTimeout("agentstate: %s %s: lock not free within %ss" % (self.op, self.shown, deadline.timeout), self.shown)

    def _sleep(self, bell: _bell.Bell, deadline: Deadline, start: float, first: float) -> bool:
        """Sleeps on the bell and tries the lock after each ring and each
        timeout: first (FIRST_SLEEP, or for a polite waiter twice its last
        wait), then as long as it has waited, at most MAX_SLEEP. Each
        timeout moves it to the next class of the bell's queue (see
        _bell.class_bit). Rung MAX_FALSE_RINGS times in a row without getting the
        lock (someone rings for nothing), it ignores the bell until its
        next timeout. False: the bell is no longer the lock file's (it was
        truncated, or replaced), poll instead."""
        bit = 1 << random.randrange(_bell.INTERRUPT_BITS)
        val = bell.word()
        false_rings = timeouts = 0
        d = first
        while True:
            left = deadline.left()
            if left is not None:
                d = max(min(d, left), 0.0)
            w = _bell.TIMED_OUT
            if false_rings < MAX_FALSE_RINGS:
                w = bell.sleep(val, d, bit | _bell.class_bit(timeouts))
            else:
                false_rings = 0
                time.sleep(d)
            if self.try_lock():
                return True
            self._timed_out(deadline)
            if w == _bell.BROKEN or self.id() != bell.id:
                return False
            if w == _bell.RUNG:
                false_rings += 1
                val = bell.word()
            else:
                false_rings = 0
                timeouts += 1
            d = min(max(time.monotonic() - start, first), MAX_SLEEP)

    def _poll(self, deadline: Deadline, polite: bool) -> None:
        """Polls with LOCK_NB and a jittered backoff, where there is no
        bell."""
        backoff = FIRST_SLEEP if polite else MIN_BACKOFF
        while True:
            d = backoff / 2 + random.uniform(0, backoff / 2)
            left = deadline.left()
            if left is not None:
                d = max(min(d, left), 0.0)
            time.sleep(d)
            if self.try_lock():
                return
            self._timed_out(deadline)
            backoff = min(2 * backoff, MAX_BACKOFF)

    def close(self) -> None:
        """Step 6: closing the descriptor releases the lock. A release
        rings the lock file's bell, if it has one, as Go's does: the
        waiter that has slept longest on it wakes."""
        if self.fd < 0:
            return
        bell = _bell.open_bell(self.fd, self.name) if self.locked else None
        os.close(self.fd)
        self.fd = -1
        self.locked = False
        if bell is not None:
            _remember_release(self.name, bell.ring(), self.waited)
            bell.close()


def _trusted(st: os.stat_result, name: str, doc: str, op: str, shown: str) -> None:
    """The trust rule for the lock file st, named name, of the document doc:
    in a directory with the sticky bit (1777, like /tmp) its owner must be
    the document's, this process's (effective uid) or the directory's.
    Anyone else could unlink it and create it anew, or rename another file
    of theirs over it, whenever they like: a lock on it would exclude
    nobody. Elsewhere whoever may create the lock file may also replace the
    document itself. A lock file this process created passes: it is ours,
    or the document's owner's when root gave it away."""
    if sys.platform == "win32":  # see Handle: no flock, so no lock file
        raise NotImplementedError
    euid = os.geteuid()
    if st.st_uid == euid:
        return
    try:
        d = os.stat(os.path.dirname(name))
    except OSError as e:
        raise _files.oserror(op, shown, e, "lock file's directory: ") from None
    if not d.st_mode & stat.S_ISVTX or d.st_uid == st.st_uid:
        return
    try:
        doc_st: Optional[os.stat_result] = os.lstat(doc)
    except OSError:
        doc_st = None
    if doc_st is not None and stat.S_ISREG(doc_st.st_mode) and doc_st.st_uid == st.st_uid:
        return
    raise UntrustedLockError("agentstate: %s %s: lock file %s: cannot be trusted: owned by uid %d in a sticky directory, where only the document's owner, this process (uid %d) or the directory's owner may own it" % (op, shown, name, st.st_uid, euid), name)


# A process remembers, per lock file, when it last released the lock,
# whether that woke a waiter, and how long it had waited for it: within
# COURTESY seconds its next acquisition lets that waiter have the lock first
# (it sleeps before it tries, behind the others, and its first timeout is
# twice its last wait, so that it does not try again while the others'
# turns take their usual time), as Go's does. At most MEMO_SIZE entries.
_memo: "dict[str, Tuple[float, bool, float]]" = {}
_memo_lock = threading.Lock()


def _remember_release(name: str, woke: bool, waited: float) -> None:
    now = time.monotonic()
    with _memo_lock:
        if name not in _memo and len(_memo) >= MEMO_SIZE:
            for k in [k for k, r in _memo.items() if now - r[0] > COURTESY] or list(_memo)[: MEMO_SIZE // 2]:
                del _memo[k]
        _memo[name] = (now, woke, waited)


def _courtesy(name: str, now: float) -> Tuple[bool, float]:
    """Whether this process's last release of name woke a waiter, at most
    COURTESY seconds ago, and the first timeout of its next wait."""
    with _memo_lock:
        r = _memo.get(name)
    if r is None or not r[1] or now - r[0] >= COURTESY:
        return False, FIRST_SLEEP
    return True, min(max(2 * r[2], FIRST_SLEEP), MAX_SLEEP)


def lock_one(key: str, perm: int, deadline: Deadline, op: str, shown: str) -> Handle:
    h = Handle(key, perm, op, shown)
    h.lock(deadline)
    return h


def lock_all(keys: Sequence[str], shown: Sequence[str], perm: int, deadline: Deadline, op: str) -> List[Handle]:
    """Takes the locks of several documents in the order of the lock
    files' identities (st_dev, st_ino), the same in every process whatever
    path names a file, so that transactions over overlapping sets never
    deadlock. If a lock file turns out to have been replaced while we
    waited, the order may have changed: every lock is released and the
    acquisition starts over."""
    while True:
        handles: List[Handle] = []
        try:
            for k, s in zip(keys, shown):
                handles.append(Handle(k, perm, op, s))
            ids = [h.id() for h in handles]
            order = sorted(range(len(handles)), key=lambda i: ids[i])
            for a, b in zip(order, order[1:]):
                if ids[a] == ids[b]:
                    raise InvalidArgument("agentstate: %s %s: it is the same file as %s" % (op, shown[b], shown[a]), shown[b])
            moved = False
            for i in order:
                handles[i].lock(deadline)
                if handles[i].id() != ids[i]:
                    moved = True
                    break
        except BaseException:
            for h in handles:
                h.close()
            raise
        if not moved:
            return handles
        for h in handles:
            h.close()


_held = threading.local()


@contextlib.contextmanager
def turn(keys: Sequence[str], op: str, shown: Sequence[str]) -> Iterator[None]:
    """Marks the documents as locked by this thread for the call, so that a
    call for one of them from inside it fails at once (NestedError)
    instead of waiting for itself."""
    held = getattr(_held, "keys", None)
    if held is None:
        held = _held.keys = set()
    for k, s in zip(keys, shown):
        if k in held:
            raise NestedError("agentstate: %s %s: called while this thread holds the document's lock (inside a mutate function?)" % (op, s), s)
    held.update(keys)
    try:
        yield
    finally:
        held.difference_update(keys)
