"""The calls: load, mutate, locked, create, remove, mutate_all, transaction,
load_all, transition."""

from __future__ import annotations

import contextlib
import os
import stat
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Protocol, Sequence, Tuple, Union

from . import _files, _json, _lock, _txn
from .errors import ExistsError, InvalidArgument, InvalidNameError, NotFoundError, TransitionConflict

Path = Union[str, "os.PathLike[str]"]
JSONObject = Dict[str, Any]

DEFAULT_TIMEOUT = 30.0
"""Seconds a call waits for a lock by default (as corestate's --timeout)."""

DEFAULT_MAX_SIZE = 16 << 20
"""The largest document read by default, in bytes (the Go package's
DefaultMaxSize)."""

DEFAULT_PERM = 0o644
"""The permission bits (minus the umask) of a document created anew."""

FINAL_STATES = frozenset(("completed", "failed", "merged", "rejected"))
"""The states that end a task's life: transition() leaves them only when
asked to by name."""


def _shown(path: Path) -> str:
    return os.fsdecode(os.fspath(path))


def load(path: Path, *, kind: Optional[str] = None, max_size: int = DEFAULT_MAX_SIZE) -> JSONObject:
    """Returns the document at path without taking its lock: a whole
    document as some writer committed it, old or new ({} if there is none).
    To act on a value, decide inside mutate(), where it cannot change under
    you. kind is "status" or "json" (see mutate)."""
    doc = load_existing(path, kind=kind, max_size=max_size)
    return {} if doc is None else doc


def load_existing(path: Path, *, kind: Optional[str] = None, max_size: int = DEFAULT_MAX_SIZE) -> Optional[JSONObject]:
    """load(), but None when there is no document (an empty one is {})."""
    shown = _shown(path)
    k = _json.kind_of(shown, kind)
    _files.check_path(shown, "read")
    data = _files.read_regular(shown, max_size)
    if data is None:
        return None
    return _json.decode(data, shown, "read", k).values


class _Locked:
    """The state of one locked call on one document."""

    def __init__(self, key: str, shown: str, kind: str, max_size: int, op: str) -> None:
        self.key = key
        self.shown = shown
        self.kind = kind
        self.max_size = max_size
        self.op = op
        self.data: Optional[bytes] = None
        self.parsed: Optional[_json.Parsed] = None
        self.pending: List[str] = []

    def read(self, deadline: _lock.Deadline, decode: bool = True) -> JSONObject:
        """Step 4: completes or undoes a transaction a crash left on the
        document, then reads it (and decodes it, unless told not to)."""
        self.pending = _txn.recover(self.key, self.max_size, deadline, self.op, self.shown)
        self.data = _files.read_regular(self.key, self.max_size, self.op, self.shown)
        if decode and self.data is not None:
            self.parsed = _json.decode(self.data, self.shown, self.op, self.kind)
        return {} if self.parsed is None else self.parsed.values

    def encode(self, doc: JSONObject) -> Optional[bytes]:
        return _json.encode(self.parsed, doc, self.kind)


def mutate(
    path: Path,
    fn: Callable[[JSONObject], Any],
    *,
    kind: Optional[str] = None,
    timeout: Optional[float] = DEFAULT_TIMEOUT,
    max_size: int = DEFAULT_MAX_SIZE,
    perm: int = DEFAULT_PERM,
) -> JSONObject:
    """Changes the document at path under its lock and returns it as
    stored.

    fn gets the document as a dict ({} if there is none) and changes it in
    place; its return value is ignored. If fn raises, nothing is written and
    the exception propagates. If fn changes nothing, nothing is written.
    Members fn did not change keep their bytes.

    kind says which rules the document follows, as for corestate:
    "status" (Go's Status: its members first in its order, each of the type
    a Go reader of Status decodes, updated_at set to the time of the write
    when fn changed something and did not set or delete updated_at itself)
    or "json" (any JSON object, members sorted by name); by default status
    for a file named status.json and json for any other.

    timeout bounds the wait for the lock in seconds (None: wait for ever,
    still polling); LockTimeout when it passes, with nothing changed.
    """
    with locked(path, kind=kind, timeout=timeout, max_size=max_size, perm=perm) as doc:
        fn(doc)
    return doc


