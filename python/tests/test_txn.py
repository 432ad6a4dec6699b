"""Transactions: the commit, a crash at every step of it, and the recovery
by the opening and trust rules. internal/proof/status runs the same
against the Go package, in both directions, with real SIGKILLs."""

from __future__ import annotations

import os
import threading
import unittest
from typing import Callable, List, Optional

import agentstate
from agentstate import _seams, _txn
from helpers import TempDirTest


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
        _seams.crash = lambda s: seen.append(s) is not None
        agentstate.mutate_all(paths, bump)
        _seams.crash = None
        return seen

    def crash_at(self, paths: List[str], step: str, fn: Callable[[List[agentstate.JSONObject]], None] = bump) -> None:
        _seams.crash = lambda s: s == step
        with self.assertRaises(_seams.Crashed):
            agentstate.mutate_all(paths, fn)
        _seams.crash = None

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
        _seams.crash = lambda s: seen.append(s) is not None
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
        _seams.skip_recovery = True
        agentstate.mutate(paths[1], lambda d: d.update(seq=7, basic=True))
        _seams.skip_recovery = False
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
        _seams.skip_recovery = True
        agentstate.mutate(paths[1], lambda d: d.update(seq=7))
        _seams.skip_recovery = False
        _seams.no_conflict_check = True
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

    def test_earlier_marker_format(self) -> None:
        # "J\n" only: recovered without the conflict check.
        paths = self.docs()
        self.crash_at(paths, "committed")
        for p in paths:
            m = self.read(p + ".txn")
            self.write(p + ".txn", m.split(b"\n")[0] + b"\n")
        self.assertEqual([1, 1], self.seqs(paths))
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
                    _seams.trust_any_owner = True  # control: the planted file is installed
                    self.assertEqual([1, 1], self.seqs(paths))

    def test_two_recoverers_leave_no_journal(self) -> None:
        # Each document of one transaction recovered by its own locker at
        # the same moment: the later to look removes the journal.
        paths = self.docs()
        self.crash_at(paths, "committed")
        done = threading.Event()

        def hook(event: str, name: str) -> None:
            if event == "cleanup" and name == paths[0]:
                _seams.hook = None
                t = threading.Thread(target=lambda: (agentstate.mutate(paths[1], lambda d: None), done.set()))
                t.start()
                t.join()

        _seams.hook = hook
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
        self.assertEqual((_txn.Marker(j, ""), False), _txn.parse_marker((j + "\n").encode()))
        self.assertEqual((_txn.Marker(j, "a" * 64), False), _txn.parse_marker((j + "\n" + "a" * 64 + "\n").encode()))
        for torn in (b"", b"/", b"/d/.txn-01"):
            self.assertEqual((None, True), _txn.parse_marker(torn))
        for bad in (b"x", (j + "\nnone").encode(), (j + "\nA" * 64 + "\n").encode(), (j + "\nnone\nx").encode(),
                    b"/d/x.journal\nnone\n", b"/d/../.txn-0123456789abcdef.journal\nnone\n"):
            self.assertEqual((None, False), _txn.parse_marker(bad))


if __name__ == "__main__":
    unittest.main()
