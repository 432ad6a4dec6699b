"""The README's examples run as written (python/README.md)."""

from __future__ import annotations

import os
import re
import sys
import unittest

import agentstate
from agentstate import claim
from helpers import TempDirTest

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")


def blocks() -> list:  # type: ignore[type-arg]
    with open(README, encoding="utf-8") as f:
        return re.findall(r"```python\n(.*?)```", f.read(), re.S)


class ReadmeTest(TempDirTest):
    def setUp(self) -> None:
        super().setUp()
        self.cwd = os.getcwd()
        os.chdir(self.dir)
        self.addCleanup(os.chdir, self.cwd)

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
