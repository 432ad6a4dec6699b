"""The README's examples run as written (python/README.md)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import unittest
from typing import Any, Dict
from unittest import mock

import agentstate
from agentstate import claim, slots
from helpers import SRC, TempDirTest

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")


def blocks() -> list:  # type: ignore[type-arg]
    with open(README, encoding="utf-8") as f:
        return re.findall(r"```python\n(.*?)```", f.read(), re.S)


class _InDir(TempDirTest):
    def setUp(self) -> None:
        super().setUp()
        self.cwd = os.getcwd()
        os.chdir(self.dir)
        self.addCleanup(os.chdir, self.cwd)


class ReadmeTest(_InDir):
    def test_first_example(self) -> None:
        os.mkdir("ws")
        agentstate.create("ws/status.json", {"status": "queued", "task": "t1"})
        agentstate.create("registry.json", {"max_concurrent": 2})
        exec(blocks()[0], {})
        self.assertEqual(("running", 1, "checked"), tuple(agentstate.load("ws/status.json")[k] for k in ("status", "runs", "note")))
        self.assertEqual(1, agentstate.load("registry.json")["active_count"])

    @unittest.skipUnless(sys.platform.startswith("linux"), "owners are judged on Linux only")
    def test_claims_example(self) -> None:
        os.mkdir("ws")
        registry_path, task_path = "registry.json", os.path.join(self.dir, "ws", "status.json")
        agentstate.create(task_path, {"status": "queued"})
        agentstate.create(registry_path, {})
        g = {"agentstate": agentstate, "registry_path": registry_path, "task_path": task_path}
        exec(blocks()[1], g)  # nothing registered yet
        agentstate.mutate_all([registry_path, task_path], g["register"])
        exec(blocks()[1], g)
        self.assertEqual([], g["result"].released)  # this process is alive
        # An owner that has died: the same claim, released once.
        agentstate.mutate(registry_path, lambda r: r["agents"][0]["owner"].update(start=1))
        exec(blocks()[1], g)
        self.assertEqual(["a1"], [c.id for c in g["result"].released])
        self.assertEqual((0, []), (agentstate.load(registry_path)["active_count"], agentstate.load(registry_path)["agents"]))
        self.assertEqual("failed", agentstate.load(task_path)["status"])
        self.assertIsNotNone(claim)


@unittest.skipUnless(sys.platform.startswith("linux"), "owners are judged on Linux only")
class SlotsReadmeTest(_InDir):
    def setUp(self) -> None:
        super().setUp()
        self.reg, self.task = "fleet/AGENT_REGISTRY.json", "fleet/fix-42/status.json"
        os.makedirs("fleet/fix-42")
        agentstate.create(self.reg, {"max_concurrent": 4, "max_depth": 1})
        agentstate.create(self.task, {"status": "queued"})
        os.makedirs("fleet/prompts")
        self.prompt = os.path.join(self.dir, "fleet", "prompts", "prompt-fix-42.md")
        with open(self.prompt, "w") as f:
            f.write("fix it")
        with open("agent.py", "w") as f:
            f.write(blocks()[3])
        if not os.environ.get("AGENTSTATE_TESTS_INSTALLED"):
            patch = mock.patch.dict(os.environ, PYTHONPATH=SRC)  # the agent imports agentstate
            patch.start()
            self.addCleanup(patch.stop)
        self.g: Dict[str, Any] = {}
        exec(blocks()[2], self.g)

    def test_dispatcher_and_agent(self) -> None:
        s, agent = self.g["spawn"](self.prompt)
        self.assertEqual(0, agent.wait())
        self.assertEqual(("completed", [], 1), (agentstate.load(self.task)["status"], agentstate.load(self.reg)["agents"],
                                                agentstate.load(self.reg)["total_spawned"]))
        self.assertEqual({"prompt": self.prompt}, s.resources)

    def test_retried_spawn(self) -> None:
        first = slots.reserve(self.reg, key="fix-42")
        self.assertEqual((first, None), self.g["spawn"](self.prompt))

    def test_failed_start(self) -> None:
        self.g["subprocess"] = mock.Mock(Popen=mock.Mock(side_effect=FileNotFoundError("no agent")))
        with self.assertRaises(FileNotFoundError):
            self.g["spawn"](self.prompt)
        self.assertEqual(("queued", []), (agentstate.load(self.task)["status"], agentstate.load(self.reg)["agents"]))
        self.assertFalse(os.path.exists(self.prompt))

    def test_failed_start_removes_its_own_prompt(self) -> None:
        # A member who can write the registry gave the new slot another
        # prompt before the start failed: the dispatcher removes its own.
        victim = os.path.join(self.dir, "precious")
        with open(victim, "w") as f:
            f.write("keep")

        def member_then_fail(*args: Any, **kw: Any) -> None:
            agentstate.mutate(self.reg, lambda d: d["agents"][0].update(resources={"prompt": victim}))
            raise FileNotFoundError("no agent")

        self.g["subprocess"] = mock.Mock(Popen=mock.Mock(side_effect=member_then_fail))
        with self.assertRaises(FileNotFoundError):
            self.g["spawn"](self.prompt)
        self.assertEqual((False, True), (os.path.exists(self.prompt), os.path.exists(victim)))

    def test_reaper_of_strange_slots(self) -> None:
        # Dead slots that other programs or a member wrote: one without a
        # task document, one whose prompt is a file outside the prompts'
        # directory, reached through a link planted there. Both are
        # released; the file stays.
        victim = os.path.join(self.dir, "outside", "precious")
        os.makedirs(os.path.dirname(victim))
        with open(victim, "w") as f:
            f.write("keep")
        os.symlink(os.path.dirname(victim), "fleet/prompts/evil")
        child = subprocess.Popen([sys.executable, "-c", "pass"])
        dead = claim.owner_of(child.pid)
        child.wait()
        slots.reserve(self.reg, key="no-docs", owner=dead)
        slots.reserve(self.reg, key="planted", owner=dead, resources={"prompt": "fleet/prompts/evil/precious"})
        exec(blocks()[4], self.g)
        self.assertEqual(([], True), (agentstate.load(self.reg)["agents"], os.path.exists(victim)))

    def test_reaper(self) -> None:
        child = subprocess.Popen([sys.executable, "-c", "pass"])
        dead = claim.owner_of(child.pid)
        child.wait()
        slots.reserve(self.reg, slots.transition(self.task, "running", "queued"), key="fix-42", owner=dead, resources={"prompt": self.prompt})
        exec(blocks()[4], self.g)
        self.assertEqual(("failed", []), (agentstate.load(self.task)["status"], agentstate.load(self.reg)["agents"]))
        self.assertFalse(os.path.exists(self.prompt))
