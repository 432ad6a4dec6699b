#!/usr/bin/env python3
"""One operation of the repository's Python package (python/, import
agentstate.slots) on a registry, for the Go tests that compare it with
package slots (python_layout_linux_test.go).

Usage: slots_ops.py REG OP ARGS

ARGS is a JSON object:
  reserve   {"id", "key", "parent", "owner", "resources", "members",
             "task": PATH, "to": STATE, "from": STATE}   (task: a transition edit)
  adopt     {"id", "owner"}
  handover  {"id", "to"}
  release   {"id"}            abort {"id"}
  reap      {"dead": [PID...]}  owners with these pids are dead, others alive
  list      {}

Prints one JSON object: {"slot": SLOT} (or {"slots": [...]}, {"released":
[...]}) and "error", the name of the refusal's class, if there was one.
"""

import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "python", "src")))
from agentstate import claim, slots  # noqa: E402
from agentstate.claim import Liveness, Owner  # noqa: E402


def slot_json(s):
    return {"id": s.id, "key": s.key, "parent": s.parent, "depth": s.depth, "owner": s.owner.to_json(),
            "reserved_at": s.reserved_at, "adopted_at": s.adopted_at, "docs": s.docs, "resources": s.resources,
            "members": s.members}


def main():
    reg, op, args = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    out = {}
    try:
        if op == "reserve":
            edits = [slots.transition(args["task"], args["to"], args["from"])] if args.get("task") else []
            out["slot"] = slot_json(slots.reserve(reg, *edits, id=args.get("id"), key=args.get("key", ""), parent=args.get("parent", ""),
                                                  owner=Owner.from_json(args["owner"]), resources=args.get("resources"),
                                                  members=args.get("members")))
        elif op == "adopt":
            out["slot"] = slot_json(slots.adopt(reg, args["id"], owner=Owner.from_json(args["owner"])))
        elif op == "handover":
            out["slot"] = slot_json(slots.hand_over(reg, args["id"], Owner.from_json(args["to"])))
        elif op in ("release", "abort"):
            out["slot"] = slot_json(getattr(slots, op)(reg, args["id"]))
        elif op == "reap":
            dead = set(args["dead"])
            r = slots.reap(reg, check=lambda o: Liveness.DEAD if o.pid in dead else Liveness.ALIVE)
            out["released"] = [slot_json(s) for s in r.released]
        elif op == "list":
            out["slots"] = [dict(slot_json(x.slot), liveness=str(x.liveness)) for x in slots.list(reg, check=claim.local)]
        else:
            raise SystemExit(__doc__)
    except slots.Refused as e:
        out["error"] = type(e).__name__
        if e.slot is not None:
            out["slot"] = slot_json(e.slot)
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
