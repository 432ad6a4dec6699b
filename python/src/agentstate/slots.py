"""Admission under caps with a registry of owned slots: a dispatcher
reserves a slot before it starts an agent, the agent becomes the slot's
owner, and the slot ends when the agent releases it, when a failed start
aborts it, or when a reaper finds its owner dead.

This is the Go package github.com/agentstate/core/status/slots for Python
programs: the same operations on the same registry, in the format and by
the rules of docs/PROTOCOL.md (Registries of slots), written byte for byte
as Go writes it. Each operation is one transaction (mutate_all) over the
registry and the slot's other documents, with the caller's change to them::

    from agentstate import claim, slots

    # the dispatcher
    try:
        s = slots.reserve(registry, slots.transition(task, "running", "queued"),
                          key="acme/api/fix-42", resources={"prompt": prompt_file})
    except slots.Exists as e:
        s = e.slot                      # a retried spawn: its slot, no second agent
    # ... start the agent with s.id; if that fails:
    slots.abort(registry, s.id, slots.transition(task, "queued", "running"))
    os.remove(prompt_file)              # its own file; the resources a slot returns are for reapers

    # the agent, before it works, and when it is done
    slots.adopt(registry, slot_id)
    slots.release(registry, slot_id, slots.transition(task, "completed", "running"))

    # anyone, at start-up, on a timer, before admitting work
    reaped = slots.reap(registry, fail_task)

Refusals are exceptions that derive from :class:`Refused` (an
agentstate.Error), one per rule: :class:`Full`, :class:`TotalReached`,
:class:`TooDeep`, :class:`NoParent`, :class:`Exists`, :class:`Released`,
:class:`Adopted`, :class:`HasChildren`, :class:`InvalidRegistry`. An
operation that raises one (or any other error) wrote nothing.

Ownership: the reserver records itself (it counts the slot before the agent
exists, or the cap would overshoot); the working process then becomes the
owner, once, by :func:`adopt` (it records itself) or :func:`hand_over` (the
reserver records :func:`agentstate.claim.owner_of` the child's pid, taken
before it waits for the child). Owners are judged by the liveness rules of
:mod:`agentstate.claim`. The Go package doc (Ownership) says why the death of
either process at any moment leaves the slot to a live owner or to a
reaper.

Nothing here removes a file, directory or session that a registry names:
:func:`abort`, :func:`release` and :func:`reap` return the slot's resources
to the caller, who decides what it trusts before removing anything (a member
of a shared workspace who can write the registry could otherwise make a
privileged reaper delete files of their choice). Likewise no document is
opened by a name read from the registry: a reaper opens a slot's documents
through the edit function it gives :func:`reap`, for which :func:`doc_path`
resolves a recorded name inside the registry's directory.
"""

from __future__ import annotations

import builtins
import copy
import dataclasses
import json
import os
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence, Set, Tuple

from . import _files, _json, _lock, _store, _txn
from ._store import DEFAULT_MAX_SIZE, DEFAULT_PERM, DEFAULT_TIMEOUT, JSONObject, Path
from .claim import Check, Liveness, Owner, _Cache, local, self_owner
from .errors import ConflictError, CorruptError, Error, InvalidArgument

# The registry's members, in the order Go's Registry declares them; those
# in _OMIT_ZERO are left out when 0 (Go's omitempty).
_REGISTRY_MEMBERS = ("agents", "active_count", "total_spawned", "max_concurrent", "max_total", "max_depth")
_OMIT_ZERO = frozenset(("max_total",))
_COUNTS = _REGISTRY_MEMBERS[1:]
_FOLDED = {_json.fold(name): name for name in _REGISTRY_MEMBERS}

# A slot's members, in their order in the file.
_SLOT_MEMBERS = ("id", "key", "parent", "depth", "owner", "reserved_at", "adopted_at", "docs", "resources")

_MAX_NAME = 256  # the longest id or key, in bytes
_MAX_DOCS = _txn.MAX_DOCUMENTS - 1  # a slot's documents and its registry fit one transaction
_INT64 = (-(1 << 63), 1 << 63)
_UNIX_EPOCH_NS = _json.go_time_normal("1970-01-01T00:00:00Z")[1]


