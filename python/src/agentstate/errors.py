"""The errors of agentstate, one class per kind a caller can act on.

Every error derives from :class:`Error` and names the operation and the
file once. Errors that are about a file also derive from the built-in
exception a Python program already catches for that kind (``OSError``,
``PermissionError``, ``TimeoutError``, ``FileNotFoundError``...), so that
``except OSError`` keeps working.
"""

from __future__ import annotations

import errno as _errno
from typing import Optional, Sequence


class Error(Exception):
    """Base class of every error agentstate raises.

    ``path`` is the document (or transaction file) the error is about, if
    any; ``str(error)`` names the operation and the path once.
    """

    path: Optional[str]

    def __init__(self, message: str, path: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path

    def __str__(self) -> str:
        return self.message


class FileError(Error, OSError):
    """An operating system's error on a document's files (a full disk, a
    missing directory...), and the base of the errors below that are about a
    file: an OSError whose errno is the system's (or the kind's)."""

    code = _errno.EIO

    def __init__(self, message: str, path: Optional[str] = None, errno: Optional[int] = None) -> None:
        OSError.__init__(self, errno if errno is not None else self.code, message, path)
        self.message = message
        self.path = path

    def __str__(self) -> str:
        return self.message


class CorruptError(Error, ValueError):
    """A stored document that cannot be decoded, or that Go, Python, jq and
    corestate would read differently (a repeated name, invalid UTF-8, a lone
    surrogate, a value that is not JSON). Nothing is written over it.

    ``offset`` is the byte offset in the file at which decoding failed;
    ``reason`` says what was found there.
    """

    def __init__(self, path: str, offset: int, reason: str, op: str = "read") -> None:
        super().__init__("agentstate: %s %s: corrupt document at byte %d: %s" % (op, path, offset, reason), path)
        self.offset = offset
        self.reason = reason
        self.syntax = True  # not JSON at all, rather than JSON that readers disagree on


class ConflictError(Error):
    """Base class of the two conflicts: a guarded state change that the
    document's state does not allow (:class:`TransitionConflict`), and a
    transaction whose document another writer replaced after the commit
    point (:class:`TxConflictError`)."""


class TransitionConflict(ConflictError):
    """A guarded transition (:func:`agentstate.transition`) found a state it
    may not move from. The document is unchanged."""

    def __init__(self, current: str, want: str, from_states: Sequence[str]) -> None:
        allowed = "|".join(s if s else '""' for s in from_states) if from_states else "any non-final state"
        super().__init__("agentstate: cannot move from %r to %r (allowed from %s): state conflict" % (current, want, allowed))
        self.current = current
        self.want = want
        self.from_states = tuple(from_states)


class TxConflictError(ConflictError):
    """Recovery found a committed transaction's document replaced or
    removed after the commit point by a writer that does not recover
    transactions. It kept that writer's document, moved the transaction's
    copy to ``copy`` (PATH.conflict-<UTC time>) and removed the
    transaction's files: the call's function did not run, and a retry
    proceeds. An operator compares the copy with the document."""

    def __init__(self, path: str, journal: str, copy: str) -> None:
        super().__init__(
            "agentstate: transaction document %s: replaced or removed after its transaction (%s) committed, "
            "by a writer that does not recover transactions: kept as it is; the transaction's copy is %s"
            % (path, journal, copy),
            path,
        )
        self.journal = journal
        self.copy = copy


class LockTimeout(FileError, TimeoutError):
    """The lock (or every lock of a transaction) was not free within the
    timeout. Nothing was changed."""

    code = _errno.ETIMEDOUT


class NotRegularError(FileError):
    """A document, lock file or transaction file that is not a regular file
    (a symbolic link, named pipe, device, socket or directory). It was
    refused without being followed, opened for I/O or blocked on."""

    code = _errno.EINVAL


class TooLargeError(FileError):
    """A document (or transaction file) larger than its size limit."""

    code = _errno.EFBIG


class PermissionDenied(FileError, PermissionError):
    """The system refused an operation on the file (EACCES, EPERM)."""

    code = _errno.EACCES


class UntrustedError(FileError):
    """A transaction file that recovery will not act on: not a regular file,
    too large, malformed, more than one hard link, owned by someone it must
    not install from (in a sticky directory), or a journal that does not
    list the document. The document is left as it is, and every locker of it
    fails until an operator removes the file (``corestate fsck`` lists it).

    ``role`` is "marker", "new content", "journal" or "document".
    """

    def __init__(self, role: str, path: str, reason: str) -> None:
        super().__init__("agentstate: transaction %s %s: transaction file cannot be trusted: %s" % (role, path, reason), path)
        self.role = role
        self.reason = reason


class UntrustedLockError(FileError):
    """A lock file that another user could replace at will, so that its
    lock would exclude nobody: in a sticky directory (1777, like /tmp), one
    owned by someone other than the document's owner, this process or the
    directory's owner. Refused, with nothing changed; every call on the
    document fails until an operator removes it (``corestate fsck`` lists
    it)."""


class DurabilityUnknown(FileError):
    """The new document replaced the old one (or a transaction committed),
    but a later sync failed: the change might not survive a power loss."""

    code = _errno.EIO


class InvalidNameError(Error, ValueError):
    """A path that cannot name a document: empty, ending in a separator, "."
    or "..", or (for a transaction) holding a newline or bytes that are not
    UTF-8."""


class NameTooLongError(InvalidNameError, FileError):
    """The document's name is too long for its lock file or transaction
    files (the name plus ".lock" or ".txn.tmp"): with the usual limit of 255
    bytes for one name, a document's own name may have at most 250 (247 in
    a transaction). Its errno is ENAMETOOLONG."""

    def __init__(self, message: str, path: Optional[str] = None) -> None:
        FileError.__init__(self, message, path, _errno.ENAMETOOLONG)


class InvalidArgument(Error, ValueError):
    """A call that cannot be carried out as asked: two names of one file in
    a transaction, a value that JSON cannot hold."""


class TxTooLargeError(InvalidArgument):
    """A transaction whose commit would exceed a limit that recovery applies
    (docs/PROTOCOL.md, Transactions: more than 1024 documents, a journal
    over 1 MiB, a marker over 4 KiB, a new content over max_size). Nothing
    was written: recovery would refuse such a commit and leave its
    documents blocked."""


class NestedError(Error, RuntimeError):
    """A call made while this thread already holds the document's lock (from
    inside the function of a mutate): it would wait for itself."""


class NotFoundError(FileError, FileNotFoundError):
    """The document does not exist (remove)."""

    code = _errno.ENOENT


class ExistsError(FileError, FileExistsError):
    """The document exists already (create)."""

    code = _errno.EEXIST


class Unsupported(Error, NotImplementedError):
    """The operation needs flock(2), which this system lacks (Windows)."""