@contextlib.contextmanager
def _holding(path: Path, op: str, kind: Optional[str], timeout: Optional[float], max_size: int, perm: int) -> Iterator[Tuple[_Locked, _lock.Deadline]]:
    """Steps 1 to 3 and 6 of the protocol around a call on one document."""
    shown = _shown(path)
    k = _json.kind_of(shown, kind)
    key = _files.doc_key(path, op)
    deadline = _lock.Deadline(timeout)
    with _lock.turn([key], op, [shown]):
        h = _lock.lock_one(key, perm, deadline, op, shown)
        try:
            yield _Locked(key, shown, k, max_size, op), deadline
        finally:
            h.close()


@contextlib.contextmanager
def locked(
    path: Path,
    *,
    kind: Optional[str] = None,
    timeout: Optional[float] = DEFAULT_TIMEOUT,
    max_size: int = DEFAULT_MAX_SIZE,
    perm: int = DEFAULT_PERM,
) -> Iterator[JSONObject]:
    """A context manager that holds the document's lock and gives its
    contents as a dict; on a normal exit it stores the dict as mutate()
    does, and on an exception it writes nothing:

        with agentstate.locked(path) as doc:
            doc["runs"] = doc.get("runs", 0) + 1
    """
    with _holding(path, "mutate", kind, timeout, max_size, perm) as (st, deadline):
        doc = st.read(deadline)
        yield doc
        out = st.encode(doc)
        if out is not None:
            _files.replace(st.key, out, perm, st.op, st.shown)


def create(
    path: Path,
    doc: JSONObject,
    *,
    kind: Optional[str] = None,
    timeout: Optional[float] = DEFAULT_TIMEOUT,
    max_size: int = DEFAULT_MAX_SIZE,
    perm: int = DEFAULT_PERM,
) -> JSONObject:
    """Stores doc as the document at path if there is none yet, under the
    lock, so that of several creators exactly one succeeds; the others get
    ExistsError (also for an empty or corrupt document), with nothing
    changed. A status document gets updated_at unless doc has one."""
    with _holding(path, "create", kind, timeout, max_size, perm) as (st, deadline):
        st.read(deadline, decode=False)  # an empty or corrupt document exists too
        if st.data is not None:
            raise ExistsError("agentstate: create %s: file exists" % st.shown, st.shown)
        if st.kind == _json.STATUS and "updated_at" not in doc:
            doc["updated_at"] = _json.go_time()
        out = _json.encode(None, doc, st.kind, force=True)
        assert out is not None
        _files.replace(st.key, out, perm, st.op, st.shown)
    return doc


def remove(path: Path, *, timeout: Optional[float] = DEFAULT_TIMEOUT, max_size: int = DEFAULT_MAX_SIZE) -> None:
    """Removes the document and then its lock file, holding the lock
    throughout, durably (the directory is synced). A missing document raises
    NotFoundError and changes nothing.

    A transaction that a crash left pending on the document is completed
    first, whole: under the locks of all its documents, taken as
    load_all() takes them; so is any transaction whose journal lies in the
    document's directory and lists it. Removing the directory afterwards
    then deletes nothing another document still needs."""
    while True:
        with _holding(path, "remove", _json.JSON, timeout, max_size, DEFAULT_PERM) as (st, deadline):
            st.read(deadline, decode=False)  # a corrupt document can be removed
            if st.data is None:
                raise NotFoundError("agentstate: remove %s: no such file" % st.shown, st.shown)
            pending = list(st.pending)
            for doc in _txn.waiting(st.key, deadline, st.op):
                if doc not in pending:
                    pending.append(doc)
            if not pending:
                _remove_doc(st.key, st.op, st.shown)
                return
        # Complete the rest under the locks of its documents, then try
        # again.
        _locked_all([st.key] + pending, [st.shown] + pending, _json.JSON, None, deadline, max_size, DEFAULT_PERM, "remove", decode=False)