@dataclass
class Slot:
    """One active slot of a registry. Its JSON form is the format of
    docs/PROTOCOL.md; operations return copies, which the caller may keep
    and change."""

    id: str  #: names the slot in its registry, for as long as it exists
    key: str = ""  #: held by no other active slot ("" for none)
    parent: str = ""  #: the id of the slot it was spawned under ("" for a root)
    depth: int = 0  #: 0 for a root, else the parent's depth + 1
    owner: Owner = Owner()  #: its reserver, until the working process adopts it or is handed it
    reserved_at: str = ""  #: when it was admitted (RFC 3339, as Go writes it)
    adopted_at: str = ""  #: when its working process became its owner ("" until then)
    docs: List[str] = field(default_factory=list)  #: its other documents, relative to the registry's directory (see doc_path)
    resources: Dict[str, str] = field(default_factory=dict)  #: what to remove when it ends; never acted on here
    members: Dict[str, Any] = field(default_factory=dict)  #: the program's own members (an agent's type...)
    # The members' values and texts as read, which are written back as read
    # (re-indented) while the value is unchanged, as Go keeps them.
    _raw: Dict[str, Tuple[Any, str]] = field(default_factory=dict, repr=False, compare=False)
    # Its text in the registry, once encoded (not kept by replace()).
    _text: Optional[str] = field(default=None, init=False, repr=False, compare=False)

    @property
    def adopted(self) -> bool:
        """Whether its working process owns it (by adopt or hand_over)."""
        return bool(self.adopted_at)


class Edit(NamedTuple):
    """A change of a slot's other documents, made in the transaction of the
    operation it is given to: fn(docs, slot) runs under the locks of the
    registry and docs, after the operation's own change, with the documents
    as dicts in the order of docs, and changes them in place. If it raises,
    nothing is written."""

    docs: Sequence[Path]
    fn: Optional[Callable[[List[JSONObject], Slot], Any]] = None


def transition(doc: Path, to: str, *from_states: str) -> Edit:
    """The Edit that moves doc's status to state to from one of
    from_states (agentstate.transition), as a task's status.json follows its
    slot: queued to running at reserve, running to completed at release."""
    return Edit([doc], lambda docs, _: _store.transition(docs[0], to, *from_states))


class Refused(Error):
    """An operation refused by the registry's rules; nothing was written.
    ``slot`` is the slot the refusal is about, where there is one (the slot
    that holds the key, for Exists)."""

    reason = "refused"

    def __init__(self, op: str, path: str, detail: str = "", slot: Optional[Slot] = None) -> None:
        super().__init__("agentstate: slots: %s in %s: %s%s" % (op, path, self.reason, ": " + detail if detail else ""), path)
        self.slot = slot


class Full(Refused):
    """max_concurrent slots are active (0 admits nothing)."""

    reason = "registry full"


class TotalReached(Refused):
    """max_total slots have been admitted."""

    reason = "registry total reached"


class TooDeep(Refused):
    """The slot would be deeper than max_depth (0: roots only)."""

    reason = "deeper than max_depth"


class NoParent(Refused):
    """The parent named holds no active slot."""

    reason = "parent holds no active slot"


class Exists(Refused):
    """A slot with the request's key (or id) is active: ``slot`` is that
    slot. A retried spawn takes it and must not start a second process."""

    reason = "slot already active"


class Released(Refused):
    """No active slot has this id: it was released, aborted or reaped (or
    never reserved). A process that finds its slot released must not do its
    work."""

    reason = "slot released"


class Adopted(Refused):
    """The slot's working process owns it already (``slot``): another
    process may neither adopt it nor abort it."""

    reason = "slot adopted"


class HasChildren(Refused):
    """Active slots name this one (``slot``) as their parent."""

    reason = "slot has active children"


class InvalidRegistry(Refused, ValueError):
    """The registry breaks the rules of docs/PROTOCOL.md (an id repeated, a
    parent missing, a depth that is not its parent's + 1...); an operator
    repairs it (corestate set). A member of the wrong type makes the
    registry corrupt instead (agentstate.CorruptError)."""

    reason = "invalid registry"


class Listed(NamedTuple):
    """One slot of :func:`list`, for an ops view."""

    slot: Slot
    liveness: Liveness  #: its owner's, as the check tells it now
    age: float  #: seconds since it was reserved


class Reaped(NamedTuple):
    """What :func:`reap` did."""

    released: List[Slot]  #: released, as they were, with their resources: the caller's to remove
    unknown: List[Slot]  #: kept because their owner's liveness cannot be told from here


# The registry document.

