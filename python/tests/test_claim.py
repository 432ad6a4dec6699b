"""Owners and their liveness by the Go claim package's rules, against real
processes; reaping. internal/proof/claim compares these judgments with
Go's."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import threading
import time
import unittest
from unittest import mock
from typing import List

import agentstate
from agentstate import claim
from agentstate.claim import Liveness, Owner
from helpers import TempDirTest

LINUX = sys.platform.startswith("linux")


def started_child() -> "subprocess.Popen[bytes]":
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"], stdin=subprocess.DEVNULL)


class OwnerJSONTest(unittest.TestCase):
    def test_round_trip_and_omitted_members(self) -> None:
        o = Owner(host="h", boot="b", pidns=4026531836, pid=42, start=7)
        self.assertEqual({"host": "h", "boot": "b", "pidns": 4026531836, "pid": 42, "start": 7}, o.to_json())
        self.assertEqual(["host", "boot", "pidns", "pid", "start"], list(o.to_json()))
        self.assertEqual(o, Owner.from_json(o.to_json()))
        self.assertEqual(Owner(), Owner.from_json(None))
        self.assertEqual("pid 42 on h", str(o))
        self.assertEqual("etcd lease ab", str(Owner(lease="ab")))
        self.assertEqual("no owner", str(Owner()))

    def test_read_as_go_reads_it(self) -> None:
        self.assertEqual(Owner(pid=3, host="x"), Owner.from_json({"PID": 3, "Host": "x", "future": [1], "boot": None}))
        for bad in ({"pid": "3"}, {"pid": 1.5}, {"pid": True}, {"host": 1}, {"start": -1}, {"pidns": 1 << 64}, [1]):
            with self.subTest(bad=bad), self.assertRaises(agentstate.InvalidArgument):
                Owner.from_json(bad)

    def test_parse_stat(self) -> None:
        line = "4242 (a (b) c) S " + " ".join(str(i) for i in range(4, 20)) + " 3 0 98765 rest"
        st = claim.parse_stat(line)
        self.assertEqual((4242, "S", 3, 98765), (st.pid, st.state, st.threads, st.start))
        for bad in ("4242 a S 1", "x (y) S 1 2", "1 (y) SS " + "0 " * 20):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                claim.parse_stat(bad)


@unittest.skipUnless(LINUX, "owners are judged on Linux only; elsewhere every owner is unknown (tested below)")
class LivenessTest(unittest.TestCase):
    def test_self_alive(self) -> None:
        me = claim.self_owner()
        self.assertEqual(os.getpid(), me.pid)
        self.assertTrue(me.boot and me.pidns and me.start)
        self.assertEqual(Liveness.ALIVE, claim.local(me))
        self.assertEqual(me, claim.owner_of(os.getpid()))

    def test_dead_process(self) -> None:
        c = started_child()
        o = claim.owner_of(c.pid)
        self.assertEqual(Liveness.ALIVE, claim.local(o))
        os.kill(c.pid, signal.SIGKILL)
        # Before its parent's wait it is a zombie: already dead.
        for _ in range(1000):
            if claim.local(o) == Liveness.DEAD:
                break
            time.sleep(0.005)
        self.assertEqual(Liveness.DEAD, claim.local(o))
        c.wait()
        self.assertEqual(Liveness.DEAD, claim.local(o))
        with self.assertRaises(agentstate.NotFoundError):
            claim.owner_of(c.pid)

    def test_stopped_process_is_alive(self) -> None:
        c = started_child()
        self.addCleanup(c.wait)
        self.addCleanup(c.kill)
        o = claim.owner_of(c.pid)
        os.kill(c.pid, signal.SIGSTOP)
        self.assertEqual(Liveness.ALIVE, claim.local(o))

    def test_reused_pid(self) -> None:
        # A live process with the owner's pid but another start time: the
        # pid was reused, the owner is dead. CONTROL: by pid alone it looks
        # alive.
        me = claim.self_owner()
        recycled = dataclasses.replace(me, start=me.start - 1)
        self.assertEqual(Liveness.DEAD, claim.local(recycled))
        by_pid_only = Owner(boot=me.boot, pidns=me.pidns, timens=me.timens, pid=me.pid, start=me.start)
        self.assertEqual(Liveness.ALIVE, claim.local(by_pid_only))

    def test_unknowns(self) -> None:
        me = claim.self_owner()
        for name, o in [
            ("zero", Owner()),
            ("lease", dataclasses.replace(me, lease="694d8c5f2a1b3c4d")),
            ("no start", dataclasses.replace(me, start=0)),
            ("another pid namespace", dataclasses.replace(me, pidns=me.pidns + 1)),
            ("another time namespace", dataclasses.replace(me, timens=me.timens + 1)),
            ("another boot, another machine", dataclasses.replace(me, boot="other", machine="0" * 32)),
            ("another boot in a container", dataclasses.replace(me, boot="other", pidns=me.pidns + 1)),
        ]:
            with self.subTest(name):
                self.assertEqual(Liveness.UNKNOWN, claim.local(o))

    def test_earlier_boot_of_this_host(self) -> None:
        me = claim.self_owner()
        o = dataclasses.replace(me, boot="an-earlier-boot", pidns=claim.INIT_PIDNS)
        want = Liveness.DEAD if me.machine else Liveness.UNKNOWN
        self.assertEqual(want, claim.local(o))


class ReapTest(TempDirTest):
    def registry(self, owners: List[Owner]) -> str:
        reg = self.path("registry.json")
        agentstate.create(reg, {"active_count": len(owners), "agents": [{"id": "a%d" % i, "owner": o.to_json()} for i, o in enumerate(owners)]})
        return reg

    @staticmethod
    def claims(reg: agentstate.JSONObject) -> List[claim.Claim]:
        return [claim.Claim(a["id"], Owner.from_json(a["owner"])) for a in reg["agents"]]

    def release(self, docs: List[agentstate.JSONObject], c: claim.Claim) -> None:
        (reg,) = docs  # the registry; these claims name no other document
        reg["agents"] = [a for a in reg["agents"] if a["id"] != c.id]
        reg["active_count"] -= 1

    @unittest.skipUnless(LINUX, "owners are judged on Linux only")
    def test_reap_releases_dead_once(self) -> None:
        c = started_child()
        dead = claim.owner_of(c.pid)
        c.kill()
        c.wait()
        reg = self.registry([claim.self_owner(), dead, Owner(host="elsewhere", pid=1)])
        results = []
        lock = threading.Lock()

        def reap() -> None:
            r = claim.reap(reg, self.claims, self.release)
            with lock:
                results.append(r)

        ts = [threading.Thread(target=reap) for _ in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        self.assertEqual(1, sum(len(r.released) for r in results))
        self.assertEqual(["a2"], [u.id for u in results[0].unknown])
        doc = agentstate.load(reg)
        self.assertEqual(2, doc["active_count"])
        self.assertEqual(["a0", "a2"], [a["id"] for a in doc["agents"]])

    def test_release_must_remove_the_claim(self) -> None:
        reg = self.registry([Owner(pid=1)])
        with self.assertRaises(agentstate.Error):
            claim.reap(reg, self.claims, lambda docs, c: None, check=lambda o: Liveness.DEAD)
        self.assertEqual(1, agentstate.load(reg)["active_count"])

    def test_release_gets_a_list(self) -> None:
        # As mutate_all's function: the document, then the claim's docs in
        # their order, whatever order the transaction locks them in.
        a, b = self.path("a.json"), self.path("b.json")
        agentstate.create(a, {"n": "a"})
        agentstate.create(b, {"n": "b"})
        reg = self.registry([Owner(pid=1)])
        seen = []

        def release(docs: List[agentstate.JSONObject], c: claim.Claim) -> None:
            seen.append([d.get("n", "registry") for d in docs])
            docs[0]["agents"] = []
            docs[1]["released"] = True

        claim.reap(reg, lambda r: [claim.Claim(x["id"], Owner.from_json(x["owner"]), [b, a]) for x in r["agents"]], release, check=lambda o: Liveness.DEAD)
        self.assertEqual([["registry", "b", "a"]], seen)
        self.assertEqual((True, None), (agentstate.load(b).get("released"), agentstate.load(a).get("released")))

    def test_other_systems_know_nothing(self) -> None:
        with mock.patch.object(claim.sys, "platform", "darwin"):
            me = claim.self_owner()
            self.assertEqual(Owner(host=me.host, pid=os.getpid()), me)
            self.assertEqual(Liveness.UNKNOWN, claim.local(me))
            if LINUX:
                with mock.patch.object(claim.sys, "platform", "linux"):
                    real = claim.self_owner()
                self.assertEqual(Liveness.UNKNOWN, claim.local(real))


if __name__ == "__main__":
    unittest.main()
