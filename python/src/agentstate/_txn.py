"""Transactions of several documents on files: the commit, and the recovery
that whoever next holds a document's lock runs after a crash, by the rules
of docs/PROTOCOL.md in the repository (Transactions, Recovery, What recovery
trusts). It takes absolute, clean paths
and bytes; its caller holds the documents' locks.

For a document PATH a commit writes:

    PATH.txn       the marker: "J\\nBEFORE\\n", J the journal's absolute path,
                   BEFORE "none" or the hex SHA-256 of PATH as read
    PATH.txn.tmp   the new content
    J              DIR/.txn-<16 hex digits>.journal: {"documents": [paths]},
                   DIR the directory of one of the documents; its
                   existence is the commit point
"""

from __future__ import annotations

import datetime
import errno
import hashlib
import json
import os
import re
import secrets
import stat
import sys
from typing import Any, List, NamedTuple, Optional, Tuple

from . import _files
from ._lock import Deadline
from .errors import (
    DurabilityUnknown,
    Error,
    ExistsError,
    InvalidArgument,
    NotFoundError,
    PermissionDenied,
    FileError,
    TxConflictError,
    TxTooLargeError,
    UntrustedError,
)

MARKER_SUFFIX = ".txn"
TEMP_SUFFIX = ".txn.tmp"
CONFLICT_SUFFIX = ".conflict-"  # then the time in UTC: PATH.conflict-20260102T150405Z
_JOURNAL_NAME = re.compile(r"\.txn-[0-9a-f]{16}\.journal")
_HEX64 = re.compile(r"[0-9a-f]{64}")

MAX_MARKER = 4 << 10  # bytes
MAX_JOURNAL = 1 << 20  # bytes
MAX_DOCUMENTS = 1024  # listed in one journal
NONE = "none"  # BEFORE of a document that did not exist


def is_journal_name(base: str) -> bool:
    return _JOURNAL_NAME.fullmatch(base) is not None


def valid_path(p: str) -> bool:
    """Whether p may name a document or a journal in a marker or a journal:
    absolute, clean (no "..", so that no lexical trick makes it name another
    file than the kernel would), valid UTF-8, no NUL or newline."""
    if len(p) <= 1 or not p.startswith("/") or "\0" in p or "\n" in p or _files.clean(p) != p:
        return False
    try:
        p.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def before(data: Optional[bytes]) -> str:
    """The BEFORE line of a marker for a document read as data (None: it did
    not exist)."""
    return NONE if data is None else hashlib.sha256(data).hexdigest()


class Marker(NamedTuple):
    journal: str
    before: str  # NONE, or 64 hex digits


def parse_marker(data: bytes) -> Tuple[Optional[Marker], bool]:
    """A marker's content parsed: (marker, False); (None, True) for a prefix
    of a marker that was never completed (a crash between its creation and
    its write, or a power loss before its sync: no journal can exist for it,
    because a commit makes its markers durable before it writes the
    journal); (None, False) for anything else."""
    s = data.decode("utf-8", "surrogateescape")
    line, sep, rest = s.partition("\n")
    if not sep:
        torn = (s == "" or s.startswith("/")) and "\0" not in s and _utf8(s)
        return None, torn
    if not valid_path(line) or not is_journal_name(os.path.basename(line)):
        return None, False
    b, sep, tail = rest.partition("\n")
    if not sep or tail != "" or b != NONE and _HEX64.fullmatch(b) is None:
        return None, False
    return Marker(line, b), False


