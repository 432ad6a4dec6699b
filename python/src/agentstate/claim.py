"""Claims that outlive their owner: who holds a claim, whether that holder
is still alive, and the release of dead holders' claims.

This is the Go package github.com/agentstate/core/status/claim for Python
programs; its package doc defines the owner's JSON form and the liveness
rules, which this module follows, so that Go, Python and ``corestate reap``
judge every owner alike. A Python agent records itself in each claim it
takes::

    from agentstate import claim

    def take(reg):
        reg["agents"].append({"id": task, "owner": claim.self_owner().to_json()})

and any program (``corestate reap``, a Go claim.Reap, or :func:`reap` here)
releases the claim once the agent is dead.

Only Linux tells a live owner from a dead one (boot id, pid namespace, pid
and the process's start time, so that a reused pid is not mistaken for
life). Elsewhere :func:`self_owner` records the host and the pid only, and
:func:`local` calls every owner UNKNOWN: no claim is released by it.
"""

from __future__ import annotations

import enum
import errno
import os
import socket
import sys
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

from ._store import DEFAULT_MAX_SIZE, DEFAULT_TIMEOUT, JSONObject, Path, load, mutate_all
from .errors import Error, FileError, InvalidArgument, NotFoundError

# The inode number of the initial pid namespace (PROC_PID_INIT_INO, fixed in
# the kernel since Linux 3.8): a process in it runs on the host itself.
INIT_PIDNS = 0xEFFFFFFC

_STRINGS = ("host", "machine", "boot", "lease", "cluster")
_NUMBERS = ("pidns", "timens", "pid", "start")
_ORDER = ("host", "machine", "boot", "pidns", "timens", "pid", "start", "lease", "cluster")
_UNSIGNED = ("pidns", "timens", "start")


@dataclass(frozen=True)
class Owner:
    """The holder of a claim: a process, identified so that it can be told
    from a later process that reuses its pid, or an etcd lease. Its JSON
    form (to_json, from_json) is the Go claim package's. The zero Owner
    names no one: its liveness is UNKNOWN."""

    host: str = ""
    machine: str = ""
    boot: str = ""
    pidns: int = 0
    timens: int = 0
    pid: int = 0
    start: int = 0
    lease: str = ""
    cluster: str = ""

    def to_json(self) -> Dict[str, Any]:
        """The owner as a JSON object (a dict), members in Go's order, each
        omitted when empty or zero."""
        return {name: getattr(self, name) for name in _ORDER if getattr(self, name)}

    @classmethod
    def from_json(cls, obj: Any) -> "Owner":
        """Reads an owner as Go's encoding/json does: null is the zero
        Owner; member names match case-insensitively (an exact match
        first); members it does not know are ignored; a value of the wrong
        type is an InvalidArgument."""
        if obj is None:
            return cls()
        if not isinstance(obj, dict):
            raise InvalidArgument("agentstate: claim owner %r is not a JSON object" % (obj,))
        values: Dict[str, Any] = {}
        for key, value in obj.items():
            name = key if key in _ORDER else next((n for n in _ORDER if n == key.lower()), None)
            if name is None or value is None:
                continue
            if name in _STRINGS:
                if not isinstance(value, str):
                    raise InvalidArgument("agentstate: claim owner member %s: %r is not a string" % (key, value))
            elif isinstance(value, bool) or not isinstance(value, int) or name in _UNSIGNED and not 0 <= value < 1 << 64 or not -(1 << 63) <= value < 1 << 63:
                raise InvalidArgument("agentstate: claim owner member %s: %r is not an integer of its range" % (key, value))
            values[name] = value
        return cls(**values)

    def __str__(self) -> str:
        parts = []
        if self.lease:
            parts.append("etcd lease " + self.lease)
        if self.pid:
            parts.append("pid %d" % self.pid)
        if self.host:
            parts.append("on " + self.host)
        return " ".join(parts) if parts else "no owner"


class Liveness(enum.IntEnum):
    """What a check can tell about an owner."""

    UNKNOWN = 0  #: cannot be judged from here; its claims are kept
    ALIVE = 1  #: runs, or may still run (stopped, slow, debugged); kept
    DEAD = 2  #: has ended and cannot come back; its claims can be released

    def __str__(self) -> str:
        return self.name.lower()


Check = Callable[[Owner], Liveness]


class _ProcStat(NamedTuple):
    pid: int
    state: str
    threads: int
    start: int


class _View(NamedTuple):
    host: str
    machine: str
    boot: str
    pidns: int
    timens: int


