"""One document: the lock, reads, writes and what they refuse."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from typing import List, Tuple
from unittest import mock

import agentstate
from agentstate import _bell, _lock
from helpers import SRC, HeldLock, TempDirTest, run_python


class MutateTest(TempDirTest):
    def test_mutate_creates_and_changes(self) -> None:
        p = self.path("ws", "registry.json")
        got = agentstate.mutate(p, lambda d: d.update(runs=1, status="queued"))
        self.assertEqual({"runs": 1, "status": "queued"}, got)
        self.assertEqual(b'{\n  "runs": 1,\n  "status": "queued"\n}\n', self.read(p))
        agentstate.mutate(p, lambda d: d.update(runs=d["runs"] + 1))
        self.assertEqual({"runs": 2, "status": "queued"}, agentstate.load(p))
        self.assertEqual(["registry.json", "registry.json.lock"], sorted(os.listdir(os.path.dirname(p))))

    def test_status_document(self) -> None:
        # A file named status.json follows Go's Status: its order, its types,
        # updated_at stamped on each change.
        p = self.path("ws", "status.json")
        got = agentstate.mutate(p, lambda d: d.update(runs=1, status="queued", extra=True))
        self.assertEqual(["runs", "status", "extra", "updated_at"], list(got))
        self.assertRegex(self.read(p).decode(), r'^\{\n  "status": "queued",\n  "updated_at": "[^"]+",\n  "runs": 1,\n  "extra": true\n\}\n$')
        with self.assertRaises(agentstate.InvalidArgument):
            agentstate.mutate(p, lambda d: d.update(runs="lots"))
        self.write(p, b'{"runs": "lots"}')
        with self.assertRaises(agentstate.CorruptError):
            agentstate.mutate(p, lambda d: None)
        self.assertEqual({"runs": "lots"}, agentstate.load(p, kind="json"))
        agentstate.mutate(p, lambda d: d.update(runs="n/a"), kind="json")

    def test_context_manager(self) -> None:
        p = self.path("doc.json")
        with agentstate.locked(p) as doc:
            doc["n"] = 1
        self.assertEqual({"n": 1}, agentstate.load(p))
        with self.assertRaises(KeyError), agentstate.locked(p) as doc:
            doc["n"] = 2
            raise KeyError("abort")
        self.assertEqual({"n": 1}, agentstate.load(p))

    def test_fn_error_writes_nothing_and_releases(self) -> None:
        p = self.path("doc.json")
        agentstate.mutate(p, lambda d: d.update(n=1))
        before = os.stat(p)

        def fail(d: agentstate.JSONObject) -> None:
            d["n"] = 2
            raise ValueError("no")

        with self.assertRaisesRegex(ValueError, "no"):
            agentstate.mutate(p, fail)
        self.assertEqual(before.st_ino, os.stat(p).st_ino)
        agentstate.mutate(p, lambda d: d.update(n=3), timeout=0)  # the lock is free at once
        self.assertEqual({"n": 3}, agentstate.load(p))
        self.assertEqual([], self.leftovers())

    def test_no_change_no_write(self) -> None:
        p = self.path("doc.json")
        self.write(p, b'{"a":  1.0, "b": [1,2]}')
        before = os.stat(p)
        agentstate.mutate(p, lambda d: d.update(a=1.0))
        self.assertEqual(before.st_ino, os.stat(p).st_ino)
        agentstate.mutate(self.path("missing.json"), lambda d: None)
        self.assertFalse(os.path.exists(self.path("missing.json")))

    def test_unknown_members_kept_byte_for_byte(self) -> None:
        p = self.path("doc.json")
        self.write(p, b'{"keep":[1, 2.50,"three"],  "nested": {"a": null}, "runs": 1, "big": 1e400, "n": 12345678901234567890123}')
        agentstate.mutate(p, lambda d: d.update(runs=2))
        self.assertEqual(
            b'{\n  "big": 1e400,\n  "keep": [1, 2.50,"three"],\n  "n": 12345678901234567890123,\n  "nested": {"a": null},\n  "runs": 2\n}\n',
            self.read(p),
        )

    def test_value_json_cannot_hold(self) -> None:
        p = self.path("doc.json")
        agentstate.mutate(p, lambda d: d.update(n=1))
        for bad in (float("nan"), {1: 2}, object(), "\ud800"):
            with self.subTest(bad=bad), self.assertRaises(agentstate.InvalidArgument):
                agentstate.mutate(p, lambda d: d.update(n=bad))
        self.assertEqual({"n": 1}, agentstate.load(p))
        self.assertEqual([], self.leftovers())

    def test_modes(self) -> None:
        p = self.path("doc.json")
        old = os.umask(0o002)
        self.addCleanup(os.umask, old)
        agentstate.mutate(p, lambda d: d.update(n=1), perm=0o664)
        self.assertEqual(0o664, stat.S_IMODE(os.stat(p).st_mode))
        os.chmod(p, 0o640)
        agentstate.mutate(p, lambda d: d.update(n=2))
        self.assertEqual(0o640, stat.S_IMODE(os.stat(p).st_mode))
        # A lock file made for an existing document gets its bits.
        q = self.path("other.json")
        self.write(q, b"{}", 0o660)
        agentstate.mutate(q, lambda d: d.update(n=1))
        self.assertEqual(0o660, stat.S_IMODE(os.stat(q + ".lock").st_mode))

    def test_corrupt_refused_untouched(self) -> None:
        p = self.path("doc.json")
        for data in (b"", b'{"a": 1', b'{"a": 1, "a": 2}', b'{"a": "\xff"}', b"null"):
            self.write(p, data)
            called = []
            with self.subTest(data=data), self.assertRaises(agentstate.CorruptError) as cm:
                agentstate.mutate(p, called.append)
            self.assertEqual([], called)
            self.assertEqual(data, self.read(p))
            self.assertIsInstance(cm.exception, ValueError)
            with self.assertRaises(agentstate.CorruptError):
                agentstate.load(p)

    def test_size_limit(self) -> None:
        p = self.path("doc.json")
        self.write(p, b'{"a": "' + b"x" * 100 + b'"}')
        with self.assertRaises(agentstate.TooLargeError):
            agentstate.mutate(p, lambda d: None, max_size=50)
        with self.assertRaises(agentstate.TooLargeError):
            agentstate.load(p, max_size=50)
        agentstate.mutate(p, lambda d: None, max_size=0)  # no limit

    def test_hostile_files_refused_without_blocking(self) -> None:
        target = self.path("target.json")
        self.write(target, b'{"secret": 1}')
        cases = {}
        p = self.path("link", "doc.json")
        os.symlink(target, p)
        cases["symlink"] = p
        p = self.path("fifo", "doc.json")
        os.mkfifo(p)
        cases["fifo"] = p
        p = self.path("dir", "doc.json")
        os.mkdir(p)
        cases["directory"] = p
        p = self.path("sock", "doc.json")
        s = socket.socket(socket.AF_UNIX)
        s.bind(p)
        self.addCleanup(s.close)
        cases["socket"] = p
        p = self.path("lockfifo", "doc.json")
        os.mkfifo(p + ".lock")
        cases["fifo lock file"] = p
        p = self.path("locklink", "doc.json")
        os.symlink(target, p + ".lock")
        cases["symlink lock file"] = p
        p = self.path("lockdir", "doc.json")
        os.mkdir(p + ".lock")
        cases["directory lock file"] = p
        p = self.path("locksock", "doc.json")
        s2 = socket.socket(socket.AF_UNIX)
        s2.bind(p + ".lock")
        self.addCleanup(s2.close)
        cases["socket lock file"] = p
        for name, p in cases.items():
            with self.subTest(name):
                with self.assertRaises(agentstate.NotRegularError) as cm:
                    agentstate.mutate(p, lambda d: d.update(owned=True), timeout=5)
                self.assertIn(p, str(cm.exception))
                self.assertIn(name.split()[0].replace("symlink", "symbolic link").replace("fifo", "named pipe"), str(cm.exception))
                if "lock" not in name:
                    with self.assertRaises(agentstate.NotRegularError):
                        agentstate.load(p)
        self.assertEqual(b'{"secret": 1}', self.read(target))

    def test_invalid_names(self) -> None:
        for p in ("", "dir/", "dir/.", "dir/.."):
            with self.subTest(p=p), self.assertRaises(agentstate.InvalidNameError):
                agentstate.mutate(p, lambda d: None)
        with self.assertRaises(agentstate.NameTooLongError) as cm:
            agentstate.mutate(self.path("x" * 252), lambda d: None)
        self.assertIsInstance(cm.exception, OSError)

    def test_dotdot_through_a_link(self) -> None:
        # "link/../doc.json" is the doc.json next to the link's target, as
        # the kernel resolves it: the lock must be that file's.
        real = self.path("a", "b", "x")
        os.makedirs(real)
        os.symlink(real, self.path("link"))
        agentstate.mutate(os.path.join(self.dir, "link", "..", "doc.json"), lambda d: d.update(n=1))
        self.assertTrue(os.path.exists(self.path("a", "b", "doc.json.lock")))
        self.assertEqual({"n": 1}, agentstate.load(self.path("a", "b", "doc.json")))


class LockTest(TempDirTest):
    def test_timeout(self) -> None:
        p = self.path("doc.json")
        held = HeldLock(p)
        self.addCleanup(held.release)
        start = time.monotonic()
        with self.assertRaises(agentstate.LockTimeout) as cm:
            agentstate.mutate(p, lambda d: d.update(n=1), timeout=0.2)
        self.assertIsInstance(cm.exception, TimeoutError)
        self.assertGreaterEqual(time.monotonic() - start, 0.2)
        with self.assertRaises(agentstate.LockTimeout):
            agentstate.mutate_all([p, self.path("other.json")], lambda ds: None, timeout=0)
        self.assertFalse(os.path.exists(p))
        held.release()
        agentstate.mutate(p, lambda d: d.update(n=1), timeout=0)

    def test_waits_for_a_release(self) -> None:
        p = self.path("doc.json")
        held = HeldLock(p)
        got = []
        t = threading.Thread(target=lambda: got.append(agentstate.mutate(p, lambda d: d.update(n=1), timeout=60)))
        t.start()
        self.assertEqual([], got)
        held.release()
        t.join()
        self.assertEqual([{"n": 1}], got)

    def test_threads_lose_nothing(self) -> None:
        # Each call opens its own descriptor: flock excludes the threads of
        # one process from each other too.
        p = self.path("doc.json")
        n, rounds = 8, 50

        def work() -> None:
            for _ in range(rounds):
                agentstate.mutate(p, lambda d: d.update(runs=d.get("runs", 0) + 1))

        threads = [threading.Thread(target=work) for _ in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(n * rounds, agentstate.load(p)["runs"])

    def test_nested_call_fails_at_once(self) -> None:
        p = self.path("doc.json")
        with self.assertRaises(agentstate.NestedError):
            agentstate.mutate(p, lambda d: agentstate.mutate(p, lambda e: None))
        with self.assertRaises(agentstate.NestedError), agentstate.transaction([p, self.path("b.json")]):
            agentstate.load_all([p])

    def test_lock_file_replaced_while_waiting(self) -> None:
        # A tool that deletes PATH.lock and makes a new one: the waiter must
        # not go on with a lock on the deleted file.
        p = self.path("doc.json")
        held = HeldLock(p)
        h = _lock.Handle(p, 0o644, "mutate", p)
        self.addCleanup(h.close)
        self.assertFalse(h.try_lock())
        os.unlink(p + ".lock")
        newcomer = HeldLock(p)  # a new lock file, held
        held.release()
        self.assertFalse(h.try_lock(), "took the lock of a deleted lock file")
        newcomer.release()
        self.assertTrue(h.try_lock())
        self.assertTrue(h.current())

    def test_permission_denied(self) -> None:
        # Another user may not write the document's directory.
        d = self.path("private")
        os.makedirs(d)
        p = os.path.join(d, "doc.json")
        self.write(p, b'{"n": 1}', 0o644)
        code = "import agentstate, sys\ntry:\n    agentstate.mutate(%r, lambda d: d.update(n=2))\nexcept agentstate.PermissionDenied as e:\n    print('denied', isinstance(e, PermissionError), e)\n" % p
        if os.geteuid() == 0:
            os.chmod(self.dir, 0o755)
            r = run_python(code, user=65534)
        else:
            os.chmod(d, 0o555)
            self.addCleanup(os.chmod, d, 0o755)
            r = run_python(code)
        self.assertIn("denied True", r.stdout, r.stderr)
        self.assertEqual({"n": 1}, agentstate.load(p))


class CreateRemoveTest(TempDirTest):
    def test_create(self) -> None:
        p = self.path("doc.json")
        agentstate.create(p, {"status": "queued"}, kind="status")
        self.assertEqual("queued", agentstate.load(p, kind="status")["status"])
        self.assertIn("updated_at", agentstate.load(p))  # stamped, as a status document
        with self.assertRaises(agentstate.ExistsError) as cm:
            agentstate.create(p, {"status": "running"})
        self.assertIsInstance(cm.exception, FileExistsError)
        self.assertEqual("queued", agentstate.load(p)["status"])
        q = self.path("empty.json")
        agentstate.create(q, {})
        self.assertEqual(b"{}\n", self.read(q))
        for data in (b"", b"{corrupt"):  # a document exists, even an empty or corrupt one
            self.write(q, data)
            with self.assertRaises(agentstate.ExistsError):
                agentstate.create(q, {"n": 1})
            self.assertEqual(data, self.read(q))

    def test_one_creator_wins(self) -> None:
        p = self.path("doc.json")
        wins = []

        def create(i: int) -> None:
            try:
                agentstate.create(p, {"winner": i})
                wins.append(i)
            except agentstate.ExistsError:
                pass

        threads = [threading.Thread(target=create, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(1, len(wins))
        self.assertEqual({"winner": wins[0]}, agentstate.load(p))

    def test_remove(self) -> None:
        p = self.path("doc.json")
        agentstate.mutate(p, lambda d: d.update(n=1))
        agentstate.remove(p)
        self.assertEqual([], os.listdir(self.dir))
        with self.assertRaises(agentstate.NotFoundError) as cm:
            agentstate.remove(p)
        self.assertIsInstance(cm.exception, FileNotFoundError)
        self.assertIsNone(agentstate.load_existing(p))
        self.assertEqual({}, agentstate.load(p))
        self.write(p, b"{corrupt")  # removed, as Go removes it
        agentstate.remove(p)
        self.assertEqual([], os.listdir(self.dir))


class WithoutFlockTest(TempDirTest):
    def test_reads_but_does_not_lock(self) -> None:
        # What Windows gets: lock-free reads; every call that locks refuses.
        p = self.path("doc.json")
        agentstate.mutate(p, lambda d: d.update(n=1))
        with mock.patch.object(_lock, "HAVE_FLOCK", False):
            self.assertEqual({"n": 1}, agentstate.load(p))
            for call in (lambda: agentstate.mutate(p, lambda d: None), lambda: agentstate.mutate_all([p], lambda ds: None),
                         lambda: agentstate.remove(p), lambda: agentstate.create(self.path("new.json"), {})):
                with self.assertRaises(agentstate.Unsupported):
                    call()
        self.assertEqual({"n": 1}, agentstate.load(p))


class TransitionTest(unittest.TestCase):
    def test_transition(self) -> None:
        d: agentstate.JSONObject = {"status": "queued"}
        agentstate.transition(d, "running", "queued")
        self.assertEqual("running", d["status"])
        with self.assertRaises(agentstate.TransitionConflict) as cm:
            agentstate.transition(d, "running", "queued")
        self.assertIsInstance(cm.exception, agentstate.ConflictError)
        self.assertEqual(("running", "running", ("queued",)), (cm.exception.current, cm.exception.want, cm.exception.from_states))
        agentstate.transition(d, "completed")
        with self.assertRaises(agentstate.TransitionConflict):
            agentstate.transition(d, "running")  # completed is final
        agentstate.transition(d, "queued", "completed")
        e: agentstate.JSONObject = {}
        agentstate.transition(e, "queued", "")  # no document yet
        self.assertEqual({"status": "queued"}, e)


class TempNameTest(unittest.TestCase):
    def test_temp_names_as_go(self) -> None:
        from agentstate._files import temp_name

        self.assertRegex(temp_name("status.json"), r"^\.status\.json\.[0-9a-f]{16}\.tmp$")
        long = "é" * 200
        name = temp_name(long)
        self.assertLessEqual(len(os.fsencode(name)), 255)
        self.assertTrue(re.match(r"^\.(é)+\.[0-9a-f]{16}\.tmp$", name))


if __name__ == "__main__":
    unittest.main()


MEMBER = 65534  # uid and gid of the second user (nobody, nogroup)

_WRITER = """
import json, sys, agentstate
from agentstate import _lock
if sys.argv[3] == "control":
    _lock._trusted = lambda *a: None
