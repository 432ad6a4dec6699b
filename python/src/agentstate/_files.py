"""Files as the protocol touches them: opening without following links or
blocking, reading with a size limit, the durable replace, syncs, and the
errors that name the operation and the file once."""

from __future__ import annotations

import errno
import os
import secrets
import stat
import sys
from typing import List, Optional

from .errors import (
    DurabilityUnknown,
    Error,
    ExistsError,
    FileError,
    InvalidNameError,
    NameTooLongError,
    NotFoundError,
    NotRegularError,
    PermissionDenied,
    TooLargeError,
)

O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
O_BINARY = getattr(os, "O_BINARY", 0)

# Read-only, never through a final symbolic link, never waiting for the
# writer of a named pipe.
READ_FLAGS = os.O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_BINARY

LOCK_SUFFIX = ".lock"
MAX_NAME = 255  # bytes in one name: ext4, XFS, Btrfs, tmpfs, APFS
_TEMP_EXTRA = 1 + 1 + 16 + len(".tmp")


def oserror(op: str, path: str, e: OSError, what: str = "") -> Error:
    """e as the error of operation op on the document path; what names the
    file when it is not the document itself ("lock file: ")."""
    code = e.errno
    reason = e.strerror or str(e)
    msg = "agentstate: %s %s: %s%s" % (op, path, what, reason)
    if code in (errno.EACCES, errno.EPERM):
        return PermissionDenied(msg, path, code)
    if code == errno.ENAMETOOLONG:
        return NameTooLongError(msg, path)
    if code == errno.ENOENT:
        return NotFoundError(msg, path)
    if code == errno.EEXIST:
        return ExistsError(msg, path)
    return FileError(msg, path, code)


def kind(mode: int) -> str:
    """Names a file that is not a regular one."""
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def is_symlink_error(e: OSError) -> bool:
    # O_NOFOLLOW on a link: ELOOP on Linux and macOS, EMLINK on FreeBSD.
    return e.errno in (errno.ELOOP, errno.EMLINK)


def fsync(fd: int) -> None:
    """Makes a file's data durable. On macOS fsync(2) only reaches the
    drive's cache; F_FULLFSYNC, which Go's File.Sync uses there too, reaches
    the medium."""
    if sys.platform == "darwin":
        import fcntl

        try:
            fcntl.fcntl(fd, getattr(fcntl, "F_FULLFSYNC", 51))
            return
        except OSError:
            pass  # not supported by this file system: plain fsync
    os.fsync(fd)


def sync_dir_fd(fd: int) -> None:
    """Makes a directory's entries durable. EINVAL and ENOTSUP (some FUSE
    and network file systems cannot sync a directory) count as unsupported,
    not as failure."""
    try:
        fsync(fd)
    except OSError as e:
        if e.errno not in (errno.EINVAL, errno.ENOTSUP, getattr(errno, "EOPNOTSUPP", errno.ENOTSUP)):
            raise


def open_dir(name: str) -> int:
    """Opens a directory to act in and to sync: O_DIRECTORY refuses anything
    else (a named pipe, a device) unopened; O_NONBLOCK never waits."""
    return os.open(name, os.O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC)


def sync_dir(name: str) -> None:
    fd = open_dir(name)
    try:
        sync_dir_fd(fd)
    finally:
        os.close(fd)


def read_fd(fd: int, limit: int, size_hint: int = 0) -> Optional[bytes]:
    """Reads fd to its end; None once more than limit bytes (> 0) arrive
    (the file may grow after its size was taken)."""
    chunks: List[bytes] = []
    total = 0
    want = max(size_hint + 1, 65536)
    while True:
        chunk = os.read(fd, want)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if 0 < limit < total:
            return None