def parse_stat(text: str) -> _ProcStat:
    """/proc/PID/stat: "pid (comm) state ppid ...". comm may hold spaces and
    parentheses, so the fields are counted after the last ")": state is
    field 3, num_threads field 20, starttime field 22."""
    open_, end = text.find("("), text.rfind(")")
    if open_ < 0 or end < open_:
        raise ValueError("malformed /proc stat %.40r" % text)
    f = text[end + 1:].split()
    if len(f) < 20 or len(f[0]) != 1:
        raise ValueError("malformed /proc stat %.40r" % text)
    return _ProcStat(int(text[:open_].strip()), f[0], int(f[20 - 3]), int(f[22 - 3]))


def _read_stat(pid: str) -> _ProcStat:
    with open("/proc/%s/stat" % pid, "rb") as fh:
        return parse_stat(fh.read().decode("utf-8", "replace"))


def _ns_inode(kind: str) -> int:
    """The inode number of this process's namespace of the kind:
    /proc/self/ns/pid reads "pid:[4026531836]"."""
    link = os.readlink("/proc/self/ns/" + kind)
    if not (link.startswith(kind + ":[") and link.endswith("]")):
        raise ValueError("namespace link %r" % link)
    return int(link[len(kind) + 2:-1])


def _machine_id() -> str:
    """systemd's machine ID (dbus's where systemd's is missing), or "" if
    neither holds 32 lowercase hex digits."""
    for name in ("/etc/machine-id", "/var/lib/dbus/machine-id"):
        try:
            with open(name, "rb") as fh:
                s = fh.read().decode("utf-8", "replace").strip()
        except OSError:
            continue
        if len(s) == 32 and all(c in "0123456789abcdef" for c in s):
            return s
    return ""


def _hostname() -> str:
    """The host name (gethostname(2), as Go's os.Hostname), or "" if it
    cannot be read."""
    try:
        return socket.gethostname()
    except OSError:
        return ""


def _self_view() -> _View:
    """What this process sees of its host: the owners it records and the
    owners it can judge are relative to it."""
    st = _read_stat("self")
    if st.pid != os.getpid():
        raise OSError(errno.EINVAL, "/proc is not mounted for this process's pid namespace")
    with open("/proc/sys/kernel/random/boot_id", "rb") as fh:
        boot = fh.read().decode("utf-8", "replace").strip()
    if not boot:
        raise OSError(errno.EINVAL, "empty boot id")
    try:
        timens = _ns_inode("time")
    except FileNotFoundError:
        timens = 0  # before Linux 5.6 every process shares the one clock
    return _View(_hostname(), _machine_id(), boot, _ns_inode("pid"), timens)


def self_owner() -> Owner:
    """The owner that names the calling process, to record in the claims
    it takes. On Linux it fails if /proc cannot be read or is not mounted
    for this process's pid namespace."""
    return owner_of(os.getpid())


def owner_of(pid: int) -> Owner:
    """The owner that names process pid of this host (numbered in this
    process's pid namespace), for a claim taken on its behalf. A missing
    process raises NotFoundError."""
    if isinstance(pid, bool) or not isinstance(pid, int) or pid <= 0:
        raise InvalidArgument("agentstate: owner of pid %r: invalid argument" % (pid,))
    if not sys.platform.startswith("linux"):
        return Owner(host=_hostname(), pid=pid)
    try:
        v = _self_view()
        st = _read_stat(str(pid))
    except FileNotFoundError:
        raise NotFoundError("agentstate: owner of pid %d: no such process" % pid) from None
    except (OSError, ValueError) as e:
        raise FileError("agentstate: owner of pid %d: %s" % (pid, e), None, getattr(e, "errno", None) or errno.EIO) from None
    return Owner(host=v.host, machine=v.machine, boot=v.boot, pidns=v.pidns, timens=v.timens, pid=pid, start=st.start)


def local(owner: Owner) -> Liveness:
    """Decides the liveness of an owner from this host by the rules of the
    Go claim package doc (Liveness), in their order: DEAD only for a process
    of this host that has ended (or of an earlier boot of this host), ALIVE
    for one that runs, UNKNOWN otherwise (another host, another pid or time
    namespace, an etcd lease, an owner without a process identity)."""
    o = owner
    if o.lease or not o.boot or o.pid <= 0 or o.start == 0 or o.pidns == 0 or not sys.platform.startswith("linux"):
        return Liveness.UNKNOWN
    try:
        me = _self_view()
    except (OSError, ValueError):
        return Liveness.UNKNOWN
    if o.boot != me.boot:
        # Boot ids are random per boot: another one is another machine, or
        # this machine before it restarted. Only a host process of a
        # machine that names itself as this one does is known to be gone.
        if o.pidns == INIT_PIDNS and o.machine and o.machine == me.machine and o.host == me.host:
            return Liveness.DEAD
        return Liveness.UNKNOWN
    if o.pidns != me.pidns or o.timens != me.timens:
        return Liveness.UNKNOWN  # the pid means another process here, or the start time reads differently
    try:
        st = _read_stat(str(o.pid))
    except OSError as e:
        # A /proc mounted with hidepid=2 hides other users' processes as if
        # they did not exist; kill(pid, 0) sees them (EPERM).
        if e.errno in (errno.ENOENT, errno.ESRCH):
            try:
                os.kill(o.pid, 0)
            except ProcessLookupError:
                return Liveness.DEAD
            except (OSError, OverflowError):
                pass
        return Liveness.UNKNOWN
    except ValueError:
        return Liveness.UNKNOWN
    if st.pid != o.pid:
        return Liveness.UNKNOWN
    if st.start != o.start:
        return Liveness.DEAD  # the pid now names a later process
    if st.state in ("Z", "X") and st.threads <= 1:
        return Liveness.DEAD  # exited; only its parent's wait is missing
    return Liveness.ALIVE


