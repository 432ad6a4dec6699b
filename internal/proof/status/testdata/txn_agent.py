#!/usr/bin/env python3
"""A Python agent that changes several status documents in one transaction,
through the repository's Python package (python/, import agentstate):
agentstate.mutate_all follows the protocol of docs/PROTOCOL.md
(Transactions, Recovery).

Usage:
  txn_agent.py toggle REGISTRY TASK... [--rounds N] [--die-at STEP] [--two]
  txn_agent.py spawn REGISTRY TASK...
  txn_agent.py recover PATH
  txn_agent.py check REGISTRY TASK [--basic]

toggle: N transactions (default 1), each on the registry and one task (in
turn): the task goes queued <-> running, the registry's active_count and
agents follow, total_spawned and the task's runs count the transaction.
With --die-at STEP the agent SIGKILLs itself at that step of its first
commit of two documents (marker 0, temp 0, marker 1, temp 1, prepared,
journal, committed, renamed 0, renamed 1, installed, forgotten, unmarked 0,
unmarked 1), as the Go commit hook does. --two is the control: the same
change as two mutate calls (the registry's, then the task's), and --die-at
"between" dies between them.

spawn: admission control, for each task in turn: spawn it (queued ->
running, registered) when active_count < max_concurrent, retrying until
there is room, then finish it (running -> completed, unregistered), each
step one transaction.

recover: take PATH's lock, complete or undo a transaction left on it, and
release the lock (the next locker's duty). Exit status 1 and "untrusted
..." or "conflict ..." on stderr when recovery stops.

check: read the registry and the task under their locks (load_all, which
completes or undoes a transaction left on them) and print "view {json}":
the registry's active_count and number of agents, and the task's status.
With --basic it skips the recovery, as a client of the basic protocol does:
the CONTROL.

Talks to the Go test over stdout: "ready", then one line on stdin starts
it; "ack" after each committed transaction; "dying" before a SIGKILL;
"result {json}" at the end.
"""

import json
import os
import signal
import sys
import time

import agentlib  # noqa: F401
import agentstate
from agentstate import _txn

DIE_AT = None


def die(step):
    print("dying", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)


def crash(step):
    if step == DIE_AT:
        die(step)
    return False


class AtCapacity(Exception):
    pass


def toggle_registry(r, state, name):
    r["total_spawned"] = r.get("total_spawned", 0) + 1
    agents = r.get("agents") or []
    if state == "running":
        r["active_count"] = r.get("active_count", 0) - 1
        r["agents"] = [a for a in agents if a != name]
    else:
        r["active_count"] = r.get("active_count", 0) + 1
        r["agents"] = agents + [name]


def toggle_task(t, state):
    t["runs"] = t.get("runs", 0) + 1
    t["status"] = "queued" if state == "running" else "running"


def toggle(docs):
    r, t = docs
    state = t.get("status")
    toggle_registry(r, state, t.get("task", ""))
    toggle_task(t, state)


def toggle_two(reg, task):
    # The control: the task's state read without a lock, then the registry
    # and the task changed by two mutate calls.
    t = agentstate.load(task)
    state = t.get("status")
    agentstate.mutate(reg, lambda r: toggle_registry(r, state, t.get("task", "")))
    if DIE_AT == "between":
        die("between")
    agentstate.mutate(task, lambda t: toggle_task(t, state))


def spawn(docs):
    r, t = docs
    if r.get("active_count", 0) >= r.get("max_concurrent", 0):
        raise AtCapacity()
    if t.get("status") != "queued":
        raise ValueError("task is not queued")
    r["active_count"] = r.get("active_count", 0) + 1
    r["total_spawned"] = r.get("total_spawned", 0) + 1
    r["agents"] = (r.get("agents") or []) + [t["task"]]
    t["status"] = "running"


def finish(docs):
    t, r = docs
    agentstate.transition(t, "completed", "running")
    r["active_count"] = r.get("active_count", 0) - 1
    r["agents"] = [a for a in r.get("agents") or [] if a != t["task"]]


def recover(path):
    try:
        agentstate.load_all([path])
    except agentstate.UntrustedError as e:
        sys.exit("untrusted: %s" % e)
    except agentstate.TxConflictError as e:
        sys.exit("conflict: %s" % e)


def check(reg, task, basic):
    if basic:
        _txn.recover = lambda *a: []  # lock, read, replace, unlock
    r, t = agentstate.load_all([reg, task])
    print("view " + json.dumps({"Active": r.get("active_count", 0), "Agents": len(r.get("agents") or []), "State": t.get("status", "")}), flush=True)


def main():
    global DIE_AT
    args = sys.argv[1:]
    mode = args.pop(0)
    if mode == "check":
        check(args[0], args[1], "--basic" in args)
        return
    rounds = 1
    two = "--two" in args
    if two:
        args.remove("--two")
    if "--rounds" in args:
        i = args.index("--rounds")
        rounds = int(args[i + 1])
        del args[i:i + 2]
    if "--die-at" in args:
        i = args.index("--die-at")
        DIE_AT = args[i + 1]
        del args[i:i + 2]
        _txn._step = crash
    if mode == "recover":
        recover(args[0])
        return
    reg, tasks = args[0], args[1:]
    print("ready", flush=True)
    sys.stdin.readline()
    acked = rejected = 0
    if mode == "toggle":
        for n in range(rounds):
            task = tasks[n % len(tasks)]
            if two:
                toggle_two(reg, task)
            else:
                agentstate.mutate_all([reg, task], toggle)
            acked += 1
            print("ack", flush=True)
    elif mode == "spawn":
        for task in tasks:
            while True:
                try:
                    agentstate.mutate_all([reg, task], spawn)
                    break
                except AtCapacity:
                    rejected += 1
                    time.sleep(0.001)  # back off; the Go agents do the same
            print("ack", flush=True)
            agentstate.mutate_all([task, reg], finish)
            acked += 1
            print("ack", flush=True)
    print("result " + json.dumps({"Acked": acked, "Rejected": rejected}), flush=True)


if __name__ == "__main__":
    main()
