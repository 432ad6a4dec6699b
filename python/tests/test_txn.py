"""Transactions: the commit, a crash at every step of it, and the recovery
by the opening and trust rules. internal/proof/status runs the same
against the Go package, in both directions, with real SIGKILLs."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
import threading
import unittest
from typing import Callable, Iterator, List, Optional, Tuple
from unittest import mock

import agentstate
from agentstate import _txn
from helpers import TempDirTest


class Crashed(BaseException):
    """A commit stopped at a step, as if its process had died there."""


@contextlib.contextmanager
def stop_at(step: str) -> Iterator[None]:
    """Makes commits stop at step as their process's death would: raising
    Crashed, with every file left in place (no abort)."""

    def reached(s: str) -> None:
        if s == step:
            raise Crashed(s)

    with mock.patch.object(_txn, "_step", reached), mock.patch.object(_txn, "_abort", lambda *a: None):
        yield


@contextlib.contextmanager
def basic_client() -> Iterator[None]:
    """Makes lockers skip recovery, as a basic client (lock, read, replace,
    unlock) does."""
    with mock.patch.object(_txn, "recover", lambda *a: []):
        yield


def trusts_any_owner(d: _txn._Dir, role: str, name: str, st: os.stat_result, doc_uid: int) -> None:
    """The trust rule without its owner check (as in a directory without
    the sticky bit)."""
    sticky, d.sticky = d.sticky, False
    try:
        _TRUSTS(d, role, name, st, doc_uid)
    finally:
        d.sticky = sticky


_TRUSTS = _txn._Dir.trusts


def bump(docs: List[agentstate.JSONObject]) -> None:
    for d in docs:
        d["seq"] = d.get("seq", 0) + 1


class _Docs(TempDirTest):
    def docs(self, n: int = 2) -> List[str]:
        paths = [self.path("w%d" % i, "doc.json") for i in range(n)]
        for p in paths:
            agentstate.mutate(p, lambda d: d.update(seq=0, keep=[1, 2.50]))
        return paths

    def steps(self, n: int = 2) -> List[str]:
        seen: List[str] = []
        paths = self.docs(n)
        with mock.patch.object(_txn, "_step", seen.append):
            agentstate.mutate_all(paths, bump)
        return seen

    def crash_at(self, paths: List[str], step: str, fn: Callable[[List[agentstate.JSONObject]], None] = bump) -> None:
        with stop_at(step), self.assertRaises(Crashed):
            agentstate.mutate_all(paths, fn)

    def seqs(self, paths: List[str]) -> List[int]:
        return [d["seq"] for d in agentstate.load_all(paths)]


class TxTest(_Docs):
    def test_commit(self) -> None:
        paths = self.docs()
        got = agentstate.mutate_all(paths, bump)
        self.assertEqual([1, 1], [d["seq"] for d in got])
        self.assertEqual([1, 1], [agentstate.load(p)["seq"] for p in paths])
        self.assertEqual([], self.leftovers())
        # Unknown bytes kept, as by mutate.
        self.assertIn(b'"keep": [\n    1,\n    2.5\n  ]', self.read(paths[0]))

    def test_steps_as_go_names_them(self) -> None:
        self.assertEqual(
            ["marker 0", "temp 0", "marker 1", "temp 1", "prepared", "journal", "committed",
             "renamed 0", "renamed 1", "installed", "forgotten", "unmarked 0", "unmarked 1"],
            self.steps(2),
        )
        self.assertEqual(4 * 3 + 5, len(self.steps(3)))

    def test_one_change_is_a_plain_write(self) -> None:
        paths = self.docs()
        seen: List[str] = []
        with mock.patch.object(_txn, "_step", seen.append):
            agentstate.mutate_all(paths, lambda ds: ds[1].update(seq=5))
        self.assertEqual([], seen)
        self.assertEqual([0, 5], self.seqs(paths))

    def test_fn_error_writes_nothing(self) -> None:
        paths = self.docs()

        def fail(ds: List[agentstate.JSONObject]) -> None:
            bump(ds)
            raise RuntimeError("full")

        with self.assertRaisesRegex(RuntimeError, "full"):
            agentstate.mutate_all(paths, fail)
        with self.assertRaisesRegex(RuntimeError, "full"), agentstate.transaction(paths) as ds:
            bump(ds)
            raise RuntimeError("full")
        self.assertEqual([0, 0], self.seqs(paths))

    def test_crash_at_every_step(self) -> None:
        steps = self.steps(2)
        commit = steps.index("journal")
        for k, step in enumerate(steps):
            for first in ("load_all", "mutate 0", "mutate 1", "transaction"):
                with self.subTest(step=step, first=first):
                    self.setUp()
                    paths = self.docs()
                    self.crash_at(paths, step)
                    want = 1 if k >= commit else 0
                    if first == "load_all":
                        self.assertEqual([want, want], self.seqs(paths))
                    elif first == "transaction":
                        agentstate.mutate_all(paths, bump)
                        want += 1
                    else:
                        i = int(first[-1])
                        self.assertEqual(want, agentstate.mutate(paths[i], lambda d: None)["seq"])
                    self.assertEqual([want, want], self.seqs(paths))
                    self.assertEqual([], self.leftovers())

    def test_remove_completes_the_transaction(self) -> None:
        paths = self.docs()
        self.crash_at(paths, "committed")
        agentstate.remove(paths[0])
        self.assertFalse(os.path.exists(paths[0]))
        self.assertEqual(1, agentstate.load(paths[1])["seq"])
        self.assertEqual([], self.leftovers())

    def test_no_deadlock_in_either_order(self) -> None:
        a, b = self.docs()
        errors: List[BaseException] = []

        def run(order: List[str]) -> None:
            try:
                for _ in range(10):
                    agentstate.mutate_all(order, bump, timeout=60)
            except BaseException as e:
                errors.append(e)

        ts = [threading.Thread(target=run, args=(o,)) for o in ([a, b], [b, a], [a, b], [b, a])]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        self.assertEqual([], errors)
        self.assertEqual([40, 40], self.seqs([a, b]))

    def test_one_file_twice_refused(self) -> None:
        a, b = self.docs()
        with self.assertRaises(agentstate.InvalidArgument):
            agentstate.mutate_all([a, a], bump)
        os.symlink(os.path.dirname(a), self.path("alias"))
        with self.assertRaises(agentstate.InvalidArgument):  # one lock file, two names
            agentstate.mutate_all([a, os.path.join(self.dir, "alias", "doc.json")], bump)
        h = self.path("w0", "hard.json")
        os.link(a, h)
        with self.assertRaises(agentstate.InvalidArgument):  # two lock files, one document
            agentstate.mutate_all([a, h], bump)
        with self.assertRaises(agentstate.InvalidNameError):
            agentstate.mutate_all([a, self.path("new\nline.json")], bump)
        self.assertEqual([0, 0], self.seqs([a, b]))


class RecoveryTest(_Docs):
    def test_conflict_keeps_the_basic_clients_write(self) -> None:
        paths = self.docs()
        self.crash_at(paths, "committed")
        # A basic client (lock, read, replace, unlock; no recovery) writes
        # doc 1 after the commit point.
        with basic_client():
            agentstate.mutate(paths[1], lambda d: d.update(seq=7, basic=True))
        with self.assertRaises(agentstate.TxConflictError) as cm:
            agentstate.mutate(paths[1], lambda d: None)
        e = cm.exception
        self.assertIsInstance(e, agentstate.ConflictError)
        self.assertTrue(os.path.basename(e.copy).startswith("doc.json.conflict-"), e.copy)
        self.assertEqual({"seq": 1, "keep": [1, 2.5]}, agentstate.load(e.copy))
        self.assertIn(e.copy, str(e))
        self.assertEqual({"seq": 7, "keep": [1, 2.5], "basic": True}, agentstate.load(paths[1]))
        agentstate.mutate(paths[1], lambda d: None)  # a retry proceeds
        self.assertEqual([1, 7], self.seqs(paths))  # the other document holds the transaction's content
        os.unlink(e.copy)
        self.assertEqual([], self.leftovers())

    def test_conflict_control(self) -> None:
        # Without the check, recovery installs the copy over the basic
        # client's acknowledged write: it is lost.
        paths = self.docs()
        self.crash_at(paths, "committed")
        with basic_client():
            agentstate.mutate(paths[1], lambda d: d.update(seq=7))
        with mock.patch.object(_txn._Recovery, "_current", lambda r, *a: r.mk.before):
            self.assertEqual(1, agentstate.load_all(paths)[1]["seq"])

    def test_removed_document_is_a_conflict(self) -> None:
        paths = self.docs()
        self.crash_at(paths, "committed")
        os.unlink(paths[0])  # a basic client removed it
        with self.assertRaises(agentstate.TxConflictError):
            agentstate.load_all(paths)
        self.assertIsNone(agentstate.load_existing(paths[0]))

    def test_torn_marker_undoes(self) -> None:
        paths = self.docs()
        for content in (b"", b"/tmp/x/.txn-0123"):
            self.write(paths[0] + ".txn", content)
            self.write(paths[0] + ".txn.tmp", b'{"seq": 9}')
            self.assertEqual(0, agentstate.mutate(paths[0], lambda d: None)["seq"])
            self.assertEqual([], self.leftovers())

    def untrusted(self, paths: List[str], role: str) -> None:
        def snapshot() -> List[object]:
            return [self.read(p) if os.path.isfile(p) else os.lstat(p).st_mode for p in paths]

        before = snapshot()
        with self.assertRaises(agentstate.UntrustedError) as cm:
            agentstate.mutate(paths[0], lambda d: d.update(seq=99), timeout=5)
        self.assertEqual(role, cm.exception.role, cm.exception)
        self.assertEqual(before, snapshot())

    def test_untrusted_states_change_nothing(self) -> None:
        cases: List[tuple] = []  # type: ignore[type-arg]

        def case(name: str, role: str, plant: Callable[[List[str]], None], step: Optional[str] = "committed") -> None:
            cases.append((name, role, plant, step))

        case("fifo marker", "marker", lambda ps: os.mkfifo(ps[0] + ".txn"), None)
        case("symlink marker", "marker", lambda ps: (os.unlink(ps[0] + ".txn"), os.symlink(ps[1] + ".txn", ps[0] + ".txn")))
        case("hard-linked marker", "marker", lambda ps: os.link(ps[0] + ".txn", ps[0] + ".hardlink"))
        case("malformed marker", "marker", lambda ps: self.write(ps[0] + ".txn", b"not a path\nnone\n"), None)
        case("large marker", "marker", lambda ps: self.write(ps[0] + ".txn", b"/" * 5000), None)
        case("bad before", "marker", lambda ps: self.write(ps[0] + ".txn", self.read(ps[0] + ".txn").replace(b"\n", b"\nXYZ", 1)))
        case("fifo journal", "journal", lambda ps: self.replace_journal(ps, fifo=True))
        case("journal not listing", "journal", lambda ps: self.replace_journal(ps, b'{"documents": ["/nowhere/doc.json"]}'))
        case("journal not JSON", "journal", lambda ps: self.replace_journal(ps, b'{"documents": ['))
        case("journal extra member", "journal", lambda ps: self.replace_journal(ps, None, extra=True))
        case("fifo new content", "new content", lambda ps: (os.unlink(ps[0] + ".txn.tmp"), os.mkfifo(ps[0] + ".txn.tmp")))
        case("directory new content", "new content", lambda ps: (os.unlink(ps[0] + ".txn.tmp"), os.mkdir(ps[0] + ".txn.tmp")))
        case("fifo document", "document", lambda ps: (os.unlink(ps[0]), os.mkfifo(ps[0])))
        for name, role, plant, step in cases:
            with self.subTest(name):
                self.setUp()
                paths = self.docs()
                if step is not None:
                    self.crash_at(paths, step)
                plant(paths)
                self.untrusted(paths, role)

    def replace_journal(self, paths: List[str], data: Optional[bytes] = None, fifo: bool = False, extra: bool = False) -> None:
        j = self.read(paths[0] + ".txn").split(b"\n")[0].decode()
        if extra:
            data = self.read(j).replace(b'{"documents"', b'{"more": 1, "documents"')
        os.unlink(j)
        if fifo:
            os.mkfifo(j)
        else:
            assert data is not None
            self.write(j, data)

    def test_journal_matched_as_go_matches_fields(self) -> None:
        paths = self.docs()
        self.crash_at(paths, "committed")
        j = self.read(paths[0] + ".txn").split(b"\n")[0].decode()
        self.write(j, self.read(j).replace(b'"documents"', b'"Documents"'))
        self.assertEqual([1, 1], self.seqs(paths))

    @unittest.skipUnless(os.geteuid() == 0, "needs root: files owned by another user")
    def test_trust_rule(self) -> None:
        other = 65534
        # A sticky directory (like /tmp): another user's marker next to
        # root's document is refused...
        for sticky, trusted in ((True, False), (False, True)):
            with self.subTest(sticky=sticky):
                self.setUp()
                paths = self.docs()
                os.chmod(os.path.dirname(paths[0]), 0o1777 if sticky else 0o777)
                self.crash_at(paths, "committed")
                os.chown(paths[0] + ".txn", other, other)
                os.chown(paths[0] + ".txn.tmp", other, other)
                if trusted:
                    # ... but in a directory without the sticky bit (a group
                    # workspace) whoever could plant it could replace the
                    # document anyway: it is recovered.
                    self.assertEqual([1, 1], self.seqs(paths))
                else:
                    self.untrusted(paths, "marker")
                    with mock.patch.object(_txn._Dir, "trusts", trusts_any_owner):  # control: the planted file is installed
                        self.assertEqual([1, 1], self.seqs(paths))

    def test_two_recoverers_leave_no_journal(self) -> None:
        # Each document of one transaction recovered by its own locker at
        # the same moment: the later to look removes the journal.
        paths = self.docs()
        self.crash_at(paths, "committed")
        done = threading.Event()

        fired = False

        def looked(name: str) -> None:
            nonlocal fired
            if name == paths[0] and not fired:
                fired = True
                t = threading.Thread(target=lambda: (agentstate.mutate(paths[1], lambda d: None), done.set()))
                t.start()
                t.join()

        with mock.patch.object(_txn, "_looked", looked):
            agentstate.mutate(paths[0], lambda d: None)
        self.assertTrue(done.is_set())
        self.assertEqual([], self.leftovers())
        self.assertEqual([1, 1], self.seqs(paths))

    def test_parse_journal_as_go(self) -> None:
        self.assertEqual(["/a/b"], _txn.parse_journal(b' {"documents": ["/a/b"]} \n'))
        self.assertEqual(["/a/b"], _txn.parse_journal(b'{"DOCUMENTS": ["/x"], "documents": ["/a/b"]}'))
        for bad in (b"null", b"[]", b'{"documents": []}', b'{"documents": null}', b'{"documents": ["/a", "/a"]}',
                    b'{"documents": ["a"]}', b'{"documents": ["/a/../b"]}', b'{"documents": ["/a"]} x',
                    b'{"documents": [1]}', b'{"docs": ["/a"]}', b'{"documents": ["/\xff"]}'):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                _txn.parse_journal(bad)

    def test_parse_marker_as_go(self) -> None:
        j = "/d/.txn-0123456789abcdef.journal"
        self.assertEqual((_txn.Marker(j, "none"), False), _txn.parse_marker((j + "\nnone\n").encode()))
        self.assertEqual((_txn.Marker(j, "a" * 64), False), _txn.parse_marker((j + "\n" + "a" * 64 + "\n").encode()))
        for torn in (b"", b"/", b"/d/.txn-01"):
            self.assertEqual((None, True), _txn.parse_marker(torn))
        for bad in (b"x", (j + "\n").encode(), (j + "\nnone").encode(), (j + "\nA" * 64 + "\n").encode(), (j + "\nnone\nx").encode(),
                    b"/d/x.journal\nnone\n", b"/d/../.txn-0123456789abcdef.journal\nnone\n"):
            self.assertEqual((None, False), _txn.parse_marker(bad))


if __name__ == "__main__":
    unittest.main()


def _deep_dir(root: str, n: int) -> str:
    """A directory under root whose path is exactly n bytes long, of names
    of at most 200 bytes."""
    d = root
    while len(d) < n:
        k = min(200, n - len(d) - 1)
        if 0 < n - len(d) - 1 - k < 2:
            k -= 1  # leave room for one more "/x"
        d += "/" + "d" * k
    assert len(d) == n
    os.makedirs(d, exist_ok=True)
    return d


def limit_shape(root: str, shape: str, over: bool) -> List[str]:
    """Makes the documents of a transaction at one of the limits, or one
    past it, and returns their paths: "documents" (1024), "journal" (a
    journal of exactly 1 MiB), "marker" (markers of exactly 4 KiB: a
    document's hash and a journal in a directory of 4000 bytes). As
    status/txn_limits_unix_test.go makes them."""
    extra = 1 if over else 0
    if shape == "documents":
        docs = [os.path.join(root, "doc-%04d.json" % i) for i in range(_txn.MAX_DOCUMENTS + extra)]
    elif shape == "journal":
        n = 400
        d = _deep_dir(root, 2450)
        names = _txn.MAX_JOURNAL + extra - (17 + n * (len(d) + 1 + 2) + n - 1)
        docs = []
        for i in range(n):
            k = names // (n - i)
            names -= k
            docs.append(d + "/%04d" % i + "x" * (k - 4))
    else:
        d = _deep_dir(root, 4000 + extra)
        docs = [d + "/a.json", d + "/b.json"]
    for p in docs:
        with open(p, "w") as f:
            f.write('{"seq": 0}')
    return docs


class TxLimitsTest(TempDirTest):
    """A commit must stay within what its recovery accepts: at each limit it
    commits; one past it mutate_all raises TxTooLargeError and writes
    nothing. test_past_limit_sigkill shows what the refusal prevents."""

    def seqs(self, paths: List[str]) -> List[int]:
        return [agentstate.load(p).get("seq", 0) for p in paths]

    def root(self, name: str) -> str:
        """A new directory for one case: in /dev/shm where there is one,
        where thousands of syncs cost nothing (these tests are about what is
        written, not about its durability)."""
        try:
            base = tempfile.mkdtemp(prefix="agentstate-limits-", dir="/dev/shm")
        except OSError:
            base = self.dir
        else:
            self.addCleanup(shutil.rmtree, base, True)
        root = os.path.join(base, name)
        os.mkdir(root)
        return root

    def test_limits(self) -> None:
        for shape in ("documents", "journal", "marker"):
            for over in (False, True):
                with self.subTest(shape=shape, over=over):
                    root = self.root("%s-%s" % (shape, over))
                    docs = limit_shape(root, shape, over)
                    if over:
                        with self.assertRaises(agentstate.TxTooLargeError) as cm:
                            agentstate.mutate_all(docs, bump)
                        self.assertIn("limit", str(cm.exception))
                        self.assertEqual([0] * len(docs), self.seqs(docs))
                    else:
                        agentstate.mutate_all(docs, bump)
                        self.assertEqual([1] * len(docs), self.seqs(docs))
                    self.assertEqual([], [f for f in os.listdir(os.path.dirname(docs[0])) if ".txn" in f])

    def test_new_content_limit(self) -> None:
        limit = 200
        pad = limit - len('{\n  "pad": "",\n  "seq": 1\n}\n')
        for over in (False, True):
            with self.subTest(over=over):
                docs = [self.path("nc-%s" % over, n) for n in ("a.json", "b.json")]
                n = pad + (1 if over else 0)

                def fill(ds: List[agentstate.JSONObject]) -> None:
                    for d in ds:
                        d.update(seq=1, pad="p" * n)

                if over:
                    with self.assertRaises(agentstate.TxTooLargeError):
                        agentstate.mutate_all(docs, fill, max_size=limit)
                    self.assertFalse(any(os.path.exists(d) for d in docs))
                else:
                    agentstate.mutate_all(docs, fill, max_size=limit)
                    self.assertEqual([limit, limit], [os.path.getsize(d) for d in docs])

    def test_past_limit_sigkill(self) -> None:
        """One past each limit, a committing child is SIGKILLed at its commit
        point (if it reaches it); then every document must be usable. The
        CONTROL switches the writer's check off: the child commits, dies,
        and leaves documents that every locker refuses (UntrustedError)."""
        from helpers import run_python

        child = (
            "import os, signal, sys, agentstate\n"
            "from agentstate import _txn\n"
            "if sys.argv[2] == 'control':\n"
            "    _txn.check_limits = lambda *a: None\n"
            "_txn._step = lambda s: s == 'committed' and os.kill(os.getpid(), signal.SIGKILL)\n"
            "docs = open(sys.argv[1]).read().split('\\n')\n"
            "try:\n"
            "    agentstate.mutate_all(docs, lambda ds: [d.update(seq=1) for d in ds])\n"
            "except agentstate.TxTooLargeError:\n"
            "    print('refused')\n"
        )
        for shape in ("documents", "journal", "marker"):
            for mode in ("checked", "control"):
                with self.subTest(shape=shape, mode=mode):
                    root = self.root("%s-%s" % (shape, mode))
                    docs = limit_shape(root, shape, True)
                    listing = os.path.join(self.dir, "%s-%s.list" % (shape, mode))
                    with open(listing, "w") as f:
                        f.write("\n".join(docs))
                    r = run_python(child.replace("sys.argv[1]", repr(listing)).replace("sys.argv[2]", repr(mode)))
                    blocked = applied = 0
                    for d in docs:
                        try:
                            if agentstate.mutate(d, lambda doc: None).get("seq") == 1:
                                applied += 1
                        except agentstate.UntrustedError:
                            blocked += 1
                    if mode == "control":
                        self.assertEqual(-9, r.returncode, r.stderr)
                        self.assertGreater(blocked, 0, "CONTROL: the unchecked commit killed after its commit point blocked no document")
                    else:
                        self.assertEqual("refused\n", r.stdout, r.stderr)
                        self.assertEqual((0, 0), (blocked, applied))


MEMBER = 65534  # uid and gid of the second user (nobody, nogroup)


def as_member(cwd: str, script: str, *args: str) -> None:
    """Runs sh -c script as the member in cwd; args are $1, $2..."""
    import subprocess

    subprocess.run(["setpriv", "--reuid=%d" % MEMBER, "--regid=%d" % MEMBER, "--clear-groups", "sh", "-c", script, "sh"] + list(args),
                   cwd=cwd, check=True, capture_output=True, timeout=60)


class _PathDir:
    """The CONTROL's recovery directory: files reached by path again, as
    before, and any journal directory its name matches."""

    def stat(self, base: str, role: str) -> Optional[os.stat_result]:
        return _txn._lstat(self.path(base), role)  # type: ignore[attr-defined]

    def open(self, role: str, base: str, limit: int) -> "_txn._File":
        return _txn.open_path(role, self.path(base), limit)  # type: ignore[attr-defined]

    def unlink(self, base: str, role: str, missing_ok: bool = False) -> None:
        try:
            os.unlink(self.path(base))  # type: ignore[attr-defined]
        except FileNotFoundError:
            if not missing_ok:
                raise


@unittest.skipUnless(sys.platform.startswith("linux") and os.geteuid() == 0 and shutil.which("setpriv"), "needs root and setpriv: a second user flips a link")
class RaceTest(TempDirTest):
    """A member of a group workspace plants a marker on root's document
    naming a journal reached through a link of theirs, and flips the link
    between their own directory (a journal of theirs lists the document)
    and a directory only root may enter, where root's crashed transaction,
    one of its two documents installed, keeps a journal of the same name.
    Recovery must act only in the directory it checked: root's directory is
    never changed and root's transaction completes whole. The CONTROL
    reaches the files by path again, as before: a flip between the check
    and the removal deletes root's journal and tears root's transaction.
    status/txn_race_linux_test.go runs the same against Go."""

    ROUNDS = 300

    def run_rounds(self, by_path: bool) -> Tuple[int, bool, int]:
        import subprocess
        from unittest import mock

        base = tempfile.mkdtemp(dir=self.dir)
        os.chmod(self.dir, 0o755)
        os.chmod(base, 0o755)
        priv = os.path.join(base, "priv")
        os.mkdir(priv, 0o700)
        a, b = os.path.join(priv, "a.json"), os.path.join(priv, "b.json")
        for p in (a, b):
            self.write(p, b'{"n": 0}', 0o600)
        with stop_at("renamed 0"), self.assertRaises(Crashed):  # a installed, b not yet
            agentstate.mutate_all([a, b], lambda ds: [d.update(n=1) for d in ds])
        victims = [f for f in os.listdir(priv) if _txn.is_journal_name(f)]
        self.assertEqual(1, len(victims))
        victim = os.path.join(priv, victims[0])
        before = sorted((f, os.lstat(os.path.join(priv, f)).st_ino, os.lstat(os.path.join(priv, f)).st_ctime_ns) for f in os.listdir(priv))

        ws = os.path.join(base, "ws")
        os.mkdir(ws)
        os.chown(ws, 0, MEMBER)
        os.chmod(ws, 0o2775)
        doc = os.path.join(ws, "doc.json")
        self.write(doc, b'{"runs": 1}', 0o664)
        mdir, link = os.path.join(ws, "member"), os.path.join(ws, "member", "link")
        as_member(ws, 'mkdir member && ln -s "$1" member/link', mdir)
        named = os.path.join(link, victims[0])
        flipper = subprocess.Popen(
            ["setpriv", "--reuid=%d" % MEMBER, "--regid=%d" % MEMBER, "--clear-groups", "sh", "-c",
             'while :; do ln -sfn "$1" link.new && mv -Tf link.new link; ln -sfn "$2" link.new && mv -Tf link.new link; done', "sh", priv, mdir],
            cwd=mdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(flipper.wait)
        self.addCleanup(flipper.kill)
        journal = '{"documents": [%s, %s]}' % (json.dumps(os.path.join(link, "x.json")), json.dumps(doc))
        marker = "%s\n%s\n" % (named, _txn.before(self.read(doc)))
        lost = rounds = 0
        with contextlib.ExitStack() as patches:
            if by_path:
                for name in ("stat", "open", "unlink"):
                    patches.enter_context(mock.patch.object(_txn._Dir, name, getattr(_PathDir, name)))
                patches.enter_context(mock.patch.object(_txn._Recovery, "_in_journal_dir", lambda r, d: os.path.dirname(d) == r.jd.name))
            for rounds in range(1, self.ROUNDS + 1):
                as_member(ws, '[ -e "$1" ] || printf "%s" "$2" > "$1"; printf "%s" "$3" > doc.json.txn',
                          os.path.join(mdir, victims[0]), journal, marker)
                try:
                    agentstate.mutate(doc, lambda d: None)
                except agentstate.Error:
                    pass
                if not os.path.lexists(victim):
                    lost += 1
                    break
        flipper.kill()
        if not by_path:
            after = sorted((f, os.lstat(os.path.join(priv, f)).st_ino, os.lstat(os.path.join(priv, f)).st_ctime_ns) for f in os.listdir(priv))
            self.assertEqual(before, after, "root's directory changed")
        na, nb = [d["n"] for d in agentstate.load_all([a, b])]
        return lost, na != nb, rounds

    def test_recovery_acts_in_the_directory_it_checked(self) -> None:
        lost, torn, _ = self.run_rounds(False)
        control, ctorn, _ = self.run_rounds(True)
        self.assertEqual((0, False), (lost, torn), "recovery acted outside the directory it checked")
        self.assertTrue(control > 0 and ctorn, "CONTROL: recovery by path never deleted root's journal: the harness cannot see it")
