"""The lock file's bell (Linux): a futex word in the first four bytes of
PATH.lock, in a shared mapping, as the Go package's doc describes (Waiting
for the lock). A release rings it as a Go release does: FUTEX_WAKE_BITSET
of one sleeper, class by class, on a read-only shared mapping of the lock
file, made through a descriptor of its own after checking that it is the
file locked; a release never writes or extends the file. A waiter sleeps on
it (FUTEX_WAIT_BITSET, with the bit of its class: see class_bit) in the
same queue as Go's waiters, after extending an empty lock file to four zero
bytes as they do; nobody writes the word.
Where the bell cannot be used (another system, an unknown processor, a
lock file that cannot be extended or mapped) a release does not ring and
a waiter polls."""

from __future__ import annotations

import errno
import os
import sys
import time
from typing import Any, Optional, Tuple

from . import _files

# The futex system call's number, per processor (Python does not export it).
# ctypes is imported when first needed (it takes milliseconds), not with
# the package.
_SYS_FUTEX = {
    "x86_64": 202,
    "aarch64": 98,
    "arm64": 98,
    "riscv64": 98,
    "loongarch64": 98,
    "ppc64le": 221,
    "ppc64": 221,
    "s390x": 238,
}

_FUTEX_WAIT_BITSET = 9
_FUTEX_WAKE_BITSET = 10
_FUTEX_BITSET_ANY = 0xFFFFFFFF

# A sleeper's bitset is a random one of the low INTERRUPT_BITS bits and the
# bit of its class (class_bit): how many of its timeouts have passed, at
# most CLASSES - 1. A ring wakes the sleeper that went to sleep first in
# the highest class that has one, as the Go package's rings do: each
# timeout puts a waiter back at the end of the kernel's queue, but in the
# next class, behind those who came before it and ahead of those who came
# after it, since every waiter's timeouts follow one schedule.
INTERRUPT_BITS = 24
CLASSES = 8


def class_bit(timeouts: int) -> int:
    """The bit of the class of a waiter whose timeouts so far are timeouts."""
    return 1 << (INTERRUPT_BITS + min(timeouts, CLASSES - 1))


_PROT_READ = 1
_MAP_SHARED = 1

# What a bell needs of the lock file: a first page, so a file not empty.
SIZE = 4

# The outcomes of a sleep.
TIMED_OUT = 0
RUNG = 1  # the bell rang, or its word is no longer the value slept on
BROKEN = 2  # the bell cannot be used (the file was truncated): poll

_libc: Any = None  # ctypes' libc, loaded on first use; False: no bell here


def _machine() -> str:
    if sys.platform == "win32":
        return ""
    return os.uname().machine


def _load() -> Any:
    global _libc
    if _libc is None:
        _libc = False
        if sys.platform == "linux" and _machine() in _SYS_FUTEX:
            try:
                import ctypes

                libc = ctypes.CDLL(None, use_errno=True)
                libc.mmap.restype = ctypes.c_void_p
                libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
                libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
                libc.syscall.restype = ctypes.c_long
                _libc = libc
            except (OSError, AttributeError, ImportError):
                pass
    return _libc


def preload(fd: int) -> None:
    """Loads ctypes (milliseconds) before a lock is taken if the lock file
    has a bell, so that the release that rings it, in the lock's critical
    path, does not wait for it."""
    if _libc is None:
        try:
            if os.fstat(fd).st_size > 0:
                _load()
        except OSError:
            pass


class Bell:
    """A read-only shared mapping of a lock file's first bytes."""

    __slots__ = ("addr", "fd", "id")

    def __init__(self, addr: int, fd: int, id: Tuple[int, int]) -> None:
        self.addr = addr
        self.fd = fd
        self.id = id  # the lock file's (st_dev, st_ino)

    def word(self) -> int:
        """The futex word, read with pread: a read through the mapping
        would crash the process if another truncated the file meanwhile."""
        if sys.platform == "win32":  # no bell there (_load)
            raise NotImplementedError
        try:
            b = os.pread(self.fd, SIZE, 0)
        except OSError:
            return 0
        return int.from_bytes(b.ljust(SIZE, b"\0"), sys.byteorder)

    def sleep(self, val: int, d: float, bit: int) -> int:
        """Sleeps until the bell rings or d seconds pass, unless the word
        is no longer val; a ring meant for the sleepers with bit wakes it."""
        if sys.platform == "win32":  # no bell there (_load)
            raise NotImplementedError
        import ctypes

        at = time.clock_gettime_ns(time.CLOCK_MONOTONIC) + int(d * 1e9)
        # FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC time.
        ts = (ctypes.c_long * 2)(at // 1_000_000_000, at % 1_000_000_000)
        r = _libc.syscall(
            ctypes.c_long(_SYS_FUTEX[_machine()]),
            ctypes.c_void_p(self.addr),
            ctypes.c_long(_FUTEX_WAIT_BITSET),
            ctypes.c_long(val),
            ctypes.byref(ts),
            ctypes.c_void_p(0),
            ctypes.c_long(bit),
        )
        if r == 0:
            return RUNG
        e = ctypes.get_errno()
        if e == errno.EAGAIN:
            return RUNG
        if e in (errno.ETIMEDOUT, errno.EINTR):
            return TIMED_OUT
        return BROKEN

    def ring(self) -> bool:
        """Wakes one sleeper: of the highest class that has one, the one
        that went to sleep first; or else the first of those that sleep
        without a class. Reports whether there was one."""
        for c in range(CLASSES - 1, -1, -1):
            if self._wake(1 << (INTERRUPT_BITS + c)):
                return True
        return self._wake(_FUTEX_BITSET_ANY)

    def _wake(self, bits: int) -> bool:
        import ctypes

        r: int = _libc.syscall(
            ctypes.c_long(_SYS_FUTEX[_machine()]),
            ctypes.c_void_p(self.addr),
            ctypes.c_long(_FUTEX_WAKE_BITSET),
            ctypes.c_long(1),
            ctypes.c_void_p(0),
            ctypes.c_void_p(0),
            ctypes.c_long(bits),
        )
        return r > 0

    def close(self) -> None:
        _libc.munmap(self.addr, SIZE)
        os.close(self.fd)


def open_bell(fd: int, name: str, grow: bool = False) -> Optional[Bell]:
    """Maps the bell of the lock file that fd has open, through a
    descriptor of its own (the flock belongs to fd's open file description,
    which must be released by its close). grow (a waiter) first extends an
    empty lock file to SIZE zero bytes; a releaser rings only a bell that a
    waiter made. None when there is no bell: an empty file (not extended),
    or one that cannot be mapped."""
    libc = _load()
    if not libc:
        return None
    try:
        st = os.fstat(fd)
        if st.st_size == 0:
            if not grow:
                return None
            os.ftruncate(fd, SIZE)
        bfd = os.open(name, os.O_RDONLY | _files.O_CLOEXEC | _files.O_NOFOLLOW | _files.O_NONBLOCK)
    except OSError:
        return None
    try:
        bst = os.fstat(bfd)
    except OSError:
        os.close(bfd)
        return None
    if (bst.st_dev, bst.st_ino) != (st.st_dev, st.st_ino):
        os.close(bfd)
        return None
    addr = libc.mmap(None, SIZE, _PROT_READ, _MAP_SHARED, bfd, 0)
    if addr is None or addr == (1 << (8 * _pointer_size())) - 1:  # MAP_FAILED
        os.close(bfd)
        return None
    return Bell(addr, bfd, (st.st_dev, st.st_ino))


def _pointer_size() -> int:
    import ctypes

    return ctypes.sizeof(ctypes.c_void_p)
