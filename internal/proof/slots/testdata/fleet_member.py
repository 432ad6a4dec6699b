#!/usr/bin/env python3
"""The Python fleet member: a dispatcher and an agent on the repository's
Python package (python/, import agentstate.slots), following the line
protocol of doc.go, as the Go member (member_linux_test.go) does.

Usage:
  fleet_member.py dispatcher           answer spawn and stop commands on stdin
  fleet_member.py agent ID TASK PLAN   adopt slot ID, then release it (PLAN short)
                                       or wait to be killed (PLAN long)

Both read FLEET_REG, FLEET_MODE and (the dispatcher) FLEET_AGENT from the
environment, and use the inherited fds 3 (the agents' reports) and 4 (the
barrier).
"""

import json
import os
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "python", "src")))
import agentstate  # noqa: E402
from agentstate import claim, slots  # noqa: E402

REPORTS, BARRIER = 3, 4


class Fleet:
    def __init__(self):
        self.reg = os.environ["FLEET_REG"]
        self.mode = os.environ["FLEET_MODE"]
        self.agent = json.loads(os.environ.get("FLEET_AGENT") or '{"argv": [], "env": []}')

    def task(self, name):
        return os.path.join(os.path.dirname(self.reg), name, "status.json")

    def fail_task(self, s):
        """The reap's edit: the task of a released slot fails."""
        if not s.docs:
            return None
        return slots.transition(slots.doc_path(self.reg, s.docs[0]), "failed", "running")

    # The dispatcher.

    def dispatcher(self):
        me = claim.self_owner()
        children = []
        for line in sys.stdin:
            f = line.split()
            if f == ["stop"]:
                os.close(BARRIER)
                answer("stopped")
                sys.stdin.read()
                break
            if len(f) != 4 or f[0] != "spawn":
                raise SystemExit("dispatcher: bad command %r" % line)
            try:
                a = self.spawn(me, f[1], f[2], f[3].split(","), children)
            except Exception as e:  # reported to the test, which fails
                a = "error " + ("%s: %s" % (type(e).__name__, e)).replace("\n", " ")
            answer(a)
            if a.startswith("paused "):
                sys.stdin.read()  # until killed
                return
        for t in children:
            t.join()

    def spawn(self, me, task, parent, flags, children):
        parent = "" if parent == "-" else parent
        # A prompt file of this attempt's own, removed unless a slot records it.
        fd, prompt = tempfile.mkstemp(prefix="prompt-", suffix=".md", dir=os.path.join(os.path.dirname(self.reg), task))
        os.write(fd, ("do " + task).encode())
        os.close(fd)
        try:
            s = self.reserve(me, task, parent, prompt)
        except BaseException:
            os.remove(prompt)
            raise
        if isinstance(s, str):  # refused
            os.remove(prompt)
            return s
        return self.start(s, task, flags, children)

    def reserve(self, me, task, parent, prompt):
        """The slot, or the answer that refuses it."""
        for attempt in range(21):
            try:
                if self.mode == "bare":
                    s = self.bare_reserve(me, task, parent, prompt)
                else:
                    s = slots.reserve(self.reg, slots.transition(self.task(task), "running", "queued"),
                                      key=task, parent=parent, owner=me, resources={"prompt": prompt})
                break
            except slots.Full:
                if attempt == 20:
                    return "refused full"
            except slots.Exists as e:
                return "exists " + e.slot.id
            except slots.TotalReached:
                return "refused total"
            except slots.NoParent:
                return "refused noparent"
            except slots.TooDeep:
                return "refused toodeep"
            except agentstate.ConflictError:
                return "conflict"  # the task left queued: its slot came and went
            # At the cap: free the slots of dead owners, then back off a
            # little before trying again (a dispatcher's policy; nothing
            # waits on it).
            if self.mode == "bare":
                self.bare_reap()
            else:
                slots.reap(self.reg, self.fail_task)
            time.sleep((1 + attempt) / 1000)
        return s

    def start(self, s, task, flags, children):
        if "pause-before-start" in flags:
            return "paused " + s.id
        argv = list(self.agent.get("argv") or [])
        if "fail" in flags:
            argv[0] = os.path.join(os.environ.get("TMPDIR", "/tmp"), "no-such-agent")
        plan = "long" if "long" in flags else "short"
        env = dict(os.environ)
        env.update(kv.split("=", 1) for kv in self.agent.get("env") or [])
        try:
            # Not this dispatcher's stdout, its answers: an agent that held it
            # would keep the test waiting for the answer of a dispatcher killed.
            child = subprocess.Popen(argv + [s.id, self.task(task), plan], env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, pass_fds=(REPORTS, BARRIER))
        except OSError:
            s = slots.abort(self.reg, s.id, slots.transition(self.task(task), "blocked", "running"))
            os.remove(s.resources["prompt"])  # this dispatcher created it; the slot says where
            return "aborted %s %s" % (s.id, s.resources["prompt"])
        try:
            to = claim.owner_of(child.pid)  # before the wait reaps it: the agent, or its zombie
        finally:
            t = threading.Thread(target=child.wait)
            t.start()
            children.append(t)
        if "pause-before-handover" in flags:
            return "paused " + s.id
        if self.mode == "handover":
            try:
                slots.hand_over(self.reg, s.id, to)
            except slots.Released:
                child.kill()
                return "lost " + s.id
            except slots.Adopted:
                pass  # the agent adopted first
        return "ok %s %d" % (s.id, child.pid)

    # The agent.

    def run_agent(self, slot_id, task, plan):
        def report(line):
            os.write(REPORTS, (line + "\n").encode())  # one write, shorter than PIPE_BUF

        try:
            me = claim.self_owner()
        except Exception as e:
            report("error %s %s" % (slot_id, e))
            raise
        report("started %s %d %d" % (slot_id, me.pid, me.start))
        try:
            if self.mode == "handover":
                try:
                    slots.adopt(self.reg, slot_id, owner=me)
                except slots.Released:
                    report("refused " + slot_id)
                    return  # the slot is gone: do not work
                report("adopted " + slot_id)
            if plan == "short":
                try:
                    if self.mode == "bare":
                        self.bare_release(slot_id, task)
                    else:
                        slots.release(self.reg, slot_id, slots.transition(task, "completed", "running"))
                    report("released " + slot_id)
                except slots.HasChildren:
                    report("long " + slot_id)
                    plan = "long"
        except Exception as e:  # reported to the test; the CONTROL's agents meet conflicts
            message = ("%s: %s" % (type(e).__name__, e)).replace("\n", " ")
            report("error %s %s" % (slot_id, message))
            sys.exit("agent: " + message)
        os.close(BARRIER)
        if plan == "long":
            threading.Event().wait(300)  # until killed

    # The CONTROL's operations: the registry read, changed and written back
    # without its lock (an atomic replace: never torn, but racing), the task
    # changed in a call of its own.

    def bare_reserve(self, me, task, parent, prompt):
        g = agentstate.load(self.reg)
        agents = g.get("agents") or []
        for a in agents:
            if a.get("key") == task:
                raise slots.Exists("reserve", self.reg, task, slots.Slot(id=a["id"]))
        s = {"id": "%s-%d" % (task, os.getpid()), "key": task, "depth": 0, "owner": me.to_json(),
             "reserved_at": agentstate._json.go_time(), "docs": [task + "/status.json"], "resources": {"prompt": prompt}}
        if parent:
            p = [a for a in agents if a["id"] == parent]
            if not p:
                raise slots.NoParent("reserve", self.reg)
            s["parent"] = parent
            s["depth"] = p[0]["depth"] + 1
        if s["depth"] > g.get("max_depth", 0):
            raise slots.TooDeep("reserve", self.reg)
        if len(agents) >= g.get("max_concurrent", 0):
            raise slots.Full("reserve", self.reg)
        agentstate.mutate(self.task(task), lambda d: agentstate.transition(d, "running", "queued"))
        g["agents"] = agents + [s]
        g["active_count"] = g.get("active_count", 0) + 1
        g["total_spawned"] = g.get("total_spawned", 0) + 1
        self.bare_write(g)
        return slots.Slot(id=s["id"])

    def bare_release(self, slot_id, task):
        g = agentstate.load(self.reg)
        g["agents"] = [a for a in g.get("agents") or [] if a["id"] != slot_id]
        g["active_count"] = g.get("active_count", 0) - 1
        self.bare_write(g)
        agentstate.mutate(task, lambda d: agentstate.transition(d, "completed", "running"))

    def bare_reap(self):
        g = agentstate.load(self.reg)
        agents = g.get("agents") or []
        dead = [a for a in agents if claim.local(claim.Owner.from_json(a.get("owner"))) == claim.Liveness.DEAD]
        g["agents"] = [a for a in agents if a not in dead]
        g["active_count"] = g.get("active_count", 0) - len(dead)
        self.bare_write(g)
        for a in dead:
            try:
                agentstate.mutate(self.task(a["key"]), lambda d: agentstate.transition(d, "failed", "running"))
            except agentstate.ConflictError:
                pass

    def bare_write(self, g):
        tmp = "%s.%d.bare" % (self.reg, os.getpid())
        with open(tmp, "w") as fh:
            json.dump(g, fh, indent=2)
        os.replace(tmp, self.reg)


def answer(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main():
    fleet = Fleet()
    if sys.argv[1:2] == ["dispatcher"]:
        fleet.dispatcher()
    elif sys.argv[1:2] == ["agent"] and len(sys.argv) == 5:
        fleet.run_agent(*sys.argv[2:5])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
