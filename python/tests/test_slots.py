"""Registries of slots (agentstate.slots) by the rules of docs/PROTOCOL.md
(Registries of slots): admission, refusals that write nothing, the owner's
hand-over, and reaping of killed owners, against real processes.
internal/proof/slots runs Python, Go and corestate on one registry."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import unittest
from typing import Any, Callable, Dict, List, Tuple, TypeVar

import agentstate
from agentstate import claim, slots
from agentstate.claim import Liveness, Owner
from helpers import SRC, TempDirTest

LINUX = sys.platform.startswith("linux")
OTHER = Owner(host="elsewhere", boot="b", pidns=1, pid=7, start=9)


T = TypeVar("T")


def at_once(fn: Callable[[], T], n: int) -> List[T]:
    """Runs fn in n threads at once and returns their results."""
    results: List[T] = []
    lock = threading.Lock()

    def run() -> None:
        r = fn()
        with lock:
            results.append(r)

    ts = [threading.Thread(target=run) for _ in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return results


def python(code: str) -> "subprocess.Popen[str]":
    """Starts code in another python3 that imports this package, talking
    in lines on its stdout."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    if not os.environ.get("AGENTSTATE_TESTS_INSTALLED"):
        env["PYTHONPATH"] = SRC
    return subprocess.Popen([sys.executable, "-c", code], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)


class _Registry(TempDirTest):
    def setUp(self) -> None:
        super().setUp()
        self.reg = self.path("fleet", "AGENT_REGISTRY.json")
        self.task = self.path("fleet", "acme", "fix-42", "status.json")
        agentstate.create(self.reg, {"max_concurrent": 2, "max_depth": 1})
        agentstate.create(self.task, {"status": "queued"})

    def status(self) -> str:
        return str(agentstate.load(self.task)["status"])

    def agents(self) -> List[Dict[str, Any]]:
        return list(agentstate.load(self.reg).get("agents") or [])

    def snapshot(self) -> Tuple[bytes, int, bytes, int]:
        return self.read(self.reg), os.stat(self.reg).st_ino, self.read(self.task), os.stat(self.task).st_ino

    def assertUnchanged(self, before: Tuple[bytes, int, bytes, int]) -> None:
        self.assertEqual(before, self.snapshot(), "a refusal wrote")
        self.assertEqual([], self.leftovers())