def read_regular(path: str, limit: int, op: str = "read", shown: Optional[str] = None) -> Optional[bytes]:
    """The content of the regular file at path, or None if there is none.
    Anything else — a symbolic link (not followed), named pipe, device,
    socket, directory — is refused (NotRegularError) without blocking and
    without being opened (opening some devices has effects), and so is a
    file larger than limit bytes (TooLargeError; limit <= 0: no limit)."""
    name = shown if shown is not None else path
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        if e.errno == errno.ENOTDIR:
            return None
        raise oserror(op, name, e) from None
    if not stat.S_ISREG(st.st_mode):
        raise NotRegularError("agentstate: %s %s: not a regular file: %s" % (op, name, kind(st.st_mode)), name)
    try:
        fd = os.open(path, READ_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as e:
        if is_symlink_error(e):  # replaced by a link since the lstat
            raise NotRegularError("agentstate: %s %s: not a regular file: a symbolic link" % (op, name), name) from None
        raise oserror(op, name, e) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularError("agentstate: %s %s: not a regular file: %s" % (op, name, kind(st.st_mode)), name)
        if 0 < limit < st.st_size:
            raise too_large(op, name, st.st_size, limit)
        data = read_fd(fd, limit, st.st_size)
        if data is None:
            raise too_large(op, name, limit + 1, limit)
        return data
    except OSError as e:
        if isinstance(e, Error):
            raise
        raise oserror(op, name, e) from None
    finally:
        os.close(fd)


def too_large(op: str, path: str, size: int, limit: int) -> TooLargeError:
    return TooLargeError("agentstate: %s %s: file too large: at least %d bytes, limit %d" % (op, path, size, limit), path)


def temp_name(base: str) -> str:
    """".<base>.<16 random hex digits>.tmp", the name the Go package gives
    its temp files and that its sweep removes after a crash; a long base is
    cut (on a character boundary) so that the name stays legal."""
    raw = os.fsencode(base)
    cut = MAX_NAME - _TEMP_EXTRA
    if len(raw) > cut:
        while cut > 0 and (raw[cut] & 0xC0) == 0x80:
            cut -= 1
        raw = raw[:cut]
    return "." + os.fsdecode(raw) + "." + secrets.token_hex(8) + ".tmp"


def copy_owner_mode(fd: int, prev: os.stat_result) -> None:
    """Gives a new file the owner (when we may: root, or a group we belong
    to) and the permission bits of prev, the file it will replace."""
    if sys.platform == "win32":  # writes run under a lock, which needs flock
        raise NotImplementedError
    if prev.st_uid != os.geteuid() or prev.st_gid != os.getegid():
        try:
            os.fchown(fd, prev.st_uid, prev.st_gid)
        except PermissionError:
            try:
                os.fchown(fd, -1, prev.st_gid)  # a group we belong to
            except PermissionError:
                pass
    # After the chown: chown may clear the setuid and setgid bits.
    os.fchmod(fd, stat.S_IMODE(prev.st_mode))


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def replace(key: str, data: bytes, perm: int, op: str, shown: str) -> None:
    """Replaces the document at key (an absolute path) with data, durably:
    a new temp file in its directory (see temp_name) with the old file's
    owner and mode (perm minus the umask for a new one), written, fsynced,
    renamed over the document, and the directory fsynced. A failure before
    the rename leaves the document as it was and no temp file; one after it
    is DurabilityUnknown. A symbolic link at the document is refused."""
    directory, base = os.path.split(key)
    try:
        dfd = open_dir(directory)
    except OSError as e:
        raise oserror(op, shown, e, "directory: ") from None
    try:
        _replace_in(dfd, directory, base, data, perm, op, shown)
    finally:
        os.close(dfd)


def _replace_in(dfd: int, directory: str, base: str, data: bytes, perm: int, op: str, shown: str) -> None:
    prev: Optional[os.stat_result]
    try:
        prev = os.stat(base, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        prev = None
    except OSError as e:
        raise oserror(op, shown, e) from None
    if prev is not None and not stat.S_ISREG(prev.st_mode):
        raise NotRegularError("agentstate: %s %s: not a regular file: %s" % (op, shown, kind(prev.st_mode)), shown)
    # Owner-only until the final owner and mode are set: nobody else can
    # open the temp file in between and read later data through it.
    create = stat.S_IMODE(prev.st_mode) & 0o700 if prev is not None else perm & 0o7777
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_BINARY
    for attempt in range(10):
        tmp = temp_name(base)
        try:
            fd = os.open(tmp, flags, create, dir_fd=dfd)
            break
        except FileExistsError:
            if attempt == 9:
                raise ExistsError("agentstate: %s %s: create temp file: 10 names taken" % (op, shown), shown) from None
        except OSError as e:
            raise oserror(op, shown, e, "create temp file %s: " % os.path.join(directory, tmp)) from None
    # What failed names the file it failed on (a full disk, too many open
    # files): the temp file, or the rename over the document.
    what = "write temp file %s: " % os.path.join(directory, tmp)
    try:
        try:
            if prev is not None:
                copy_owner_mode(fd, prev)
            write_all(fd, data)
            fsync(fd)
        finally:
            os.close(fd)
        what = "rename %s: " % os.path.join(directory, tmp)
        os.rename(tmp, base, src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException as e:
        try:
            os.unlink(tmp, dir_fd=dfd)
        except OSError:
            pass
        if isinstance(e, OSError) and not isinstance(e, Error):
            raise oserror(op, shown, e, what) from None
        raise
    try:
        sync_dir_fd(dfd)
    except OSError as e:
        raise DurabilityUnknown("agentstate: %s %s: replaced, but the directory sync failed, so the change might not survive a power loss: %s" % (op, shown, e.strerror or e), shown) from None


def check_path(path: str, op: str) -> None:
    """Refuses names that cannot be a document file: empty, or ending in a
    separator, "." or ".." (the kernel would look for a directory)."""
    if path == "":
        raise InvalidNameError("agentstate: %s: empty path" % op)
    base = path.rsplit(os.sep, 1)[-1] if os.sep in path else path
    if os.altsep:
        base = base.rsplit(os.altsep, 1)[-1]
    if base in ("", ".", ".."):
        raise InvalidNameError("agentstate: %s %s: a document path must name a file, not end in %r" % (op, path, base or os.sep), path)


def clean(p: str) -> str:
    """p without ".", "..", repeated or trailing separators, as Go's
    filepath.Clean (which, unlike os.path.normpath, also folds a leading
    "//")."""
    c = os.path.normpath(p)
    if c.startswith("//"):
        c = "/" + c.lstrip("/")
    return c


def doc_key(path: "os.PathLike[str] | str", op: str) -> str:
    """The absolute name of the file that path names, as the kernel
    resolves it when the call starts: the name its lock file, reads and
    writes use. Cleaning "dir/../x" as text is wrong when dir is a symbolic
    link (the kernel goes to the parent of the link's target), so a path
    with ".." has its directory resolved through its links first. The final
    element is not resolved: a document is never a link."""
    p = os.fsdecode(os.fspath(path))
    check_path(p, op)
    if not os.path.isabs(p):
        p = os.getcwd() + os.sep + p
    if ".." not in p.split(os.sep):
        return clean(p)
    directory, base = p.rsplit(os.sep, 1)
    try:
        if sys.version_info >= (3, 10):
            real = os.path.realpath(directory or os.sep, strict=True)
        else:
            real = os.path.realpath(directory or os.sep)
            os.stat(real)
    except OSError as e:
        raise oserror(op, p, e) from None
    return os.path.join(real, base)