def _remove_doc(key: str, op: str, shown: str) -> None:
    for name, what in ((key, ""), (key + _files.LOCK_SUFFIX, "lock file: ")):
        try:
            os.unlink(name)
        except FileNotFoundError:
            pass
        except OSError as e:
            raise _files.oserror(op, shown, e, what) from None
    try:
        _files.sync_dir(os.path.dirname(key))
    except OSError as e:
        raise _files.oserror(op, shown, e, "directory: ") from None


def mutate_all(
    paths: Sequence[Path],
    fn: Callable[[List[JSONObject]], Any],
    *,
    kind: Optional[str] = None,
    timeout: Optional[float] = DEFAULT_TIMEOUT,
    max_size: int = DEFAULT_MAX_SIZE,
    perm: int = DEFAULT_PERM,
) -> List[JSONObject]:
    """Changes several documents in one transaction: all of fn's changes
    are stored, or none, also when the process dies during the commit (the
    next locker of any of them completes or undoes it).

    fn gets the documents as dicts, in the order of paths, and changes them
    in place; if it raises, nothing is written. The locks are taken in the
    order of the lock files' identities, as every conforming process takes
    them, so transactions over overlapping sets never deadlock. A
    transaction that changes one document writes it as mutate() does; two
    or more are committed with markers and a journal. Two names of one
    file (a hard link included) raise InvalidArgument. kind, if given,
    applies to every document; by default each is decided by its name (see
    mutate)."""
    with transaction(paths, kind=kind, timeout=timeout, max_size=max_size, perm=perm) as docs:
        fn(docs)
    return docs


@contextlib.contextmanager
def transaction(
    paths: Sequence[Path],
    *,
    kind: Optional[str] = None,
    timeout: Optional[float] = DEFAULT_TIMEOUT,
    max_size: int = DEFAULT_MAX_SIZE,
    perm: int = DEFAULT_PERM,
) -> Iterator[List[JSONObject]]:
    """mutate_all() as a context manager: holds every document's lock and
    gives their contents as a list of dicts, in the order of paths; a normal
    exit commits every change, an exception writes nothing."""
    shown = [_shown(p) for p in paths]
    keys = [_files.doc_key(p, "mutate all") for p in paths]
    with _transaction(keys, shown, kind, _lock.Deadline(timeout), max_size, perm, "mutate all") as docs:
        yield docs


def load_all(
    paths: Sequence[Path],
    *,
    kind: Optional[str] = None,
    timeout: Optional[float] = DEFAULT_TIMEOUT,
    max_size: int = DEFAULT_MAX_SIZE,
) -> List[JSONObject]:
    """Reads several documents as they were at one moment: under all their
    locks, after completing any transaction a crash left on them."""
    shown = [_shown(p) for p in paths]
    keys = [_files.doc_key(p, "load all") for p in paths]
    return _locked_all(keys, shown, kind, None, _lock.Deadline(timeout), max_size, DEFAULT_PERM, "load all")


def _locked_all(
    keys: List[str],
    shown: List[str],
    kind: Optional[str],
    fn: Optional[Callable[[List[JSONObject]], Any]],
    deadline: _lock.Deadline,
    max_size: int,
    perm: int,
    op: str,
    decode: bool = True,
) -> List[JSONObject]:
    with _transaction(keys, shown, kind, deadline, max_size, perm, op, decode) as docs:
        if fn is not None:
            fn(docs)
    return docs


class Codec(Protocol):
    """How a module of this package that models a document of its own (a
    registry of slots) reads and writes it in a transaction, instead of as a
    dict (see _transaction)."""

    def decode(self, data: Optional[bytes], shown: str, op: str) -> Any:
        """The document's value from its bytes (None: no document)."""

    def encode(self, value: Any) -> Optional[bytes]:
        """The bytes of value, or None if it is the value decoded (then
        nothing is written)."""