acked = failed = 0
first = ""
untrusted = False
for _ in range(int(sys.argv[2])):
    try:
        agentstate.mutate(sys.argv[1], lambda d: d.update(n=d.get("n", 0) + 1), timeout=30)
        acked += 1
    except agentstate.Error as e:
        failed += 1
        if not first:
            first, untrusted = str(e), isinstance(e, agentstate.UntrustedLockError)
print(json.dumps({"acked": acked, "failed": failed, "first": first, "untrusted": untrusted}))
"""

_LOOPS = {
    # A new file every millisecond: a writer that opens one and locks it
    # within that time finds it still named.
    "unlink and create": "import os, time\nwhile True:\n    try: os.unlink('doc.json.lock')\n    except OSError: pass\n"
                         "    os.close(os.open('doc.json.lock', os.O_CREAT | os.O_WRONLY, 0o644))\n    time.sleep(0.001)\n",
    "rename over": "import os\nwhile True:\n    os.close(os.open('l.new', os.O_CREAT | os.O_WRONLY, 0o644))\n    os.rename('l.new', 'doc.json.lock')\n",
}


@unittest.skipUnless(sys.platform.startswith("linux") and os.geteuid() == 0 and shutil.which("setpriv"), "needs root and setpriv: a second user plants the lock file")
class ForeignLockTest(TempDirTest):
    """A member of a sticky directory creates the lock file of root's
    document first and keeps replacing it with files of theirs. Root's
    writers, in processes of their own, must refuse it
    (UntrustedLockError, naming it) and lose nothing. The CONTROL takes the
    lock file whoever owns it, as before: every writer reports success and
    updates are lost. status/locktrust_linux_test.go runs the same against
    Go."""

    WRITERS, EACH = 4, 150

    def run_writers(self, loop: str, mode: str) -> Tuple[int, int, List[dict]]:
        ws = tempfile.mkdtemp(dir=self.dir)
        os.chmod(self.dir, 0o755)
        os.chmod(ws, 0o1777)
        doc = os.path.join(ws, "doc.json")
        self.write(doc, b'{"n": 0}')
        subprocess.run(["setpriv", "--reuid=%d" % MEMBER, "--regid=%d" % MEMBER, "--clear-groups", "sh", "-c", ": > doc.json.lock"], cwd=ws, check=True)
        member = subprocess.Popen(["setpriv", "--reuid=%d" % MEMBER, "--regid=%d" % MEMBER, "--clear-groups", sys.executable, "-c", loop],
                                  cwd=ws, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
            if not os.environ.get("AGENTSTATE_TESTS_INSTALLED"):
                env["PYTHONPATH"] = SRC
            writers = [subprocess.Popen([sys.executable, "-c", _WRITER, doc, str(self.EACH), mode], env=env, stdout=subprocess.PIPE, text=True)
                       for _ in range(self.WRITERS)]
            reports = [json.loads(w.communicate(timeout=300)[0]) for w in writers]
        finally:
            member.kill()
            member.wait()
        return sum(r["acked"] for r in reports), agentstate.load(doc)["n"], reports

    def test_foreign_lock_file_refused(self) -> None:
        for name, loop in _LOOPS.items():
            with self.subTest(name):
                acked, stored, reports = self.run_writers(loop, "checked")
                self.assertEqual(acked, stored, "%d acknowledged increments lost" % (acked - stored))
                for r in reports:
                    if r["failed"]:
                        self.assertTrue(r["untrusted"] and ".lock" in r["first"], r["first"])
                # Once a writer creates its own lock file in the instant the
                # name is missing, the member can no longer unlink it: a run
                # of the CONTROL may end before anything is lost. It runs
                # again, a few times at most.
                for _ in range(8):
                    cacked, cstored, _ = self.run_writers(loop, "control")
                    if cacked != cstored:
                        break
                self.assertNotEqual(cacked, cstored, "CONTROL: writers that take the member's lock file lost nothing")


# An error of a full disk or of too many open files names the file it
# failed on: the document itself, its lock file, a temp file, or in a
# commit the marker, new content, journal or directory of the step.
_NAMES_THE_FILE = re.compile(
    r"^agentstate: [a-z ]+ [^:]+: ((open lock file|(commit: )?(create|write|sync|rename)( temp file)? /[^:]+): )?"
    r"(Too many open files|No space left on device)$")


class ResourceErrorsTest(TempDirTest):
    def calls(self, d: str) -> List[Tuple[str, object]]:
        one, two = os.path.join(d, "a.json"), [os.path.join(d, "t1.json"), os.path.join(d, "t2.json")]
        agentstate.mutate(one, lambda x: x.update(a=1))
        agentstate.mutate_all(two, lambda ds: [x.update(a=1) for x in ds])
        big = "y" * 5000
        return [("mutate", lambda: agentstate.mutate(one, lambda x: x.update(b=big + str(time.time())))),
                ("mutate_all", lambda: agentstate.mutate_all(two, lambda ds: [x.update(b=big + str(time.time())) for x in ds]))]

    @unittest.skipUnless(sys.platform.startswith("linux") and os.geteuid() == 0, "needs root to mount a small tmpfs")
    def test_full_disk_names_the_file(self) -> None:
        d = self.path("full")
        os.makedirs(d)
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", d]).returncode != 0:
            self.skipTest("mount tmpfs failed")
        self.addCleanup(subprocess.run, ["umount", "-l", d])
        calls = self.calls(d)
        try:
            with open(os.path.join(d, "fill"), "wb") as f:
                f.write(b"x" * (1 << 20))
        except OSError:
            pass
        for name, call in calls:
            with self.subTest(name), self.assertRaises(agentstate.FileError) as cm:
                call()  # type: ignore[operator]
            self.assertRegex(str(cm.exception), _NAMES_THE_FILE)

    def test_too_many_open_files_names_the_file(self) -> None:
        import resource

        calls = self.calls(self.dir)
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        seen = []
        for n in range(len(os.listdir("/proc/self/fd")), 24):
            for name, call in calls:
                resource.setrlimit(resource.RLIMIT_NOFILE, (n, hard))
                try:
                    call()  # type: ignore[operator]
                except agentstate.FileError as e:
                    seen.append(str(e))
                finally:
                    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        self.assertGreater(len(seen), 4)
        for msg in seen:
            self.assertRegex(msg, _NAMES_THE_FILE)


def _bell_sleepers() -> int:
    """Threads of this process asleep in FUTEX_WAIT_BITSET (on a bell)."""
    n = 0
    for task in os.listdir("/proc/self/task"):
        try:
            with open("/proc/self/task/%s/syscall" % task) as f:
                fields = f.read().split()
        except OSError:
            continue
        if len(fields) > 2 and fields[0] == str(_bell._SYS_FUTEX.get(_bell._machine(), -1)) and fields[2] == "0x9":
            n += 1
    return n


@unittest.skipUnless(sys.platform.startswith("linux") and _bell._machine() in _bell._SYS_FUTEX, "the bell is Linux's futex")
class BellOrderTest(TempDirTest):
    """A waiter whose timeout passed sleeps again in a higher class: a ring
    wakes it before a newer waiter that went to sleep earlier in the
    kernel's queue, as Go's rings do (status/internal/flock,
    TestTimedOutWaiterKeepsItsPlace). The CONTROL rings any bit, as before
    the classes: the kernel's first sleeper, the newer waiter, wakes."""

    def test_ring_wakes_the_higher_class_first(self) -> None:
        for control in (False, True):
            with self.subTest(control=control):
                name = self.path("c%s" % control, "doc.json.lock")
                self.write(name, b"")
                fd = os.open(name, os.O_RDWR)
                self.addCleanup(os.close, fd)
                bell = _bell.open_bell(fd, name, grow=True)
                assert bell is not None
                self.addCleanup(bell.close)
                woke = {}

                def sleeper(who: str, timeouts: int) -> None:
                    woke[who] = bell.sleep(bell.word(), 30.0, 1 | _bell.class_bit(timeouts)) == _bell.RUNG

                newer = threading.Thread(target=sleeper, args=("newer", 0))
                newer.start()
                deadline = time.monotonic() + 30
                while _bell_sleepers() < 1 and time.monotonic() < deadline:
                    time.sleep(0.001)
                older = threading.Thread(target=sleeper, args=("older, after a timeout", 1))
                older.start()
                while _bell_sleepers() < 2 and time.monotonic() < deadline:
                    time.sleep(0.001)
                if control:
                    bell._wake(_bell._FUTEX_BITSET_ANY)
                else:
                    bell.ring()
                first = "newer" if control else "older, after a timeout"
                (newer if control else older).join(30)
                self.assertEqual({first: True}, woke)
                bell._wake(_bell._FUTEX_BITSET_ANY)  # the other one
                newer.join(30)
                older.join(30)