def _utf8(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def format_marker(journal: str, b: str) -> bytes:
    return (journal + "\n" + b + "\n").encode("utf-8")


class _Object(list):  # type: ignore[type-arg]
    """A JSON object as its members in order (to tell it from an array)."""


def _fold(name: str) -> str:
    # As Go's encoding/json matches a member to a field: case-insensitively,
    # with the two non-ASCII letters that fold to ASCII ones.
    return name.replace("\u017f", "s").replace("\u212a", "k").lower()


def parse_journal(data: bytes) -> List[str]:
    """A journal's content parsed strictly, as Go reads it: one JSON object
    whose one member is documents (matched as Go matches a field's name), a
    list of 1 to MAX_DOCUMENTS distinct valid paths. ValueError otherwise."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("not valid UTF-8") from None

    def refuse(name: str) -> Any:
        raise ValueError("%s is not JSON" % name)

    try:
        top = json.JSONDecoder(object_pairs_hook=_Object, parse_constant=refuse).decode(text)
    except (ValueError, RecursionError) as e:
        raise ValueError("not a journal: %s" % e) from None
    docs: Any = None
    if top is not None:
        if not isinstance(top, _Object):
            raise ValueError("not a journal: not a JSON object")
        for name, value in top:
            if _fold(name) != "documents" or not (value is None or isinstance(value, list) and not isinstance(value, _Object)):
                raise ValueError("not a journal: member %s" % json.dumps(name))
            docs = value
    docs = docs or []
    if not 1 <= len(docs) <= MAX_DOCUMENTS:
        raise ValueError("lists %d documents, want 1 to %d" % (len(docs), MAX_DOCUMENTS))
    seen = set()
    for d in docs:
        if not isinstance(d, str):
            raise ValueError("not a journal: lists %s, not a path" % json.dumps(d))
        if not valid_path(d):
            raise ValueError("lists %r, which is not an absolute, clean path" % d)
        if d in seen:
            raise ValueError("lists %s twice" % d)
        seen.add(d)
    return list(docs)


# Opening rules.

def _fail(role: str, name: str, e: OSError) -> Error:
    reason = e.strerror or str(e)
    msg = "agentstate: transaction %s %s: %s" % (role, name, reason)
    if e.errno in (errno.EACCES, errno.EPERM):
        return PermissionDenied(msg, name, e.errno)
    if e.errno == errno.ENOENT:
        return NotFoundError(msg, name)
    return FileError(msg, name, e.errno)


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _lstat(name: str, role: str, dir_fd: Optional[int] = None, shown: str = "") -> Optional[os.stat_result]:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError as e:
        if e.errno in (errno.ENOENT, errno.ENOTDIR):
            return None
        raise _fail(role, shown or name, e) from None


def _not_regular(role: str, name: str, mode: int) -> UntrustedError:
    return UntrustedError(role, name, "not a regular file (%s)" % _files.kind(mode))


def _too_large(role: str, name: str, size: int, limit: int) -> UntrustedError:
    return UntrustedError(role, name, "file too large: %d bytes, limit %d" % (size, limit))


class _File:
    """A regular file recovery opened to read or sync."""

    def __init__(self, fd: int, name: str, st: os.stat_result) -> None:
        self.fd = fd
        self.name = name
        self.st = st

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def read(self, role: str, limit: int) -> bytes:
        try:
            data = _files.read_fd(self.fd, limit, self.st.st_size)
        except OSError as e:
            raise _fail(role, self.name, e) from None
        if data is None:
            raise _too_large(role, self.name, limit + 1, limit)
        return data

    def sync(self, role: str) -> None:
        try:
            _files.fsync(self.fd)
        except OSError as e:
            raise _fail(role, self.name, e) from None


def open_path(role: str, name: str, limit: int, dir_fd: Optional[int] = None, shown: str = "") -> _File:
    """Opens the file at name (relative to the directory dir_fd, if given;
    shown names it in errors) by the opening rules: never through a
    symbolic link, never blocking, and only a regular file, refused before
    it is opened when it is not one (opening a device can have effects) and
    checked again on the descriptor. limit > 0 bounds its size. A missing
    file raises FileNotFoundError."""
    shown = shown or name
    st = _lstat(name, role, dir_fd, shown)
    if st is None:
        raise FileNotFoundError(errno.ENOENT, "no such file", shown)
    if not stat.S_ISREG(st.st_mode):
        raise _not_regular(role, shown, st.st_mode)
    if limit > 0 and st.st_size > limit:
        raise _too_large(role, shown, st.st_size, limit)
    try:
        fd = os.open(name, _files.READ_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        raise
    except OSError as e:
        if _files.is_symlink_error(e):
            raise _not_regular(role, shown, stat.S_IFLNK) from None
        raise _fail(role, shown, e) from None
    try:
        fst = os.fstat(fd)
    except OSError as e:
        os.close(fd)
        raise _fail(role, shown, e) from None
    if not stat.S_ISREG(fst.st_mode) or not _same(fst, st):
        os.close(fd)
        raise UntrustedError(role, shown, "replaced while it was opened")
    if limit > 0 and fst.st_size > limit:
        os.close(fd)
        raise _too_large(role, shown, fst.st_size, limit)
    return _File(fd, shown, fst)


class _Dir:
    """A directory in which recovery acts, open for its sync and for the
    trust rule (its owner and sticky bit). Its files are reached through its
    descriptor (dir_fd), never by a path resolved again: whoever may swap a
    directory on the way to it (a link of theirs) could otherwise make a
    later step act on a file of another directory than the one checked.
    Each file is still opened by the opening rules. A symbolic link as the
    directory's last element is followed, as for every path a caller names:
    each file found there is checked against the directory it is in, and
    every later step acts in that same directory."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.fd = _files.open_dir(name)
        try:
            st = os.fstat(self.fd)
        except OSError:
            os.close(self.fd)
            raise
        self.id = (st.st_dev, st.st_ino)
        self.uid = st.st_uid
        self.sticky = bool(st.st_mode & stat.S_ISVTX)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def path(self, base: str) -> str:
        return os.path.join(self.name, base)

    def is_at(self, name: str) -> bool:
        """Whether name, following links, is this directory now."""
        try:
            st = os.stat(name)
        except OSError:
            return False
        return (st.st_dev, st.st_ino) == self.id

    def sync(self) -> None:
        try:
            _files.sync_dir_fd(self.fd)
        except OSError as e:
            raise _fail("directory", self.name, e) from None

    def stat(self, base: str, role: str) -> Optional[os.stat_result]:
        return _lstat(base, role, self.fd, self.path(base))

    def open(self, role: str, base: str, limit: int) -> _File:
        return open_path(role, base, limit, self.fd, self.path(base))

    def create_excl(self, base: str, perm: int) -> int:
        return os.open(base, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _files.O_NOFOLLOW | _files.O_CLOEXEC, perm, dir_fd=self.fd)

    def unlink(self, base: str, role: str, missing_ok: bool = False) -> None:
        try:
            os.unlink(base, dir_fd=self.fd)  # never a directory
        except OSError as e:
            if missing_ok and e.errno == errno.ENOENT:
                return
            raise _fail(role, self.path(base), e) from None

    def rename(self, src: str, dst: str, role: str) -> None:
        try:
            os.rename(src, dst, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except OSError as e:
            raise _fail(role, self.path(src), e) from None

    def trusts(self, role: str, name: str, st: os.stat_result, doc_uid: int) -> None:
        """The trust rule for the transaction file st, named name, in this
        directory, for a document owned by doc_uid (-1: no document): one
        hard link, and in a sticky directory an owner that is the
        document's, this process's or the directory's. Whoever can create a
        file in a directory without the sticky bit can rename over the
        document directly: installing their file gives them nothing."""
        if sys.platform == "win32":  # recovery runs under a lock, which needs flock
            raise NotImplementedError
        if st.st_nlink != 1:
            raise UntrustedError(role, name, "it has %d hard links" % st.st_nlink)
        if not self.sticky:
            return
        euid = os.geteuid()
        if st.st_uid in (doc_uid, euid, self.uid):
            return
        raise UntrustedError(role, name, "owned by uid %d in a sticky directory, where only the document's owner, this process (uid %d) or the directory's owner may leave transaction files" % (st.st_uid, euid))


def _lexists(name: str, op: str, shown: str) -> bool:
    try:
        os.lstat(name)
        return True
    except FileNotFoundError:
        return False
    except OSError as e:
        if e.errno == errno.ENOTDIR:
            return False
        raise _files.oserror(op, shown, e, "transaction marker: ") from None


def recover(path: str, max_size: int, deadline: Deadline, op: str, shown: str) -> List[str]:
    """Completes or undoes the transaction that a crash left on the document
    at path (absolute and clean), whose lock the caller holds. When the
    document has no marker it costs one lstat. Returns the transaction's
    other documents whose markers still name its journal (each is completed
    by its own next locker). A state that cannot be trusted raises
    UntrustedError naming the file and changes nothing; a conflict raises
    TxConflictError after the transaction's files are gone."""
    if not _lexists(path + MARKER_SUFFIX, op, shown):
        return []
    r = _Recovery(path)
    try:
        r.plan(max_size, deadline, op)
        if r.m is None:
            return []
        return r.act(deadline, op)
    finally:
        r.close()


class _Recovery:
    """One document's recovery: the files it opened and what it decided."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.base = os.path.basename(path)
        self.d: Optional[_Dir] = None
        self.m: Optional[_File] = None
        self.mk = Marker("", "")
        self.doc_uid = -1
        self.committed = False
        self.jd: Optional[_Dir] = None
        self.j: Optional[_File] = None
        self.docs: List[str] = []
        self.tmp: Optional[_File] = None
        self.conflict = False

    def close(self) -> None:
        for f in (self.m, self.j, self.tmp):
            if f is not None:
                f.close()
        if self.jd is not None and self.jd is not self.d:
            self.jd.close()
        if self.d is not None:
            self.d.close()

    def plan(self, max_size: int, deadline: Deadline, op: str) -> None:
        """Opens and checks what the recovery needs, and decides, without
        changing anything."""
        if not valid_path(self.path):
            raise UntrustedError("document", self.path, "not an absolute, clean path")
        try:
            self.d = d = _Dir(os.path.dirname(self.path))
        except OSError as e:
            if e.errno == errno.ENOENT:
                return
            raise _fail("directory", os.path.dirname(self.path), e) from None
        try:
            self.m = m = d.open("marker", self.base + MARKER_SUFFIX, MAX_MARKER)
        except FileNotFoundError:
            return
        doc = d.stat(self.base, "document")
        if doc is not None and stat.S_ISREG(doc.st_mode):
            self.doc_uid = doc.st_uid
        d.trusts("marker", m.name, m.st, self.doc_uid)
        data = m.read("marker", MAX_MARKER)
        mk, torn = parse_marker(data)
        if torn:
            self._check_undo()
            return
        if mk is None:
            raise UntrustedError("marker", m.name, "malformed (%.80r)" % data)
        self.mk = mk
        deadline.check(op, self.path)
        self._open_journal()
        if not self.committed:
            self._check_undo()
            return
        deadline.check(op, self.path)
        try:
            self.tmp = tmp = d.open("new content", self.base + TEMP_SUFFIX, max_size)
        except FileNotFoundError:
            return  # installed already
        d.trusts("new content", tmp.name, tmp.st, self.doc_uid)
        self.conflict = self._current(doc, max_size) != mk.before

    def _open_journal(self) -> None:
        """Opens, checks and reads the journal the marker names. A journal
        that does not exist means the transaction did not commit."""
        assert self.d is not None and self.m is not None
        jpath = self.mk.journal
        jdir = os.path.dirname(jpath)
        if jdir == self.d.name:
            self.jd = self.d
        else:
            try:
                self.jd = _Dir(jdir)
            except OSError as e:
                if e.errno in (errno.ENOENT, errno.ENOTDIR):
                    return  # then the journal does not exist either
                raise _fail("journal", jpath, e) from None
        try:
            self.j = j = self.jd.open("journal", os.path.basename(jpath), MAX_JOURNAL)
        except FileNotFoundError:
            return
        self.jd.trusts("journal", jpath, j.st, self.doc_uid)
        data = j.read("journal", MAX_JOURNAL)
        try:
            docs = parse_journal(data)
        except ValueError as e:
            raise UntrustedError("journal", jpath, str(e)) from None
        if self.path not in docs and not any(self._is_our_marker(doc) for doc in docs):
            raise UntrustedError("journal", jpath, "does not list %s" % self.path)
        if not any(self._in_journal_dir(doc) for doc in docs):
            raise UntrustedError("journal", jpath, "is not in the directory of a document it lists (as opened)")
        self.docs, self.committed = docs, True

    def _in_journal_dir(self, doc: str) -> bool:
        """Whether the journal's directory, as opened, is doc's: the
        journal's path names doc's directory, and the directory opened is
        the same (device and inode) as our document's, which the recovery
        holds, or as doc's directory found again now. Every later step on
        the journal acts through that descriptor."""
        jd, d = self.jd, self.d
        assert jd is not None and d is not None
        if os.path.dirname(doc) != jd.name:
            return False
        return jd is d or jd.id == d.id or jd.is_at(os.path.dirname(doc))

    def _is_our_marker(self, doc: str) -> bool:
        """Whether doc, listed by the journal, is our document named another
        way: its marker is ours (device and inode)."""
        assert self.m is not None
        try:
            st = os.lstat(doc + MARKER_SUFFIX)
        except OSError:
            return False
        return _same(st, self.m.st)

    def _check_undo(self) -> None:
        """What undoing removes, the new content, must not be a directory
        (recovery never removes one)."""
        assert self.d is not None
        st = self.d.stat(self.base + TEMP_SUFFIX, "new content")
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise UntrustedError("new content", self.d.path(self.base + TEMP_SUFFIX), "a directory")

    def _current(self, doc: Optional[os.stat_result], max_size: int) -> str:
        """The BEFORE line for the document as it is now."""
        assert self.d is not None
        if doc is None:
            return NONE
        if not stat.S_ISREG(doc.st_mode):
            raise _not_regular("document", self.path, doc.st_mode)
        f = self.d.open("document", self.base, max_size)
        try:
            h = hashlib.sha256()
            while True:
                chunk = os.read(f.fd, 1 << 16)
                if not chunk:
                    return h.hexdigest()
                h.update(chunk)
        except OSError as e:
            raise _fail("document", self.path, e) from None
        finally:
            f.close()

    def act(self, deadline: Deadline, op: str) -> List[str]:
        """Carries out what plan decided."""
        d = self.d
        assert d is not None
        if not self.committed:
            # Not committed: undo. The new content goes first, so that a
            # crash in between leaves a marker that undoes again.
            d.unlink(self.base + TEMP_SUFFIX, "new content", missing_ok=True)
            d.unlink(self.base + MARKER_SUFFIX, "marker")
            return []
        # Committed. The writer may have died before the journal's rename
        # was durable: make it so before anything is installed on its
        # behalf.
        assert self.j is not None and self.jd is not None
        self.j.sync("journal")
        self.jd.sync()
        conflict: Optional[TxConflictError] = None
        if self.tmp is not None:
            deadline.check(op, self.path)
            if self.conflict:
                conflict = TxConflictError(self.path, self.mk.journal, self._move_aside())
            else:
                self._install()
        pending = self._cleanup(deadline, op)
        if conflict is not None:
            raise conflict
        return pending

    def _install(self) -> None:
        """Renames the new content over the document, durably."""
        d, tmp = self.d, self.tmp
        assert d is not None and tmp is not None
        tmp.sync("new content")
        d.rename(self.base + TEMP_SUFFIX, self.base, "new content")
        now = d.stat(self.base, "document")
        if now is None or not _same(now, tmp.st):
            raise UntrustedError("new content", tmp.name, "replaced while it was installed")
        d.sync()

    def _move_aside(self) -> str:
        """Renames the new content to PATH.conflict-<UTC time>, a name that
        did not exist (reserved first with O_EXCL), and returns it."""
        d = self.d
        assert d is not None
        base = self.base + CONFLICT_SUFFIX + datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        for i in range(1, 1001):
            name = base if i == 1 else "%s-%d" % (base, i)
            try:
                fd = d.create_excl(name, 0o600)
            except FileExistsError:
                continue
            except OSError as e:
                raise _fail("new content", d.path(name), e) from None
            os.close(fd)
            try:
                d.rename(self.base + TEMP_SUFFIX, name, "new content")
            except BaseException:
                try:
                    d.unlink(name, "new content")
                except OSError:
                    pass
                raise
            d.sync()
            return d.path(name)
        raise ExistsError("agentstate: transaction new content %s: %s-2 to -1000 are all taken" % (self.path, d.path(base)), self.path)

    def _cleanup(self, deadline: Deadline, op: str) -> List[str]:
        """Removes the marker and, once no other marker names it, the
        journal. The journal goes first when no other document needs it (a
        marker without its journal undoes, which is harmless once its
        document is installed); otherwise our marker goes first and the
        others are looked at again: of two recoverers of one transaction at
        once, the later to look then sees that nobody needs the journal."""
        d, jd = self.d, self.jd
        assert d is not None and jd is not None
        jbase = os.path.basename(self.mk.journal)
        others = self._others(deadline, op)
        _looked(self.path)
        if not others:
            jd.unlink(jbase, "journal", missing_ok=True)
            d.unlink(self.base + MARKER_SUFFIX, "marker")
            return []
        d.unlink(self.base + MARKER_SUFFIX, "marker")
        others = self._others(deadline, op)
        if others:
            return others
        jd.unlink(jbase, "journal", missing_ok=True)
        return []

    def _others(self, deadline: Deadline, op: str) -> List[str]:
        """The documents of the journal, other than ours, whose markers name
        it."""
        assert self.j is not None
        found = []
        for doc in self.docs:
            if doc == self.path:
                continue
            deadline.check(op, self.path)
            if _names(doc, self.mk.journal, self.j.st, self.m):
                found.append(doc)
        return found


def _names(doc: str, jpath: str, jst: os.stat_result, ours: Optional[_File]) -> bool:
    """Whether the marker of doc names the journal jpath, whose identity is
    jst (a marker may spell its path another way). ours, if given, is a
    marker that does not count. A marker that cannot be read for a reason
    other than its absence or its kind counts: whether it names the journal
    is unknown, so the journal is kept."""
    try:
        m = open_path("marker", doc + MARKER_SUFFIX, MAX_MARKER)
    except FileNotFoundError:
        return False
    except UntrustedError:
        return False
    except OSError:
        return True
    try:
        if ours is not None and _same(m.st, ours.st):
            return False
        try:
            data = m.read("marker", MAX_MARKER)
        except UntrustedError:
            return False
        except OSError:
            return True
    finally:
        m.close()
    mk, _ = parse_marker(data)
    if mk is None:
        return False
    if mk.journal == jpath:
        return True
    if os.path.basename(mk.journal) != os.path.basename(jpath):
        return False
    try:
        return _same(os.lstat(mk.journal), jst)
    except OSError:
        return False


class _JournalFile:
    """A journal opened and parsed by name."""

    def __init__(self, name: str) -> None:
        if not is_journal_name(os.path.basename(name)):
            raise UntrustedError("journal", name, "not a journal's name")
        self.name = name
        try:
            self.d = _Dir(os.path.dirname(name))
        except OSError as e:
            raise _fail("journal", name, e) from None
        try:
            self.f = self.d.open("journal", os.path.basename(name), MAX_JOURNAL)
        except BaseException:
            self.d.close()
            raise
        try:
            self.docs = parse_journal(self.f.read("journal", MAX_JOURNAL))
        except ValueError as e:
            self.close()
            raise UntrustedError("journal", name, str(e)) from None
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        self.f.close()
        self.d.close()


def waiting(path: str, deadline: Deadline, op: str) -> List[str]:
    """The documents that still need a journal which lies in the directory
    of path and lists path: the other documents of committed transactions
    whose markers name such a journal. Files of that directory that are not
    journals recovery would trust are passed over."""
    directory = os.path.dirname(path)
    try:
        names = sorted(os.listdir(directory))
    except OSError as e:
        raise _files.oserror(op, path, e, "directory: ") from None
    docs: List[str] = []
    for name in names:
        if not is_journal_name(name):
            continue
        deadline.check(op, path)
        try:
            j = _JournalFile(os.path.join(directory, name))
        except OSError:
            continue
        try:
            if path not in j.docs:
                continue
            try:
                j.d.trusts("journal", j.name, j.f.st, -1)
            except UntrustedError:
                continue
            for doc in j.docs:
                if doc != path and doc not in docs and _names(doc, j.name, j.f.st, None):
                    docs.append(doc)
        finally:
            j.close()
    return docs


# The commit.

class Write(NamedTuple):
    path: str  # the document, absolute and clean
    data: bytes  # its new content
    before: Optional[bytes]  # its content as read under the lock; None: it did not exist
    perm: int  # for a document that does not exist yet
    limit: int = 0  # the document's size limit, which recovery applies to data; <= 0: none


def _create_excl(name: str, perm: int) -> int:
    """Creates a new file; a link at name is never followed."""
    return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _files.O_NOFOLLOW | _files.O_CLOEXEC | _files.O_BINARY, perm)


def _create_temp(w: Write) -> int:
    """Creates the file for w's new content with the owner and mode of the
    document it will replace (owner-only until both are set), or w.perm
    for a new document. A file at its name is garbage left by a commit that
    a power loss interrupted before its marker was durable: we hold the
    lock, and no marker names it. A directory there is not removed."""
    name = w.path + TEMP_SUFFIX
    try:
        prev: Optional[os.stat_result] = os.lstat(w.path)
    except OSError:
        prev = None
    if prev is not None and not stat.S_ISREG(prev.st_mode):
        prev = None
    perm = stat.S_IMODE(prev.st_mode) & 0o700 if prev is not None else w.perm & 0o7777
    try:
        fd = _create_excl(name, perm)
    except FileExistsError:
        try:
            if stat.S_ISDIR(os.lstat(name).st_mode):
                raise UntrustedError("new content", name, "a directory") from None
        except FileNotFoundError:
            pass
        try:
            os.unlink(name)
        except FileNotFoundError:
            pass
        fd = _create_excl(name, perm)
    if prev is not None:
        try:
            _files.copy_owner_mode(fd, prev)
        except BaseException:
            os.close(fd)
            try:
                os.unlink(name)
            except OSError:
                pass
            raise
    return fd


def _journal_bytes(paths: List[str]) -> bytes:
    from ._json import encode_string

    return ('{"documents":[' + ",".join(encode_string(p, html=True) for p in paths) + "]}\n").encode("utf-8")


def check_limits(ws: List[Write], jpath: str, op: str, shown: str) -> None:
    """Refuses (TxTooLargeError) a commit of ws with the journal jpath that
    recovery would refuse: more than MAX_DOCUMENTS documents, a journal over
    MAX_JOURNAL bytes, a marker over MAX_MARKER, or a new content over its
    document's size limit."""

    def refuse(what: str) -> TxTooLargeError:
        return TxTooLargeError("agentstate: %s %s: transaction over the limits recovery trusts: %s" % (op, shown, what), shown)

    if len(ws) > MAX_DOCUMENTS:
        raise refuse("%d documents, limit %d" % (len(ws), MAX_DOCUMENTS))
    n = len(_journal_bytes([w.path for w in ws]))
    if n > MAX_JOURNAL:
        raise refuse("a journal of %d bytes, limit %d" % (n, MAX_JOURNAL))
    for w in ws:
        n = len(format_marker(jpath, before(w.before)))
        if n > MAX_MARKER:
            raise refuse("%s: a marker of %d bytes (its journal's path has %d), limit %d" % (w.path, n, len(jpath.encode("utf-8")), MAX_MARKER))
        if 0 < w.limit < len(w.data):
            raise refuse("%s: new content of %d bytes, limit %d" % (w.path, len(w.data), w.limit))


def _abort(prepared: List[Write], jtemp: str, journal: Optional[str], jdir: str) -> None:
    """Undoes a commit that failed before its commit point (journal: J if
    it was renamed into place): the journal goes first, and durably, so that
    a crash during the rest leaves markers that undo; then the markers and
    new contents of the prepared documents."""
    for name in [jtemp] + ([journal] if journal else []):
        try:
            os.unlink(name)
        except OSError:
            pass
    if journal:
        try:
            _files.sync_dir(jdir)
        except OSError:
            pass
    for w in prepared:
        for name in (w.path + TEMP_SUFFIX, w.path + MARKER_SUFFIX):
            try:
                os.unlink(name)
            except OSError:
                pass


def _step(step: str) -> None:
    """A commit has done step ("marker 0", "temp 0", ..., "prepared",
    "journal", "committed", "renamed 0", ..., "installed", "forgotten",
    "unmarked 0", ...: the steps the Go package's tests name). It does
    nothing; the tests replace it to list the steps, or to stop a commit
    there as its process's death would (with _abort replaced too)."""


def _looked(path: str) -> None:
    """The recovery of path has looked at the other documents' markers and
    removed nothing yet. It does nothing; the tests replace it to make two
    recoveries meet there."""


def commit(ws: List[Write], op: str, shown: str) -> None:
    """Stores ws (two or more documents, whose locks the caller holds) all
    or nothing, by the protocol of docs/PROTOCOL.md in the repository
    (Transactions: the commit). An error before the commit point leaves every
    document as it was and nothing of the commit behind; after it, the
    commit is complete for every later locker and the error is
    DurabilityUnknown. A commit that its recovery would refuse (see
    check_limits) is refused before anything is written."""
    for w in ws:
        if not valid_path(w.path):
            raise InvalidArgument("agentstate: %s %r: a transaction's document paths must be absolute, clean, UTF-8, without a newline" % (op, w.path), w.path)
    dirs = [os.path.dirname(w.path) for w in ws]
    synced = sorted(set(dirs))
    jpath = os.path.join(dirs[0], ".txn-" + secrets.token_hex(8) + ".journal")
    check_limits(ws, jpath, op, shown)
    # The journal is written to a temp file that the Go package's sweep
    # knows, made durable with the markers, and renamed into place at the
    # commit point: a journal that exists is complete.
    jtemp = os.path.join(dirs[0], _files.temp_name(os.path.basename(jpath)))
    prepared = 0
    renamed = False

    # The file each step works on, named by its error (a full disk, too
    # many open files).
    doing = ""

    def failed(e: BaseException) -> BaseException:
        if isinstance(e, OSError) and not isinstance(e, Error):
            return _files.oserror(op, shown, e, "commit: %s: " % doing)
        return e

    # Step 1: markers, new contents and the journal's content, durable.
    fds: List[int] = []
    names: List[str] = []
    try:
        for i, w in enumerate(ws):
            doing = "create " + w.path + MARKER_SUFFIX
            fd = _create_excl(w.path + MARKER_SUFFIX, 0o644)
            prepared += 1
            fds.append(fd)
            names.append(w.path + MARKER_SUFFIX)
            doing = "write " + w.path + MARKER_SUFFIX
            _files.write_all(fd, format_marker(jpath, before(w.before)))
            _step("marker %d" % i)
            doing = "create " + w.path + TEMP_SUFFIX
            fd = _create_temp(w)
            fds.append(fd)
            names.append(w.path + TEMP_SUFFIX)
            doing = "write " + w.path + TEMP_SUFFIX
            _files.write_all(fd, w.data)
            _step("temp %d" % i)
        doing = "create " + jtemp
        fd = _create_excl(jtemp, 0o644)
        fds.append(fd)
        names.append(jtemp)
        doing = "write " + jtemp
        _files.write_all(fd, _journal_bytes([w.path for w in ws]))
        for fd, name in zip(fds, names):
            doing = "sync " + name
            _files.fsync(fd)
        for d in synced:
            doing = "sync " + d
            _files.sync_dir(d)
        _step("prepared")
        # Step 2: the journal in place, durable: the commit point.
        doing = "rename " + jtemp
        os.rename(jtemp, jpath)
        renamed = True
        _step("journal")
        doing = "sync " + dirs[0]
        _files.sync_dir(dirs[0])
        _step("committed")
    except BaseException as e:
        _abort(ws[:prepared], jtemp, jpath if renamed else None, dirs[0])
        raise failed(e) from None
    finally:
        for fd in fds:
            os.close(fd)

    # Step 3: install the new contents. From here on the transaction is
    # committed: a failure leaves the markers for the next locker.
    errs: List[str] = []
    for i, w in enumerate(ws):
        try:
            os.rename(w.path + TEMP_SUFFIX, w.path)
        except OSError as e:
            errs.append("rename %s: %s" % (w.path + TEMP_SUFFIX, e.strerror or e))
        _step("renamed %d" % i)
    for d in synced:
        try:
            _files.sync_dir(d)
        except OSError as e:
            errs.append("sync %s: %s" % (d, e.strerror or e))
    if errs:
        raise DurabilityUnknown("agentstate: %s %s: committed, but %s; the next locker completes it" % (op, shown, "; ".join(errs)), shown)
    _step("installed")

    # Step 4: clean up, the journal first (see _Recovery._cleanup). No sync
    # is needed: a marker that comes back after a power loss undoes
    # nothing, its new content being installed.
    try:
        os.unlink(jpath)
    except OSError:
        pass
    _step("forgotten")
    for i, w in enumerate(ws):
        try:
            os.unlink(w.path + MARKER_SUFFIX)
        except OSError:
            pass
        _step("unmarked %d" % i)