class _Registry:
    """A registry as read: its slots, its counts and policy, and the
    members it does not declare (their texts as read)."""

    def __init__(self) -> None:
        self.agents: List[Slot] = []
        self.counts: Dict[str, int] = dict.fromkeys(_COUNTS, 0)
        self.others: Dict[str, str] = {}
        # The slots and counts as read. Operations replace a slot they
        # change instead of changing it in place, so that comparing the
        # objects tells whether anything changed.
        self.read: Tuple[List[Slot], Dict[str, int]] = ([], {})

    def find(self, id: str) -> int:
        for i, s in enumerate(self.agents):
            if s.id == id:
                return i
        return -1

    def has_children(self, id: str) -> bool:
        return any(s.parent == id for s in self.agents)

    def parents(self) -> Set[str]:
        """The ids that slots name as their parent."""
        return {s.parent for s in self.agents if s.parent}

    def settle(self) -> None:
        """Writes the counts from the slots."""
        self.counts["active_count"] = len(self.agents)
        self.counts["total_spawned"] = max(self.counts["total_spawned"], len(self.agents))

    def check(self, op: str, path: str) -> None:
        """The registry rules of docs/PROTOCOL.md."""
        def invalid(detail: str) -> InvalidRegistry:
            return InvalidRegistry(op, path, detail)

        for name in ("max_concurrent", "max_total", "max_depth"):
            if self.counts[name] < 0:
                raise invalid("%s %d" % (name, self.counts[name]))
        by_id: Dict[str, Slot] = {}
        keys = set()
        for i, s in enumerate(self.agents):
            problem = _name_problem("id", s.id)
            if problem:
                raise invalid("slot %d: %s" % (i, problem))
            if s.id in by_id:
                raise invalid("two slots with the id %r" % s.id)
            by_id[s.id] = s
            if s.key:
                problem = _name_problem("key", s.key)
                if problem:
                    raise invalid("slot %s: %s" % (s.id, problem))
                if s.key in keys:
                    raise invalid("two slots with the key %r" % s.key)
                keys.add(s.key)
            if len(s.docs) > _MAX_DOCS:
                raise invalid("slot %s: %d documents, limit %d" % (s.id, len(s.docs), _MAX_DOCS))
            for d in s.docs:
                problem = _doc_path_problem(d)
                if problem:
                    raise invalid("slot %s: %s" % (s.id, problem))
            if "" in s.resources:
                raise invalid("slot %s: a resource without a name" % s.id)
        for s in self.agents:
            want = 0
            if s.parent:
                p = by_id.get(s.parent)
                if p is None or s.parent == s.id:
                    raise invalid("slot %s: parent %r is not another active slot" % (s.id, s.parent))
                want = p.depth + 1
            if s.depth != want:
                raise invalid("slot %s: depth %d, want %d" % (s.id, s.depth, want))


class _Codec:
    """Reads and writes a registry as Go's Registry type does (see
    _store.Codec): an operation that leaves the slots and counts as they
    were writes nothing, whatever the registry's layout."""

    def decode(self, data: Optional[bytes], shown: str, op: str) -> _Registry:
        reg = _decode(data, shown, op)
        reg.read = (builtins.list(reg.agents), dict(reg.counts))
        return reg

    def encode(self, reg: _Registry) -> Optional[bytes]:
        agents, counts = reg.read
        if reg.counts == counts and len(reg.agents) == len(agents) and all(a is b for a, b in zip(reg.agents, agents)):
            return None
        return _encode(reg)


_CODEC = _Codec()


def _decode(data: Optional[bytes], shown: str, op: str) -> _Registry:
    reg = _Registry()
    if data is None:
        return reg
    parsed = _json.decode(data, shown, op, _json.JSON)

    def corrupt(reason: str) -> CorruptError:
        return CorruptError(shown, 0, reason, op)

    for name, value in parsed.values.items():
        if name == "agents":
            if value is None:
                continue
            if not isinstance(value, builtins.list):
                raise corrupt("member agents is not an array")
            elems: List[Any] = value
            for i, (elem, raw) in enumerate(zip(elems, _json.elements(parsed.raw[name]))):
                if not isinstance(elem, dict):
                    raise corrupt("agents[%d] is not an object" % i)
                slot = _recent.get(raw)
                if slot is None:
                    slot = _decode_slot(elem, raw, _Corrupt(shown, op, "agents[%d] member " % i))
                    _remember(raw, slot)
                reg.agents.append(slot)
        elif name in reg.counts:
            if value is not None:
                reg.counts[name] = _integer(value, _Corrupt(shown, op, "member "), name)
        elif _json.fold(name) in _FOLDED:
            raise corrupt("name %r differs from member %r only in case (Go would read it as %r, other languages would not)" % (name, _FOLDED[_json.fold(name)], _FOLDED[_json.fold(name)]))
        else:
            reg.others[name] = parsed.raw[name]
    return reg


class _Corrupt:
    """Makes the CorruptError of a member of the wrong type."""

    def __init__(self, shown: str, op: str, where: str) -> None:
        self.shown, self.op, self.where = shown, op, where

    def __call__(self, name: str, reason: str) -> CorruptError:
        return CorruptError(self.shown, 0, self.where + name + ": " + reason, self.op)


