#!/usr/bin/env python3
"""Claims of the tests' dispatcher (see harness_linux_test.go) taken,
judged and reaped by the repository's Python package (python/, import
agentstate.claim), for the Go tests that compare it with package claim.

Usage:
  claims.py owner PID      print the owner of process PID as JSON
  claims.py self           print this process's owner as JSON, then wait for
                           the end of input
  claims.py judge          read a JSON list of owners, print the list of
                           their liveness ("alive", "dead", "unknown")
  claims.py judge-pid-only the CONTROL: judge by the pid alone (kill(pid, 0))
  claims.py register DIR ID...
                           register the agents in the fleet in DIR, owned by
                           this process, print "ready", wait for the end of
                           input
  claims.py reap DIR       wait for "go", then reap the fleet in DIR until a
                           pass releases nothing: print "released ID" per
                           claim, then "done"
"""

import json
import os
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "python", "src")))
import agentstate  # noqa: E402
from agentstate import claim  # noqa: E402


def registry(directory):
    return os.path.join(directory, "registry.json")


def task(directory, agent_id):
    return os.path.join(directory, "task-" + agent_id + ".json")


def register(directory, ids):
    me = claim.self_owner().to_json()
    for agent_id in ids:
        def fn(docs, agent_id=agent_id):
            r, t = docs
            if t.get("status") == "running":
                raise RuntimeError("task %s is running" % agent_id)
            r["agents"] = (r.get("agents") or []) + [{"id": agent_id, "task": task(directory, agent_id), "owner": me, "beat": time.time_ns()}]
            r["active_count"] = r.get("active_count", 0) + 1
            t["status"] = "running"
        agentstate.mutate_all([registry(directory), task(directory, agent_id)], fn)


def claims(reg):
    return [claim.Claim(a["id"], claim.Owner.from_json(a.get("owner")), [a["task"]]) for a in reg.get("agents") or []]


def release(docs, c):
    """What the Go tests' unregister does for a reaper."""
    r, t = docs  # the registry, then the claim's task
    if t.get("status") != "running":
        raise RuntimeError("task of %s is %s, not running" % (c.id, t.get("status")))
    r["agents"] = [a for a in r["agents"] if a["id"] != c.id]
    r["active_count"] -= 1
    t["status"] = "failed"
    t["reaped"] = t.get("reaped", 0) + 1


registry_path = ""


def pid_only(o):
    try:
        os.kill(o.pid, 0)
    except ProcessLookupError:
        return claim.Liveness.DEAD
    except OSError:
        pass
    return claim.Liveness.ALIVE


def main():
    global registry_path
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "owner":
        print(json.dumps(claim.owner_of(int(args[0])).to_json()), flush=True)
    elif mode == "self":
        print(json.dumps(claim.self_owner().to_json()), flush=True)
        sys.stdin.read()
    elif mode in ("judge", "judge-pid-only"):
        check = claim.local if mode == "judge" else pid_only
        owners = [claim.Owner.from_json(o) for o in json.load(sys.stdin)]
        print(json.dumps([str(check(o)) for o in owners]), flush=True)
    elif mode == "register":
        register(args[0], args[1:])
        print("ready", flush=True)
        sys.stdin.read()
    elif mode == "reap":
        registry_path = registry(args[0])
        if sys.stdin.readline().strip() != "go":
            sys.exit("no go")
        while True:
            res = claim.reap(registry_path, claims, release)
            for c in res.released:
                print("released " + c.id, flush=True)
            if not res.released:
                break
        print("done", flush=True)
    else:
        sys.exit("unknown mode " + mode)


if __name__ == "__main__":
    main()