class Claim(NamedTuple):
    """One claim that the claims function of :func:`reap` finds."""

    id: str  #: names the claim in its document: not empty, unique there, stable while held
    owner: Owner  #: the claim's holder
    docs: Sequence[str] = ()  #: the other documents releasing it changes (a task's status, a registry)


class ReapResult(NamedTuple):
    released: List[Claim]  #: released, in the order the claims function listed them
    unknown: List[Claim]  #: kept because their owner's liveness is unknown here


def _check_ids(cs: Sequence[Claim]) -> None:
    seen = set()
    for c in cs:
        if not c.id:
            raise InvalidArgument("agentstate: claim without an ID (owner %s)" % c.owner)
        if c.id in seen:
            raise InvalidArgument("agentstate: two claims with the ID %r" % c.id)
        seen.add(c.id)


class _Cache:
    """Asks check once per owner."""

    def __init__(self, check: Check) -> None:
        self.check = check
        self.seen: Dict[Owner, Liveness] = {}

    def of(self, o: Owner) -> Liveness:
        if o not in self.seen:
            self.seen[o] = Liveness(self.check(o))
        return self.seen[o]


def reap(
    path: Path,
    claims: Callable[[JSONObject], Iterable[Claim]],
    release: Callable[[List[JSONObject], Claim], Any],
    *,
    check: Check = local,
    timeout: Optional[float] = DEFAULT_TIMEOUT,
    max_size: int = DEFAULT_MAX_SIZE,
) -> ReapResult:
    """Releases the claims held in the document at path whose owners are
    dead, each exactly once and atomically with the documents that count
    it, as the Go claim.Reap does.

    claims lists the claims a version of the document holds. release
    releases one inside a transaction (mutate_all) over the document and
    the claim's docs: it gets a list of dicts, as mutate_all's function
    does, the document first and then the claim's docs in their order
    (reg, task = docs), and changes them so that claims no longer lists
    the claim (and counts come down, a task is marked failed...).

    The document is read without a lock and each owner judged with check
    (local by default); if some are DEAD, one transaction over the document
    and those claims' docs lists the claims again, judges again under the
    locks, and releases each claim found there whose owner is still dead: a
    claim another reaper released meanwhile is no longer listed, so none is
    released twice. The transaction writes nothing if release raises or a
    released claim is still listed afterwards."""
    shown = os.fsdecode(os.fspath(path))
    found = list(claims(load(path, max_size=max_size)))
    _check_ids(found)
    live = _Cache(check)
    dead = [c for c in found if live.of(c.owner) == Liveness.DEAD]
    unknown = [c for c in found if live.of(c.owner) == Liveness.UNKNOWN]
    if not dead:
        return ReapResult([], unknown)
    paths: List[str] = [shown]
    for c in dead:
        for d in c.docs:
            if d not in paths:
                paths.append(d)
    candidate = {c.id for c in dead}
    released: List[Claim] = []

    def fn(docs_list: List[JSONObject]) -> None:
        released.clear()
        again = _Cache(check)  # decided again, under the locks
        docs = dict(zip(paths, docs_list))
        held = list(claims(docs[shown]))
        _check_ids(held)
        for c in held:
            # A claim that was not a candidate, or that now needs a document
            # outside this transaction (released and taken again meanwhile),
            # waits for the next reap.
            if c.id not in candidate or any(d not in docs for d in c.docs):
                continue
            if again.of(c.owner) != Liveness.DEAD:
                continue
            release([docs[shown]] + [docs[d] for d in c.docs], c)
            released.append(c)
        still = {c.id for c in claims(docs[shown])}
        for c in released:
            if c.id in still:
                raise Error("agentstate: reap %s: release of %s left it in the document (the next reaper would release it again)" % (shown, c.id), shown)

    mutate_all(paths, fn, timeout=timeout, max_size=max_size)
    return ReapResult(list(released), unknown)


__all__: Tuple[str, ...] = (
    "Owner", "Liveness", "Check", "Claim", "ReapResult", "self_owner", "owner_of", "local", "reap", "parse_stat", "INIT_PIDNS",
)
