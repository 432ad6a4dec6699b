"""agentstate: the locking protocol of github.com/agentstate/core for Python.

Python agents read and change the same JSON documents (status.json files,
registries) as Go services that use the Go package
github.com/agentstate/core/status, and as shell scripts that use corestate,
without losing an update or seeing half a transaction. This package follows
the protocol of docs/PROTOCOL.md (Changing one document, Transactions),
recovery of crashed transactions included::

    import agentstate

    agentstate.mutate("ws/status.json", lambda d: agentstate.transition(d, "running", "queued"))

    with agentstate.locked("ws/status.json") as doc:
        doc["runs"] = doc.get("runs", 0) + 1

    def spawn(docs):
        reg, task = docs
        if reg.get("active_count", 0) >= reg.get("max_concurrent", 0):
            raise AtCapacity()
        reg["active_count"] = reg.get("active_count", 0) + 1
        agentstate.transition(task, "running", "queued")

    agentstate.mutate_all(["registry.json", "ws/status.json"], spawn)

What is guaranteed, and what is not, is stated in the README (python/README.md
in the repository) and, for the protocol, in docs/PROTOCOL.md.
"""

from __future__ import annotations

from ._store import (
    DEFAULT_MAX_SIZE,
    DEFAULT_PERM,
    DEFAULT_TIMEOUT,
    FINAL_STATES,
    JSONObject,
    create,
    load,
    load_all,
    load_existing,
    locked,
    mutate,
    mutate_all,
    remove,
    transaction,
    transition,
)
from .errors import (
    ConflictError,
    CorruptError,
    DurabilityUnknown,
    Error,
    ExistsError,
    FileError,
    InvalidArgument,
    InvalidNameError,
    LockTimeout,
    NameTooLongError,
    NestedError,
    NotFoundError,
    NotRegularError,
    PermissionDenied,
    TooLargeError,
    TransitionConflict,
    TxConflictError,
    TxTooLargeError,
    Unsupported,
    UntrustedError,
    UntrustedLockError,
)

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_MAX_SIZE",
    "DEFAULT_PERM",
    "DEFAULT_TIMEOUT",
    "FINAL_STATES",
    "JSONObject",
    "ConflictError",
    "CorruptError",
    "DurabilityUnknown",
    "Error",
    "ExistsError",
    "FileError",
    "InvalidArgument",
    "InvalidNameError",
    "LockTimeout",
    "NameTooLongError",
    "NestedError",
    "NotFoundError",
    "NotRegularError",
    "PermissionDenied",
    "TooLargeError",
    "TransitionConflict",
    "TxConflictError",
    "TxTooLargeError",
    "Unsupported",
    "UntrustedError",
    "UntrustedLockError",
    "create",
    "load",
    "load_all",
    "load_existing",
    "locked",
    "mutate",
    "mutate_all",
    "remove",
    "transaction",
    "transition",
]