class ReserveTest(_Registry):
    def test_reserve_records_the_slot_with_its_task(self) -> None:
        s = slots.reserve(self.reg, slots.transition(self.task, "running", "queued"), key="acme/fix-42",
                          resources={"prompt": "/tmp/p.md"}, members={"type": "reviewer"})
        self.assertEqual(claim.self_owner(), s.owner)
        self.assertRegex(s.id, "^[0-9a-f]{16}$")
        self.assertEqual((["acme/fix-42/status.json"], 0, ""), (s.docs, s.depth, s.adopted_at))
        self.assertEqual("running", self.status())
        doc = agentstate.load(self.reg)
        self.assertEqual((1, 1), (doc["active_count"], doc["total_spawned"]))
        a = doc["agents"][0]
        self.assertEqual(["id", "key", "depth", "owner", "reserved_at", "docs", "resources", "type"], list(a))
        self.assertEqual(s.reserved_at, a["reserved_at"])
        self.assertRegex(s.reserved_at, r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z$")
        self.assertEqual([s], [x.slot for x in slots.list(self.reg)])

    def test_layout(self) -> None:
        # The registry's members in Go's Registry order, then the others
        # sorted; a slot's declared members in order, empty ones left out;
        # the program's members kept as read (re-indented), the counts
        # written from the slots.
        self.write(self.reg, b'{"zeta": [1,  2.50], "max_concurrent": 3, "active_count": 7, "agents": [\n'
                             b'  {"id": "a", "depth": 0, "owner": {"pid": 1, "host": "h"}, "reserved_at": "2026-11-30T09:14:03.118220+00:00",'
                             b' "z": {"x":1.50, "y" : "\\u00e9<"}, "b": null}]}')
        agentstate.mutate(self.reg, lambda d: d.update(max_depth=1))
        slots.reserve(self.reg, id="b", key="k", parent="a", owner=OTHER, members={"m": [1]}, resources={"z": "1", "a": "2"})
        got = self.read(self.reg).decode()
        reserved_at = agentstate.load(self.reg)["agents"][1]["reserved_at"]
        want = """{
  "agents": [
    {
      "id": "a",
      "depth": 0,
      "owner": {
        "host": "h",
        "pid": 1
      },
      "reserved_at": "2026-11-30T09:14:03.11822Z",
      "b": null,
      "z": {
        "x": 1.50,
        "y": "\\u00e9<"
      }
    },
    {
      "id": "b",
      "key": "k",
      "parent": "a",
      "depth": 1,
      "owner": {
        "host": "elsewhere",
        "boot": "b",
        "pidns": 1,
        "pid": 7,
        "start": 9
      },
      "reserved_at": "%s",
      "resources": {
        "a": "2",
        "z": "1"
      },
      "m": [
        1
      ]
    }
  ],
  "active_count": 2,
  "total_spawned": 2,
  "max_concurrent": 3,
  "max_depth": 1,
  "zeta": [1,  2.50]
}
""" % reserved_at
        self.assertEqual(want, got)

    def test_retried_spawn_gets_its_slot(self) -> None:
        first = slots.reserve(self.reg, slots.transition(self.task, "running", "queued"), key="acme/fix-42")
        before = self.snapshot()
        with self.assertRaises(slots.Exists) as e:
            slots.reserve(self.reg, slots.transition(self.task, "running", "queued"), key="acme/fix-42")
        self.assertEqual(first, e.exception.slot)
        with self.assertRaises(slots.Exists) as e:
            slots.reserve(self.reg, id=first.id)
        self.assertEqual(first, e.exception.slot)
        self.assertUnchanged(before)

    def _race(self, spawn: Callable[[], bool], n: int) -> int:
        """Runs spawn in n threads at once; the number told "new slot"."""
        return sum(at_once(spawn, n))

    def test_retried_spawn_at_once_threads(self) -> None:
        def spawn() -> bool:
            try:
                slots.reserve(self.reg, key="k")
                return True
            except slots.Exists:
                return False

        self.assertEqual(1, self._race(spawn, 8))
        doc = agentstate.load(self.reg)
        self.assertEqual((1, 1, ["k"]), (doc["active_count"], doc["total_spawned"], [a["key"] for a in doc["agents"]]))

    def test_retried_spawn_at_once_control(self) -> None:
        # CONTROL: a bare read-modify-write registration, without the lock.
        # Two spawners that both read before either writes both start an
        # agent for one key; the harness above counts them.
        both_read = threading.Barrier(2)

        def spawn() -> bool:
            doc = agentstate.load(self.reg)
            if any(a.get("key") == "k" for a in doc.get("agents") or []):
                return False
            both_read.wait()
            doc.setdefault("agents", []).append({"id": os.urandom(8).hex(), "key": "k"})
            doc["active_count"] = len(doc["agents"])
            with open(self.reg, "w") as f:
                json.dump(doc, f)
            return True

        self.assertEqual(2, self._race(spawn, 2))

    def test_retried_spawn_at_once_processes(self) -> None:
        code = ("from agentstate import slots\ntry:\n    s = slots.reserve(%r, key='k')\n    print('new', s.id)\n"
                "except slots.Exists as e:\n    print('exists', e.slot.id)\n") % self.reg
        ps = [python(code) for _ in range(4)]
        outs = [p.communicate()[0].split() for p in ps]
        self.assertEqual([0] * 4, [p.returncode for p in ps])
        self.assertEqual(1, [o[0] for o in outs].count("new"), outs)
        self.assertEqual(1, len({o[1] for o in outs}), outs)
        self.assertEqual(1, len(self.agents()))

    def test_policy(self) -> None:
        root = slots.reserve(self.reg, owner=OTHER)
        child = slots.reserve(self.reg, parent=root.id, owner=OTHER)
        self.assertEqual((1, root.id), (child.depth, child.parent))
        before = self.snapshot()
        for exc, kw in [(slots.TooDeep, {"parent": child.id}), (slots.NoParent, {"parent": "gone"}), (slots.Full, {})]:
            with self.subTest(exc.__name__), self.assertRaises(exc) as e:
                slots.reserve(self.reg, slots.transition(self.task, "running", "queued"), **kw)
            self.assertIsInstance(e.exception, slots.Refused)
            self.assertIsInstance(e.exception, agentstate.Error)
            self.assertUnchanged(before)
        # The order of the checks: no parent before too deep before full.
        with self.assertRaises(slots.NoParent):
            slots.reserve(self.reg, parent="gone")
        # max_total counts admissions, also of slots that ended.
        agentstate.mutate(self.reg, lambda d: d.update(max_total=3, max_concurrent=5))
        slots.abort(self.reg, child.id)
        slots.reserve(self.reg, owner=OTHER)
        before = self.snapshot()
        with self.assertRaises(slots.TotalReached):
            slots.reserve(self.reg, owner=OTHER)
        self.assertUnchanged(before)

    def test_no_policy_admits_nothing(self) -> None:
        missing = self.path("none", "registry.json")
        with self.assertRaises(slots.Full):
            slots.reserve(missing)
        self.assertFalse(os.path.exists(missing))
        self.assertEqual([], slots.list(missing))
        self.assertEqual(slots.Reaped([], []), slots.reap(missing))

    def test_counts_healed(self) -> None:
        # Counts edited by hand: no admission reads active_count, and every
        # operation writes both counts from the slots.
        agentstate.mutate(self.reg, lambda d: d.update(active_count=99, total_spawned=0, max_total=1))
        s = slots.reserve(self.reg, owner=OTHER)
        doc = agentstate.load(self.reg)
        self.assertEqual((1, 1), (doc["active_count"], doc["total_spawned"]))
        agentstate.mutate(self.reg, lambda d: d.update(active_count=-5))
        slots.adopt(self.reg, s.id)
        self.assertEqual(1, agentstate.load(self.reg)["active_count"])
        agentstate.mutate(self.reg, lambda d: d.update(active_count=3))
        slots.release(self.reg, s.id)
        doc = agentstate.load(self.reg)
        self.assertEqual((0, 1), (doc["active_count"], doc["total_spawned"]))
        # total_spawned below the slots there are: raised to their number
        # before the admission, so that the cap counts them.
        agentstate.mutate(self.reg, lambda d: d.update(max_total=0, total_spawned=0, agents=[{"id": "x", "depth": 0, "owner": {"pid": 1}}]))
        slots.reserve(self.reg, owner=OTHER)
        self.assertEqual(2, agentstate.load(self.reg)["total_spawned"])

    def test_edit_that_raises_writes_nothing(self) -> None:
        before = self.snapshot()
        with self.assertRaises(agentstate.TransitionConflict):
            slots.reserve(self.reg, slots.transition(self.task, "running", "review"))
        self.assertUnchanged(before)

    def test_bad_requests(self) -> None:
        before = self.snapshot()
        outside = os.path.join(self.dir, "elsewhere", "status.json")
        for name, call in [
            ("empty id", lambda: slots.reserve(self.reg, id="")),
            ("control character", lambda: slots.reserve(self.reg, key="a\nb")),
            ("long key", lambda: slots.reserve(self.reg, key="k" * 257)),
            ("zero owner", lambda: slots.reserve(self.reg, owner=Owner())),
            ("declared member", lambda: slots.reserve(self.reg, members={"owner": 1})),
            ("not JSON", lambda: slots.reserve(self.reg, members={"x": {1, 2}})),
            ("unnamed resource", lambda: slots.reserve(self.reg, resources={"": "/tmp/x"})),
            ("document outside", lambda: slots.reserve(self.reg, slots.transition(outside, "running"))),
            ("registry as document", lambda: slots.reserve(self.reg, slots.transition(self.reg, "running"))),
        ]:
            with self.subTest(name), self.assertRaises(agentstate.InvalidArgument):
                call()
        self.assertUnchanged(before)


class OwnerTest(_Registry):
    def test_adopt(self) -> None:
        s = slots.reserve(self.reg, owner=OTHER)
        a = slots.adopt(self.reg, s.id)
        self.assertEqual((claim.self_owner(), True), (a.owner, a.adopted))
        before = self.snapshot()
        self.assertEqual(a, slots.adopt(self.reg, s.id))  # its own: nothing to write
        self.assertUnchanged(before)
        with self.assertRaises(slots.Adopted) as e:
            slots.adopt(self.reg, s.id, owner=OTHER)
        self.assertEqual(a, e.exception.slot)
        with self.assertRaises(slots.Adopted):
            slots.hand_over(self.reg, s.id, OTHER)
        with self.assertRaises(slots.Adopted):
            slots.abort(self.reg, s.id, slots.transition(self.task, "queued"))
        self.assertUnchanged(before)
        slots.release(self.reg, s.id)
        before = self.snapshot()
        for op in (lambda: slots.adopt(self.reg, s.id), lambda: slots.hand_over(self.reg, s.id, OTHER),
                   lambda: slots.release(self.reg, s.id), lambda: slots.abort(self.reg, s.id)):
            with self.assertRaises(slots.Released):
                op()
        self.assertUnchanged(before)

    def test_hand_over_then_adopt(self) -> None:
        s = slots.reserve(self.reg)
        child = OTHER
        h = slots.hand_over(self.reg, s.id, child)
        self.assertEqual((child, True), (h.owner, h.adopted))
        before = self.snapshot()
        # The child adopting what it was handed finds itself: no write, but
        # its edits apply.
        self.assertEqual(h, slots.adopt(self.reg, s.id, owner=child))
        self.assertUnchanged(before)
        slots.adopt(self.reg, s.id, slots.transition(self.task, "running", "queued"), owner=child)
        self.assertEqual("running", self.status())
        with self.assertRaises(slots.Adopted):
            slots.adopt(self.reg, s.id)  # the dispatcher

    def test_abort_returns_the_resources_and_leaves_no_slot(self) -> None:
        s = slots.reserve(self.reg, slots.transition(self.task, "running", "queued"),
                          resources={"prompt": "/tmp/prompt-fix-42.md", "log_dir": "/var/log/agents/fix-42"})
        got = slots.abort(self.reg, s.id, slots.transition(self.task, "queued", "running"))
        self.assertEqual({"prompt": "/tmp/prompt-fix-42.md", "log_dir": "/var/log/agents/fix-42"}, got.resources)
        self.assertEqual(("queued", []), (self.status(), self.agents()))
        doc = agentstate.load(self.reg)
        self.assertEqual((0, 1), (doc["active_count"], doc["total_spawned"]))

    def test_release_with_the_task(self) -> None:
        s = slots.reserve(self.reg, slots.transition(self.task, "running", "queued"))
        slots.adopt(self.reg, s.id)
        got = slots.release(self.reg, s.id, slots.transition(self.task, "completed", "running"))
        self.assertEqual((s.id, "completed", []), (got.id, self.status(), self.agents()))

    def test_has_children(self) -> None:
        p = slots.reserve(self.reg)
        c = slots.reserve(self.reg, parent=p.id)
        before = self.snapshot()
        for op in (slots.release, slots.abort):
            with self.assertRaises(slots.HasChildren) as e:
                op(self.reg, p.id)
            self.assertEqual(p.id, e.exception.slot.id if e.exception.slot else None)
        self.assertUnchanged(before)
        slots.release(self.reg, c.id)
        slots.release(self.reg, p.id)
        self.assertEqual([], self.agents())


class CopiesTest(_Registry):
    def test_slots_given_to_the_caller_are_its_own(self) -> None:
        # Operations share decoded slots between calls (by their text);
        # what a caller does to the slots it gets changes no registry.
        s = slots.reserve(self.reg, key="k", members={"tags": ["a"]}, resources={"p": "/p"})
        before = self.read(self.reg)
        got = [s, slots.list(self.reg)[0].slot]
        with self.assertRaises(slots.Exists) as e:
            slots.reserve(self.reg, key="k")
        assert e.exception.slot is not None
        got.append(e.exception.slot)
        for g in got:
            g.members["tags"].append("b")
            g.members["new"] = 1
            g.resources["p"] = "/etc"
            g.docs.append("x")
            g.key = "other"
        self.assertEqual(before, self.read(self.reg))
        with self.assertRaises(slots.Exists) as e:
            slots.reserve(self.reg, key="k")
        self.assertEqual(s.id, e.exception.slot.id if e.exception.slot else None)
        other = slots.reserve(self.reg, key="k2", owner=OTHER)  # rewrites the first slot from what it read
        doc = agentstate.load(self.reg)
        self.assertEqual([["a"], "k", {"p": "/p"}], [doc["agents"][0]["tags"], doc["agents"][0]["key"], doc["agents"][0]["resources"]])
        self.assertNotIn("new", doc["agents"][0])
        self.assertEqual(other.id, doc["agents"][1]["id"])


class InvalidTest(_Registry):
    def test_invalid_registries_are_refused(self) -> None:
        ok = {"id": "a", "depth": 0, "owner": {"pid": 1}}
        for name, doc in [
            ("id missing", {"agents": [{"depth": 0}]}),
            ("id with a control character", {"agents": [dict(ok, id="a\u007f")]}),
            ("id too long", {"agents": [dict(ok, id="a" * 257)]}),
            ("id repeated", {"agents": [ok, ok]}),
            ("key repeated", {"agents": [dict(ok, key="k"), dict(ok, id="b", key="k")]}),
            ("key empty-looking", {"agents": [dict(ok, key="\t")]}),
            ("parent missing", {"agents": [dict(ok, parent="x", depth=1)]}),
            ("its own parent", {"agents": [dict(ok, parent="a", depth=1)]}),
            ("depth of a root", {"agents": [dict(ok, depth=1)]}),
            ("depth of a child", {"agents": [ok, dict(ok, id="b", parent="a", depth=2)]}),
            ("negative depth", {"agents": [dict(ok, depth=-1)]}),
            ("negative cap", {"max_concurrent": -1}),
            ("absolute doc", {"agents": [dict(ok, docs=["/etc/passwd"])]}),
            ("doc with ..", {"agents": [dict(ok, docs=["a/../../b"])]}),
            ("doc with an empty element", {"agents": [dict(ok, docs=["a//b"])]}),
            ("doc with a backslash", {"agents": [dict(ok, docs=["a\\b"])]}),
            ("resource without a name", {"agents": [dict(ok, resources={"": "/x"})]}),
            ("more documents than a transaction takes", {"agents": [dict(ok, docs=["d%d/status.json" % i for i in range(1024)])]}),
        ]:
            with self.subTest(name):
                agentstate.mutate(self.reg, lambda d: (d.clear(), d.update(doc, max_concurrent=doc.get("max_concurrent", 5))))
                before = self.snapshot()
                for op in (lambda: slots.reserve(self.reg, slots.transition(self.task, "running")), lambda: slots.release(self.reg, "a"),
                           lambda: slots.adopt(self.reg, "a"), lambda: slots.reap(self.reg, check=lambda o: Liveness.DEAD),
                           lambda: slots.list(self.reg)):
                    with self.assertRaises(slots.InvalidRegistry):
                        op()
                self.assertUnchanged(before)

    def test_corrupt_registries_are_refused(self) -> None:
        for name, text in [
            ("element not an object", b'{"agents": [1]}'),
            ("agents not an array", b'{"agents": {}}'),
            ("string cap", b'{"max_concurrent": "4"}'),
            ("fractional cap", b'{"max_concurrent": 4.0}'),
            ("number id", b'{"agents": [{"id": 1}]}'),
            ("resource not a string", b'{"agents": [{"id": "a", "resources": {"p": 1}}]}'),
            ("owner not an object", b'{"agents": [{"id": "a", "owner": "me"}]}'),
            ("time malformed", b'{"agents": [{"id": "a", "reserved_at": "yesterday"}]}'),
            ("a case variant", b'{"Agents": []}'),
            ("repeated name", b'{"agents": [{"id": "a", "id": "b"}]}'),
        ]:
            with self.subTest(name):
                self.write(self.reg, text)
                before = self.snapshot()
                for op in (lambda: slots.reserve(self.reg), lambda: slots.release(self.reg, "a"), lambda: slots.reap(self.reg), lambda: slots.list(self.reg)):
                    with self.assertRaises(agentstate.CorruptError):
                        op()
                self.assertUnchanged(before)

    def test_doc_path(self) -> None:
        self.assertEqual(self.task, slots.doc_path(self.reg, "acme/fix-42/status.json"))
        for bad in ("../x", "/etc/passwd", "a/./b", ""):
            with self.subTest(bad), self.assertRaises(slots.InvalidRegistry):
                slots.doc_path(self.reg, bad)


    def test_doc_path_refuses_a_link_out(self) -> None:
        # A member who can write the registry plants a directory link that
        # leads out of the registry's directory and names a document through
        # it: doc_path refuses it, so a reaper that opens a slot's documents
        # with doc_path changes nothing outside. A link that stays inside is
        # followed. CONTROL: the path built from the name's shape alone (the
        # lexical join) reaches the document outside, which a reap changes.
        victim = self.path("outside", "status.json")
        self.write(victim, b'{"status": "running"}')
        fleet = os.path.dirname(self.reg)
        os.symlink(os.path.dirname(victim), os.path.join(fleet, "evil"))
        os.symlink("acme", os.path.join(fleet, "alias"))
        with self.assertRaises(slots.InvalidRegistry):
            slots.doc_path(self.reg, "evil/status.json")
        self.assertEqual(os.path.join(fleet, "alias", "fix-42", "status.json"), slots.doc_path(self.reg, "alias/fix-42/status.json"))
        self.assertEqual(os.path.join(fleet, "new", "status.json"), slots.doc_path(self.reg, "new/status.json"))

        dead = Owner(host="h", pid=1)
        agentstate.mutate(self.reg, lambda d: d.update(agents=[{"id": "x", "depth": 0, "owner": dead.to_json(), "docs": ["evil/status.json"]}]))

        def reap(path: Callable[[str], str]) -> slots.Reaped:
            return slots.reap(self.reg, lambda s: slots.transition(path(s.docs[0]), "failed", "running"), check=lambda o: Liveness.DEAD)

        with self.assertRaises(slots.InvalidRegistry):
            reap(lambda name: slots.doc_path(self.reg, name))
        self.assertEqual(b'{"status": "running"}', self.read(victim))
        self.assertFalse(os.path.lexists(victim + ".lock"), "the reap made a lock file outside")
        self.assertEqual(1, len(reap(lambda name: os.path.join(fleet, *name.split("/"))).released), "CONTROL")
        self.assertEqual("failed", agentstate.load(victim)["status"], "CONTROL: the lexical path did not reach the document outside")


class NothingChangedTest(_Registry):
    def test_a_no_op_keeps_the_layout(self) -> None:
        # A registry laid out by another writer (sorted members): an
        # operation that changes nothing leaves its bytes; one that changes
        # something writes Go's layout.
        s = slots.reserve(self.reg, owner=OTHER)
        slots.adopt(self.reg, s.id)
        agentstate.mutate(self.reg, lambda d: d.update(note="x"))  # rewritten sorted, by the JSON kind
        self.assertTrue(self.read(self.reg).startswith(b'{\n  "active_count"'))
        before = self.snapshot()
        slots.adopt(self.reg, s.id)
        self.assertUnchanged(before)
        slots.release(self.reg, s.id)
        self.assertTrue(self.read(self.reg).startswith(b'{\n  "agents": [],\n  "active_count": 0,'))


def started_child() -> "subprocess.Popen[bytes]":
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"], stdin=subprocess.DEVNULL)


@unittest.skipUnless(LINUX, "owners are judged on Linux only")
class ReapTest(_Registry):
    def killed_agent(self, **kw: Any) -> slots.Slot:
        """A slot adopted by a real agent process, which is then killed with
        SIGKILL and waited for. Its task goes from queued to running."""
        agentstate.mutate(self.task, lambda d: d.update(status="queued"))
        s = slots.reserve(self.reg, slots.transition(self.task, "running", "queued"), resources={"prompt": "/tmp/p"}, **kw)
        agent = python("from agentstate import slots\nimport time\nslots.adopt(%r, %r)\nprint('adopted', flush=True)\ntime.sleep(3600)\n" % (self.reg, s.id))
        assert agent.stdout is not None
        self.assertEqual("adopted\n", agent.stdout.readline())
        os.kill(agent.pid, signal.SIGKILL)
        agent.wait()
        agent.stdout.close()
        return s

    def fail_task(self, s: slots.Slot) -> slots.Edit:
        return slots.transition(slots.doc_path(self.reg, s.docs[0]), "failed", "running")

    def test_reap_releases_the_killed_agent_with_its_task(self) -> None:
        s = self.killed_agent()
        live = slots.reserve(self.reg, owner=claim.self_owner())
        got = slots.reap(self.reg, self.fail_task)
        self.assertEqual(([s.id], {"prompt": "/tmp/p"}), ([r.id for r in got.released], got.released[0].resources))
        self.assertEqual(("failed", [live.id]), (self.status(), [a["id"] for a in self.agents()]))
        doc = agentstate.load(self.reg)
        self.assertEqual((1, 2), (doc["active_count"], doc["total_spawned"]))
        self.assertEqual(slots.Reaped([], []), slots.reap(self.reg, self.fail_task))

    def test_reserver_died_before_hand_over(self) -> None:
        dispatcher = python("from agentstate import slots\nimport time\ns = slots.reserve(%r, key='k')\nprint(s.id, flush=True)\ntime.sleep(3600)\n" % self.reg)
        assert dispatcher.stdout is not None
        sid = dispatcher.stdout.readline().strip()
        os.kill(dispatcher.pid, signal.SIGKILL)
        dispatcher.wait()
        dispatcher.stdout.close()
        self.assertEqual([sid], [r.id for r in slots.reap(self.reg).released])
        with self.assertRaises(slots.Released):
            slots.adopt(self.reg, sid)  # the agent it started must not work

    def test_kept(self) -> None:
        stopped = started_child()
        self.addCleanup(stopped.wait)
        self.addCleanup(stopped.kill)
        os.kill(stopped.pid, signal.SIGSTOP)
        slots.reserve(self.reg, owner=claim.owner_of(stopped.pid))
        unknown = slots.reserve(self.reg, owner=OTHER)
        before = self.snapshot()
        got = slots.reap(self.reg)
        self.assertEqual(([], [unknown.id]), (got.released, [u.id for u in got.unknown]))
        self.assertUnchanged(before)
        listed = slots.list(self.reg)
        self.assertEqual([Liveness.ALIVE, Liveness.UNKNOWN], [x.liveness for x in listed])
        self.assertTrue(all(0 <= x.age < 3600 for x in listed))

    def test_a_dead_parent_waits_for_its_children(self) -> None:
        parent = self.killed_agent()
        child = slots.reserve(self.reg, parent=parent.id)
        self.assertEqual([], slots.reap(self.reg).released)
        self.assertEqual(2, len(self.agents()))
        slots.release(self.reg, child.id)
        self.assertEqual([parent.id], [r.id for r in slots.reap(self.reg).released])
        # Dead parent and dead child: one call releases both, child first.
        p = self.killed_agent()
        c = self.killed_agent(parent=p.id)
        self.assertEqual([c.id, p.id], [r.id for r in slots.reap(self.reg).released])

    def test_conflicting_edit_releases_all_the_same(self) -> None:
        s = self.killed_agent()
        agentstate.mutate(self.task, lambda d: d.update(status="completed"))
        task = self.read(self.task)

        def edit(s: slots.Slot) -> slots.Edit:
            def fn(docs: List[agentstate.JSONObject], _: slots.Slot) -> None:
                docs[0]["note"] = "half-way"
                agentstate.transition(docs[0], "failed", "running")
            return slots.Edit([self.task], fn)

        self.assertEqual([s.id], [r.id for r in slots.reap(self.reg, edit).released])
        self.assertEqual(task, self.read(self.task))  # the edit's change undone
        self.assertEqual([], self.agents())

    def _reapers(self, reap: Callable[[Callable[[Owner], Liveness]], List[str]], n: int) -> List[str]:
        """Runs reap in n threads that have all judged the owners once
        before any of them locks: the check a reaper gives is held at its
        first call until every reaper has made it."""
        all_judged = threading.Barrier(n)

        def run() -> List[str]:
            first = [True]

            def check(o: Owner) -> Liveness:
                if first[0]:
                    first[0] = False
                    all_judged.wait()
                return claim.local(o)

            return reap(check)

        return [r for got in at_once(run, n) for r in got]

    def test_reapers_at_once_release_once(self) -> None:
        s = self.killed_agent()
        released = self._reapers(lambda check: [r.id for r in slots.reap(self.reg, self.fail_task, check=check).released], 3)
        self.assertEqual([s.id], released)
        self.assertEqual(("failed", []), (self.status(), self.agents()))

    def test_reapers_at_once_control(self) -> None:
        # CONTROL: a reaper that decides before it locks and releases what
        # it decided: every reaper releases the slot (its resources removed,
        # its task failed, three times).
        s = self.killed_agent()

        def reap(check: Callable[[Owner], Liveness]) -> List[str]:
            dead = [x.slot.id for x in slots.list(self.reg, check=check) if x.liveness == Liveness.DEAD]
            agentstate.mutate(self.reg, lambda d: d.update(agents=[a for a in d["agents"] if a["id"] not in dead]))
            return dead

        self.assertEqual([s.id] * 3, self._reapers(reap, 3))

    def test_reapers_at_once_processes(self) -> None:
        s = self.killed_agent()
        code = "from agentstate import slots\nfor r in slots.reap(%r).released:\n    print(r.id)\n" % self.reg
        ps = [python(code) for _ in range(3)]
        released = [line for p in ps for line in p.communicate()[0].split()]
        self.assertEqual([0] * 3, [p.returncode for p in ps])
        self.assertEqual([s.id], released)
        self.assertEqual([], self.agents())


if __name__ == "__main__":
    unittest.main()