# Slots decoded recently, by their text in a registry: the next operation
# usually reads the slots the last one wrote, and decoding and encoding them
# again was most of an operation's work. The slots are shared: operations
# replace a slot instead of changing it, and give callers copies.
_recent: Dict[str, Slot] = {}
_RECENT_MAX = 4096


def _remember(raw: str, slot: Slot) -> None:
    if len(_recent) >= _RECENT_MAX:
        _recent.clear()
    _recent[raw] = slot


def _integer(value: Any, corrupt: _Corrupt, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not _INT64[0] <= value < _INT64[1]:
        raise corrupt(name, "%s is not an integer" % _short(value))
    return value


def _string(value: Any, corrupt: _Corrupt, name: str) -> str:
    if not isinstance(value, str):
        raise corrupt(name, "%s is not a string" % _short(value))
    return value


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _decode_slot(elem: Dict[str, Any], raw: str, corrupt: _Corrupt) -> Slot:
    s = Slot(id="")
    for name, text in _json.object_members(raw):
        value = elem[name]
        if name not in _SLOT_MEMBERS:
            s.members[name] = value
            s._raw[name] = (json.loads(text), text)
        elif value is None:
            continue  # as Go reads null: the member's zero value
        elif name in ("id", "key", "parent"):
            setattr(s, name, _string(value, corrupt, name))
        elif name == "depth":
            s.depth = _integer(value, corrupt, name)
        elif name == "owner":
            try:
                s.owner = Owner.from_json(value)
            except InvalidArgument as e:
                raise corrupt(name, str(e)) from None
        elif name in ("reserved_at", "adopted_at"):
            setattr(s, name, _time(_string(value, corrupt, name), corrupt, name))
        elif name == "docs":
            if not isinstance(value, builtins.list):
                raise corrupt(name, "not an array")
            docs: List[Any] = value
            s.docs = [_string("" if d is None else d, corrupt, name) for d in docs]
        else:  # resources
            if not isinstance(value, dict):
                raise corrupt(name, "not an object")
            s.resources = {k: _string("" if v is None else v, corrupt, name) for k, v in value.items()}
    return s


def _time(text: str, corrupt: _Corrupt, name: str) -> str:
    """text as Go's time.Time reads and writes it back; "" for Go's zero
    time, which Go leaves out."""
    if not _json.go_time_ok(text):
        raise corrupt(name, "%r is not an RFC 3339 time" % text)
    try:
        normal, instant = _json.go_time_normal(text)
    except ValueError as e:
        raise corrupt(name, "%r: %s" % (text, e)) from None
    return normal if instant else ""


def _encode(reg: _Registry) -> bytes:
    parts = []
    for name in _REGISTRY_MEMBERS:
        if name == "agents":
            text = "[" + ",".join("\n    " + _slot_text(s) for s in reg.agents) + "\n  ]" if reg.agents else "[]"
        elif reg.counts[name] == 0 and name in _OMIT_ZERO:
            continue
        else:
            text = str(reg.counts[name])
        parts.append('\n  "%s": %s' % (name, text))
    for name in sorted(reg.others):
        parts.append("\n  " + _json.encode_string(name, html=True) + ": " + reg.others[name])
    return ("{" + ",".join(parts) + "\n}\n").encode("utf-8")


def _slot_text(s: Slot) -> str:
    if s._text is None:
        s._text = _encode_slot(s)
        _remember(s._text, s)  # as the next operation will read it
    return s._text


def _copy(s: Slot) -> Slot:
    """A copy of a registry's slot for a caller, who may change it."""
    return dataclasses.replace(s, docs=builtins.list(s.docs), resources=dict(s.resources), members=copy.deepcopy(s.members))


def _encode_slot(s: Slot) -> str:
    """The slot at nesting level 2 (an element of agents), laid out as
    docs/PROTOCOL.md says and as Go writes it."""
    members: List[Tuple[str, str]] = [("id", _json.encode_string(s.id))]
    if s.key:
        members.append(("key", _json.encode_string(s.key)))
    if s.parent:
        members.append(("parent", _json.encode_string(s.parent)))
    members.append(("depth", str(s.depth)))
    members.append(("owner", _json.encode_value(s.owner.to_json(), 3)))
    for name in ("reserved_at", "adopted_at"):
        if getattr(s, name):
            members.append((name, _json.encode_string(getattr(s, name))))
    if s.docs:
        members.append(("docs", _json.encode_value(s.docs, 3)))
    if s.resources:
        members.append(("resources", _json.encode_value(dict(sorted(s.resources.items())), 3)))
    for name in sorted(s.members):
        if name in _SLOT_MEMBERS:
            raise InvalidArgument("agentstate: slot %s: members holds %r, a member Slot declares" % (s.id, name))
        value = s.members[name]
        kept = s._raw.get(name)
        if kept is not None and _json.same(kept[0], value):
            members.append((name, _json.reindent(kept[1], 3)))
        else:
            members.append((name, _json.encode_value(value, 3)))
    return "{" + ",".join("\n      " + _json.encode_string(n) + ": " + v for n, v in members) + "\n    }"


def _name_problem(what: str, s: str) -> str:
    """Why s may not be an id or a key ("" if it may): 1 to 256 bytes of
    UTF-8 without control characters."""
    if not s:
        return "empty %s" % what
    n = len(s.encode("utf-8", "surrogatepass"))
    if n > _MAX_NAME:
        return "%s of %d bytes (at most %d)" % (what, n, _MAX_NAME)
    if any(c < " " or c == "\x7f" for c in s):
        return "%s %r holds a control character" % (what, s)
    return ""


def _doc_path_problem(p: str) -> str:
    """Why p may not be a slot's document path ("" if it may): relative,
    with forward slashes, no empty, "." or ".." element."""
    problem = _name_problem("document path", p)
    if problem:
        return problem
    if p.startswith("/") or "\\" in p:
        return "document path %r is not relative with forward slashes" % p
    for e in p.split("/"):
        if e in ("", ".", ".."):
            return "document path %r has an element %r" % (p, e)
    return ""


def doc_path(registry: Path, name: str) -> str:
    """The path of a document that a slot of the registry names (an element
    of Slot.docs): name resolved against the registry's directory, after
    checking that it has the shape docs/PROTOCOL.md requires and that its
    directory, if it exists, stays inside the registry's directory with its
    symbolic links followed. Use it to open a slot's documents for
    :func:`reap`; raises InvalidRegistry for another shape, or a name that
    leads out through a link."""
    shown = _shown(registry)
    problem = _doc_path_problem(name)
    if problem:
        raise InvalidRegistry("doc path", shown, problem)
    base = os.path.dirname(shown)
    path = os.path.join(base, *name.split("/"))
    if "/" in name:
        real_base = os.path.realpath(base or os.curdir)
        real = os.path.realpath(os.path.dirname(path))
        if os.path.commonpath([real_base, real]) != real_base:
            raise InvalidRegistry("doc path", shown, "document %s leads out of %s through a symbolic link" % (name, base or os.curdir))
    return path


def _doc_name(registry: str, path: str) -> str:
    """The name a slot records for the document at path: relative to the
    registry's directory, with forward slashes; InvalidArgument unless it
    lies inside that directory."""
    try:
        rel = os.path.relpath(os.path.abspath(path), os.path.dirname(os.path.abspath(registry)))
    except ValueError:  # another drive
        rel = ""
    name = rel.replace(os.sep, "/")
    problem = "" if rel and not os.path.isabs(rel) and not rel.startswith("..") else "not inside the registry's directory"
    problem = problem or _doc_path_problem(name)
    if problem:
        raise InvalidArgument("agentstate: slots: document %s: %s" % (path, problem), path)
    return name


def _shown(path: Path) -> str:
    return os.fsdecode(os.fspath(path))


def _now() -> str:
    """The time recorded in slots: UTC in microseconds, which every
    language's clock and time type can hold (as Go records it)."""
    return _json.go_time(time.time_ns() // 1000 * 1000)


# The operations.

def _change(
    op: str,
    registry: Path,
    edits: Sequence[Edit],
    fn: Callable[[_Registry, str], Slot],
    timeout: Optional[float],
    max_size: int,
    perm: int,
) -> Slot:
    """Runs fn on the registry in one transaction with the edits'
    documents: fn changes the registry and returns the slot the operation is
    about, or raises a refusal; then the edits change their documents.
    Returns a copy of the slot."""
    out: List[Slot] = []

    def run(reg: _Registry, docs: Dict[str, JSONObject]) -> None:
        slot = _copy(fn(reg, _shown(registry)))
        out[:] = [slot]
        for e in edits:
            if e.fn is not None:
                e.fn([docs[_files.doc_key(p, op)] for p in e.docs], slot)

    _transact(op, registry, [p for e in edits for p in e.docs], run, timeout, max_size, perm)
    return out[0]


def _checked_owner(op: str, owner: Optional[Owner]) -> Owner:
    if owner is None:
        return self_owner()
    if not isinstance(owner, Owner) or owner == Owner():
        raise InvalidArgument("agentstate: slots: %s: owner %r: want a claim.Owner that names a process or a lease" % (op, owner))
    return owner


def reserve(
    registry: Path,
    *edits: Edit,
    id: Optional[str] = None,
    key: str = "",
    parent: str = "",
    owner: Optional[Owner] = None,
    resources: Optional[Dict[str, str]] = None,
    members: Optional[Dict[str, Any]] = None,
    timeout: Optional[float] = DEFAULT_TIMEOUT,
    max_size: int = DEFAULT_MAX_SIZE,
    perm: int = DEFAULT_PERM,
) -> Slot:
    """Admits a slot under the registry's policy and returns it: one
    transaction over the registry and the edits' documents, which the edits
    change (a task moves from queued to running).

    The slot records owner (by default this process: the reserver, until
    the working process adopts the slot), the edits' documents (which must
    lie in the registry's directory, or below it), resources (what the spawn
    creates, returned by abort, release and reap for the caller to remove)
    and members (the program's own, such as an agent's type). id names it
    (by default 16 random hex digits); key, if set, makes a retried spawn
    find it; parent is the id of the active slot to spawn under.

    Raises, writing nothing: Exists with the active slot that has this key
    (or id), so that a retried spawn gets its slot back and starts no second
    process; else NoParent, TooDeep, Full, TotalReached, in this order, by
    the rules of docs/PROTOCOL.md; InvalidRegistry."""
    op = "reserve"
    s = Slot(id=id if id is not None else secrets.token_hex(8), key=key, parent=parent, owner=_checked_owner(op, owner),
             resources=dict(resources or {}))
    problem = _name_problem("id", s.id) or (_name_problem("key", key) if key else "")
    if not problem and not all(isinstance(k, str) and isinstance(v, str) for k, v in s.resources.items()):
        problem = "resources: want names and values that are strings"
    if not problem and "" in s.resources:
        problem = "a resource without a name"
    if problem:
        raise InvalidArgument("agentstate: slots: reserve in %s: %s" % (_shown(registry), problem), _shown(registry))
    for name, value in (members or {}).items():
        if name in _SLOT_MEMBERS:
            raise InvalidArgument("agentstate: slots: reserve: members holds %r, a member Slot declares" % name)
        _json.encode_value(value)  # refuses what JSON cannot hold, before anything is locked
        s.members[name] = copy.deepcopy(value)
    for e in edits:
        for p in e.docs:
            name = _doc_name(_shown(registry), _shown(p))
            if name not in s.docs:
                s.docs.append(name)
    if len(s.docs) > _MAX_DOCS:
        raise InvalidArgument("agentstate: slots: reserve in %s: %d documents, limit %d" % (_shown(registry), len(s.docs), _MAX_DOCS), _shown(registry))
    s.reserved_at = _now()

    def admit(reg: _Registry, shown: str) -> Slot:
        for a in reg.agents:
            if a.id == s.id or (s.key and a.key == s.key):
                raise Exists(op, shown, "%s (key %r)" % (a.id, a.key), _copy(a))
        new = s
        if new.parent:
            i = reg.find(new.parent)
            if i < 0:
                raise NoParent(op, shown, new.parent)
            new.depth = reg.agents[i].depth + 1
        if new.depth > reg.counts["max_depth"]:
            raise TooDeep(op, shown, "depth %d, max_depth %d" % (new.depth, reg.counts["max_depth"]))
        if len(reg.agents) >= reg.counts["max_concurrent"]:
            raise Full(op, shown, "%d active, max_concurrent %d" % (len(reg.agents), reg.counts["max_concurrent"]))
        total = max(reg.counts["total_spawned"], len(reg.agents))
        if reg.counts["max_total"] > 0 and total >= reg.counts["max_total"]:
            raise TotalReached(op, shown, "%d admitted, max_total %d" % (total, reg.counts["max_total"]))
        reg.agents.append(new)
        reg.counts["total_spawned"] = total + 1
        return new

    return _change(op, registry, edits, admit, timeout, max_size, perm)


def adopt(
    registry: Path,
    id: str,
    *edits: Edit,
    owner: Optional[Owner] = None,
    timeout: Optional[float] = DEFAULT_TIMEOUT,
    max_size: int = DEFAULT_MAX_SIZE,
    perm: int = DEFAULT_PERM,
) -> Slot:
    """Makes owner (by default this process: the one that does the slot's
    work) the owner of slot id, in one transaction with the edits, and
    returns the slot. Call it before working. Raises Released if the slot is
    gone (then the process must not do the work) and Adopted if another
    owner has taken the slot over (by adopt or hand_over). Adopting a slot
    the caller owns already (handed over to it, or adopted before) writes
    nothing but the edits' changes."""
    return _take_over("adopt", registry, id, _checked_owner("adopt", owner), edits, timeout, max_size, perm)


def hand_over(
    registry: Path,
    id: str,
    to: Owner,
    *,
    timeout: Optional[float] = DEFAULT_TIMEOUT,
    max_size: int = DEFAULT_MAX_SIZE,
    perm: int = DEFAULT_PERM,
) -> Slot:
    """Makes to the owner of slot id, for a reserver that has started the
    working process (to = claim.owner_of(its pid), taken before the reserver
    waits for it, so that the pid cannot be reused meanwhile). adopt's rules
    apply: Released if the slot is gone (stop the process), Adopted if
    another owner took it over, nothing written if to owns it already."""
    if to is None:
        raise InvalidArgument("agentstate: slots: hand over: no owner")
    return _take_over("hand over", registry, id, _checked_owner("hand over", to), (), timeout, max_size, perm)


def _take_over(op: str, registry: Path, id: str, owner: Owner, edits: Sequence[Edit], timeout: Optional[float], max_size: int, perm: int) -> Slot:
    at = _now()

    def take(reg: _Registry, shown: str) -> Slot:
        i = reg.find(id)
        if i < 0:
            raise Released(op, shown, id)
        s = reg.agents[i]
        if not s.adopted_at:
            s = reg.agents[i] = dataclasses.replace(s, owner=owner, adopted_at=at)
        elif s.owner != owner:
            raise Adopted(op, shown, "%s by %s" % (id, s.owner), _copy(s))
        return s

    return _change(op, registry, edits, take, timeout, max_size, perm)


def release(
    registry: Path,
    id: str,
    *edits: Edit,
    timeout: Optional[float] = DEFAULT_TIMEOUT,
    max_size: int = DEFAULT_MAX_SIZE,
    perm: int = DEFAULT_PERM,
) -> Slot:
    """Ends slot id, the normal end of its work, in one transaction with the
    edits (its task moves from running to completed), and returns the slot
    as it was, with the resources it recorded, for the caller to remove.
    Raises Released if the slot is gone (reaped, or released before) and
    HasChildren while slots spawned under it are active."""
    return _remove("release", registry, id, False, edits, timeout, max_size, perm)


def abort(
    registry: Path,
    id: str,
    *edits: Edit,
    timeout: Optional[float] = DEFAULT_TIMEOUT,
    max_size: int = DEFAULT_MAX_SIZE,
    perm: int = DEFAULT_PERM,
) -> Slot:
    """Ends slot id after a failed spawn, as release does, and returns it
    with the resources the spawn recorded, for the caller to remove. Also
    raises Adopted once the working process owns the slot: that spawn did
    not fail, and its slot ends with release."""
    return _remove("abort", registry, id, True, edits, timeout, max_size, perm)


def _remove(op: str, registry: Path, id: str, unadopted: bool, edits: Sequence[Edit], timeout: Optional[float], max_size: int, perm: int) -> Slot:
    def remove(reg: _Registry, shown: str) -> Slot:
        i = reg.find(id)
        if i < 0:
            raise Released(op, shown, id)
        s = reg.agents[i]
        if unadopted and s.adopted_at:
            raise Adopted(op, shown, "%s by %s" % (id, s.owner), _copy(s))
        if reg.has_children(id):
            raise HasChildren(op, shown, id, _copy(s))
        del reg.agents[i]
        return s

    return _change(op, registry, edits, remove, timeout, max_size, perm)


def _load(registry: Path, op: str, max_size: int) -> _Registry:
    """The registry read without a lock, checked."""
    shown = _shown(registry)
    _files.check_path(shown, op)
    reg = _decode(_files.read_regular(shown, max_size, op, shown), shown, op)
    reg.check(op, shown)
    return reg


def reap(
    registry: Path,
    edit: Optional[Callable[[Slot], Optional[Edit]]] = None,
    *,
    check: Check = local,
    timeout: Optional[float] = DEFAULT_TIMEOUT,
    max_size: int = DEFAULT_MAX_SIZE,
    perm: int = DEFAULT_PERM,
) -> Reaped:
    """Releases every slot whose owner is dead, each exactly once however
    many reapers run, and returns them with their resources, for the caller
    to remove.

    edit(slot) gives the Edit of a slot it releases (None: the registry
    alone changes), which runs in the same transaction (a task moves from
    running to failed). Build its documents from slot.docs with doc_path, or
    from what your program trusts. An edit that raises a ConflictError (the
    task left running already) leaves its documents as they were, and the
    slot is released all the same; any other exception writes nothing and
    propagates.

    As claim.reap does, it reads the registry without a lock and judges each
    owner with check (claim.local by default); if some are dead, one
    transaction over the registry and those slots' documents judges again
    under the locks and releases each slot still there whose owner is still
    dead. A slot that is the parent of active slots is kept while they are;
    a later pass of the same call releases it once its children are gone.
    Owners whose liveness is unknown here are kept and listed in
    Reaped.unknown."""
    op = "reap"
    released: List[Slot] = []
    while True:
        reg = _load(registry, op, max_size)
        live = _Cache(check)
        parents = reg.parents()
        candidates = [s for s in reg.agents if s.id not in parents]
        unknown = [_copy(s) for s in candidates if live.of(s.owner) == Liveness.UNKNOWN]
        dead = [s for s in candidates if live.of(s.owner) == Liveness.DEAD]
        if not dead:
            return Reaped(released, unknown)
        passed, more = _reap_pass(registry, dead, edit, check, timeout, max_size, perm)
        released.extend(passed)
        if not more:
            return Reaped(released, unknown)


def _reap_pass(
    registry: Path,
    dead: List[Slot],
    edit: Optional[Callable[[Slot], Optional[Edit]]],
    check: Check,
    timeout: Optional[float],
    max_size: int,
    perm: int,
) -> Tuple[List[Slot], bool]:
    """One transaction that releases those of the slots dead (judged
    without locks) that are still there, childless, and dead."""
    edits: List[Edit] = []
    for s in dead:
        e = edit(_copy(s)) if edit is not None else None
        if e is not None:
            edits.append(e)
    released: List[Slot] = []

    def fn(reg: _Registry, docs: Dict[str, JSONObject]) -> None:
        released.clear()
        again = _Cache(check)  # decided again, under the locks
        candidates = {s.id for s in dead}
        parents = reg.parents()
        kept: List[Slot] = []
        doomed: List[Tuple[Slot, Optional[Edit]]] = []
        for s in reg.agents:
            if s.id not in candidates or s.id in parents or again.of(s.owner) != Liveness.DEAD:
                kept.append(s)
                continue
            e = edit(_copy(s)) if edit is not None else None
            # A slot whose edit now needs a document outside this
            # transaction (released and reserved again meanwhile) waits for
            # the next reap.
            if e is not None and any(_files.doc_key(p, "reap") not in docs for p in e.docs):
                kept.append(s)
                continue
            doomed.append((s, e))
        reg.agents[:] = kept
        for s, e in doomed:
            released.append(_copy(s))
            if e is not None and e.fn is not None:
                mine = [docs[_files.doc_key(p, "reap")] for p in e.docs]
                before = copy.deepcopy(mine)
                try:
                    e.fn(mine, _copy(s))
                except ConflictError:
                    for d, b in zip(mine, before):
                        d.clear()
                        d.update(b)

    _transact("reap", registry, [p for e in edits for p in e.docs], fn, timeout, max_size, perm)
    return released, any(s.parent for s in released)


def _transact(
    op: str,
    registry: Path,
    others: Iterable[Path],
    fn: Callable[[_Registry, Dict[str, JSONObject]], None],
    timeout: Optional[float],
    max_size: int,
    perm: int,
) -> None:
    """One transaction over the registry and others: fn gets the registry
    (checked) and the other documents keyed by doc_key; then the counts are
    written."""
    shown = _shown(registry)
    keys = [_files.doc_key(shown, op)]
    paths = [shown]
    for p in others:
        k = _files.doc_key(p, op)
        if k == keys[0]:
            raise InvalidArgument("agentstate: slots: %s %s: the registry cannot be one of a slot's documents" % (op, shown), shown)
        if k not in keys:
            keys.append(k)
            paths.append(_shown(p))
    with _store._transaction(keys, paths, None, _lock.Deadline(timeout), max_size, perm, op, codecs={0: _CODEC}) as docs:
        reg: _Registry = docs[0]  # type: ignore[assignment]
        reg.check(op, shown)
        fn(reg, dict(zip(keys[1:], docs[1:])))
        reg.settle()


def list(registry: Path, *, check: Check = local, max_size: int = DEFAULT_MAX_SIZE) -> List[Listed]:
    """The registry's slots, oldest first, each with its owner's liveness
    (claim.local unless check says otherwise) and its age in seconds. It
    reads without a lock: the slots are one version of the registry, which
    may be replaced a moment later."""
    reg = _load(registry, "list", max_size)
    live = _Cache(check)
    now = time.time_ns()
    out: List[Listed] = []
    for s in reg.agents:
        age = 0.0
        if s.reserved_at:
            age = (now - (_json.go_time_normal(s.reserved_at)[1] - _UNIX_EPOCH_NS)) / 1e9
        out.append(Listed(_copy(s), live.of(s.owner), age))
    return out


__all__ = (
    "Slot", "Edit", "Listed", "Reaped", "transition", "doc_path",
    "reserve", "adopt", "hand_over", "release", "abort", "reap", "list",
    "Refused", "Full", "TotalReached", "TooDeep", "NoParent", "Exists", "Released", "Adopted", "HasChildren", "InvalidRegistry",
)