@contextlib.contextmanager
def _transaction(
    keys: List[str],
    shown: List[str],
    kind: Optional[str],
    deadline: _lock.Deadline,
    max_size: int,
    perm: int,
    op: str,
    decode: bool = True,
    codecs: Mapping[int, Codec] = {},
) -> Iterator[List[JSONObject]]:
    """Locks, recovers and reads the documents, yields them, and commits
    what changed when the body ends normally (nothing when it raises). The
    document at index i of codecs is read and written by that codec, its
    value yielded in place of a dict."""
    if not keys:
        raise InvalidArgument("agentstate: %s: no documents" % op)
    kinds = [_json.kind_of(s, kind) for s in shown]
    for k, s in zip(keys, shown):
        try:
            k.encode("utf-8")
        except UnicodeEncodeError:
            k = ""
        if not k or "\n" in k:
            # The journal names documents in JSON, which holds only UTF-8,
            # and recovery refuses a name with a newline.
            raise InvalidNameError("agentstate: %s %r: a transaction's document paths must be valid UTF-8, without a newline" % (op, s), s)
    order = sorted(range(len(keys)), key=lambda i: keys[i])
    for a, b in zip(order, order[1:]):
        if keys[a] == keys[b]:
            raise InvalidArgument("agentstate: %s %s: in the transaction twice" % (op, shown[b]), shown[b])
    with _lock.turn(keys, op, shown):
        handles = _lock.lock_all(keys, shown, perm, deadline, op)
        try:
            states = [_Locked(keys[i], shown[i], kinds[i], max_size, op) for i in range(len(keys))]
            docs: List[JSONObject] = [{}] * len(keys)
            for i in order:
                docs[i] = states[i].read(deadline, decode and i not in codecs)
                if i in codecs:
                    docs[i] = codecs[i].decode(states[i].data, shown[i], op)
            _one_file_each(keys, shown, op)
            yield docs
            changed: List[Tuple[int, bytes]] = []
            for i in order:
                out = states[i].encode(docs[i]) if i not in codecs else codecs[i].encode(docs[i])
                if out is not None:
                    changed.append((i, out))
            if len(changed) == 1:
                i, out = changed[0]
                _files.replace(keys[i], out, perm, op, shown[i])
            elif changed:
                _txn.commit([_txn.Write(keys[i], out, states[i].data, perm, max_size) for i, out in changed], op, _names([shown[i] for i, _ in changed]))
        finally:
            for h in handles:
                h.close()


def _names(shown: List[str]) -> str:
    """The documents of a commit, as its errors name them: the first three,
    then how many more."""
    if len(shown) <= 3:
        return ", ".join(shown)
    return "%s and %d other documents" % (", ".join(shown[:3]), len(shown) - 3)


def _one_file_each(keys: List[str], shown: List[str], op: str) -> None:
    """Refuses documents of which two are one file (hard links): a commit
    would give each name a new file of its own, splitting them."""
    seen: Dict[Tuple[int, int], str] = {}
    for k, s in zip(keys, shown):
        try:
            st = os.lstat(k)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        ident = (st.st_dev, st.st_ino)
        if ident in seen:
            raise InvalidArgument("agentstate: %s %s: it is the same file as %s (a hard link)" % (op, s, seen[ident]), s)
        seen[ident] = s


def transition(doc: JSONObject, to: str, *from_states: str) -> None:
    """Moves the document's "status" to state to if its current state is
    one of from_states; with none, from any state that is not final
    (completed, failed, merged, rejected). Otherwise it leaves doc unchanged
    and raises TransitionConflict. Call it inside mutate(), where the check
    and the change happen under the lock:

        agentstate.mutate(path, lambda d: agentstate.transition(d, "running", "queued"))
    """
    cur = doc.get("status", "")
    if not isinstance(cur, str):
        raise TransitionConflict(repr(cur), to, from_states)
    ok = cur in from_states if from_states else cur not in FINAL_STATES
    if not ok:
        raise TransitionConflict(cur, to, from_states)
    doc["status"] = to
