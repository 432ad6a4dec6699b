"""Shared by the tests: temp directories, and a lock held from outside."""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from typing import Dict, List, Optional

import agentstate

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")


class TempDirTest(unittest.TestCase):
    """A test with its own directory."""

    def setUp(self) -> None:
        self.fds_before = _open_fds()
        self.addCleanup(self._check_fds)  # runs last: after the test's own cleanups
        self.dir = os.path.realpath(tempfile.mkdtemp(prefix="agentstate-test-"))
        self.addCleanup(shutil.rmtree, self.dir, True)

    def _check_fds(self) -> None:
        leaked = _open_fds() - self.fds_before
        self.assertEqual(set(), leaked, "file descriptors left open")

    def path(self, *parts: str) -> str:
        p = os.path.join(self.dir, *parts)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        return p

    def write(self, path: str, data: bytes, mode: int = 0o644) -> None:
        with open(path, "wb") as f:
            f.write(data)
        os.chmod(path, mode)

    def read(self, path: str) -> bytes:
        with open(path, "rb") as f:
            return f.read()

    def leftovers(self) -> List[str]:
        """Transaction files and temp files left anywhere in the tree. The
        temp file of a journal that was never renamed into place is not
        one: like every temp file of an interrupted write, it is garbage
        that corestate sweep removes, and no recovery looks at it."""
        found = []
        for root, _, files in os.walk(self.dir):
            for f in files:
                if f.endswith((".txn", ".txn.tmp", ".journal", ".tmp")) and not re.fullmatch(r"\.\.txn-[0-9a-f]{16}\.journal\.[0-9a-f]{16}\.tmp", f):
                    found.append(os.path.join(root, f))
        return sorted(found)


def _open_fds() -> set:  # type: ignore[type-arg]
    try:
        return set(os.listdir("/proc/self/fd"))
    except OSError:
        return set()


class HeldLock:
    """A flock on PATH.lock taken the way another process would (a fresh
    descriptor of its own)."""

    def __init__(self, path: str) -> None:
        self.fd = os.open(path + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def run_python(code: str, env: Optional[Dict[str, str]] = None, user: Optional[int] = None) -> subprocess.CompletedProcess:  # type: ignore[type-arg]
    """Runs code in another python3 with this package importable; as uid
    user (through setpriv, as root) if given.

    That user may not be able to enter the checkout, or the directory of a
    venv (a clone in a private directory, as CI's): it gets a copy of the
    package under test in a directory it can read, and runs it there with
    an interpreter it can reach (_interpreter_for_others)."""
    cmd = [sys.executable, "-c", code]
    cwd = None
    e = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    if not os.environ.get("AGENTSTATE_TESTS_INSTALLED"):
        e["PYTHONPATH"] = SRC
    if user is not None:
        cwd = _readable_copy_of_package()
        e["PYTHONPATH"] = cwd
        cmd = ["setpriv", "--reuid=%d" % user, "--regid=%d" % user, "--clear-groups", _interpreter_for_others(), "-c", code]
    e.update(env or {})
    try:
        return subprocess.run(cmd, cwd=cwd, env=e, capture_output=True, text=True, timeout=120)
    finally:
        if cwd is not None:
            shutil.rmtree(cwd, True)


def _interpreter_for_others() -> str:
    """The interpreter running the tests (a venv's links resolved) if every
    user may reach it, else the system's: one installed in root's home
    (pyenv) is not another user's to run."""
    for python in (os.path.realpath(sys.executable), "/usr/bin/python3"):
        d, reachable = python, True
        while reachable and d != "/":
            reachable = os.path.exists(d) and bool(os.stat(d).st_mode & 0o001)
            d = os.path.dirname(d)
        if reachable:
            return python
    raise unittest.SkipTest("no python3 that another user may run: %s is not reachable, and there is no /usr/bin/python3" % os.path.realpath(sys.executable))


def _readable_copy_of_package() -> str:
    """A new directory every user may read, holding a copy of the agentstate
    package this process imported (from the source tree or installed)."""
    d = tempfile.mkdtemp(prefix="agentstate-pkg-")
    shutil.copytree(os.path.dirname(agentstate.__file__), os.path.join(d, "agentstate"), ignore=shutil.ignore_patterns("__pycache__"))
    for root, _, files in os.walk(d):
        os.chmod(root, 0o755)
        for name in files:
            os.chmod(os.path.join(root, name), 0o644)
    return d
