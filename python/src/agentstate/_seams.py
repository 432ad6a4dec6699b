"""Switches for tests only. Each turns one rule off, so that a test's control
can show the failure the rule prevents, or stops a commit at a step no
outside fault hits reliably. Programs leave them as they are."""

from __future__ import annotations

from typing import Callable, Optional

# Called after each step of a commit of two or more documents ("marker 0",
# "temp 0", ..., "prepared", "journal", "committed", "renamed 0", ...,
# "installed", "forgotten", "unmarked 0", ...), the steps the Go package
# names. When it returns True the commit stops there as if its process had
# died, leaving every file in place, and raises Crashed.
crash: Optional[Callable[[str], bool]] = None

# Told of the moment a recovery has looked at the other documents'
# markers, before it removes anything ("cleanup", path).
hook: Optional[Callable[[str, str], None]] = None

skip_recovery = False  # a basic client: lock, read, replace, unlock
no_conflict_check = False  # install a transaction's copy whatever replaced the document
trust_any_owner = False  # no owner check in sticky directories
no_ring = False  # a release does not ring the lock file's bell
no_bell = False  # a waiter polls instead of sleeping on the bell


class Crashed(Exception):
    """A commit that the crash seam stopped."""


def crash_at(step: str) -> None:
    if crash is not None and crash(step):
        raise Crashed(step)


def tell(event: str, name: str) -> None:
    if hook is not None:
        hook(event, name)
