//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package status

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/agentstate/core/fs"
)

// A lockHandle is one acquisition's descriptor of the lock file.
type lockHandle struct {
	fd   int
	name string
	perm os.FileMode // for a lock file created while its document is missing
}

func openLock(name string, perm os.FileMode) (*lockHandle, error) {
	h := &lockHandle{fd: -1, name: name, perm: perm}
	if err := h.open(); err != nil {
		return nil, err
	}
	return h, nil
}

// lockFlags: never follow a final symbolic link (a link planted in a shared
// directory must not make us create or lock a file elsewhere) and never
// block in open (a named pipe planted as the lock file).
const lockFlags = syscall.O_CLOEXEC | syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// open opens the lock file with a fresh open file description, creating it
// if it is missing, and checks that it is a regular file.
func (h *lockHandle) open() error {
	fd, err := open(h.name, syscall.O_RDWR|lockFlags, 0)
	for try := 0; errors.Is(err, syscall.ENOENT) && try < 8; try++ {
		if fd, err = h.create(); !errors.Is(err, syscall.EEXIST) {
			break
		}
		// Created by someone else meanwhile: open theirs.
		fd, err = open(h.name, syscall.O_RDWR|lockFlags, 0)
	}
	if errors.Is(err, syscall.EACCES) {
		// A lock file we may read but not write still takes a flock. If it
		// does not exist (we may not create it), the cause stays EACCES.
		if rfd, rerr := open(h.name, syscall.O_RDONLY|lockFlags, 0); rerr == nil {
			fd, err = rfd, nil
		}
	}
	if err == nil {
		err = checkRegular(fd)
		if err != nil {
			syscall.Close(fd)
		}
	}
	if err != nil {
		return &os.PathError{Op: "open", Path: h.name, Err: lockOpenError(h.name, err)}
	}
	h.fd = fd
	return nil
}

// create makes the lock file with the document's owner and permission bits
// (so that whoever may open the document may open its lock, as the
// document's owner decided, not as our umask would), or with perm minus
// umask when there is no document yet: it will get the same.
func (h *lockHandle) create() (int, error) {
	var doc syscall.Stat_t
	err := syscall.Lstat(strings.TrimSuffix(h.name, LockSuffix), &doc)
	hasDoc := err == nil && doc.Mode&syscall.S_IFMT == syscall.S_IFREG
	mode := uint32(h.perm.Perm() & 0o666)
	if hasDoc {
		mode = uint32(doc.Mode) & 0o666
	}
	fd, err := open(h.name, syscall.O_RDWR|syscall.O_CREAT|syscall.O_EXCL|lockFlags, mode)
	if err != nil || !hasDoc {
		return fd, err
	}
	// Best effort: only root may give the file away; the mode is ours to set.
	if int(doc.Uid) != os.Geteuid() || int(doc.Gid) != os.Getegid() {
		_ = syscall.Fchown(fd, int(doc.Uid), int(doc.Gid))
	}
	if err := syscall.Fchmod(fd, mode); err != nil {
		syscall.Close(fd)
		return -1, err
	}
	return fd, nil
}

// lockOpenError explains why the lock file could not be opened. The
// sentinels let callers tell a planted or foreign lock file (ErrNotRegular)
// and a name too long for its ".lock" suffix (ErrNameTooLong) apart.
func lockOpenError(name string, err error) error {
	switch {
	case errors.Is(err, syscall.ELOOP), errors.Is(err, syscall.EMLINK):
		// O_NOFOLLOW on a link: ELOOP on Linux and macOS, EMLINK on FreeBSD.
		var st syscall.Stat_t
		if syscall.Lstat(name, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFLNK {
			return fmt.Errorf("%w: a symbolic link (lock files are never followed)", fs.ErrNotRegular)
		}
	case errors.Is(err, syscall.EISDIR):
		return fmt.Errorf("%w: a directory (another tool's lock?)", fs.ErrNotRegular)
	case errors.Is(err, syscall.ENAMETOOLONG):
		return fmt.Errorf("%w: %w", ErrNameTooLong, err)
	}
	return err
}

func checkRegular(fd int) error {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return err
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		return nil
	case syscall.S_IFIFO:
		return fmt.Errorf("%w: a named pipe", fs.ErrNotRegular)
	case syscall.S_IFCHR, syscall.S_IFBLK:
		return fmt.Errorf("%w: a device", fs.ErrNotRegular)
	case syscall.S_IFSOCK:
		return fmt.Errorf("%w: a socket", fs.ErrNotRegular)
	}
	return fs.ErrNotRegular
}

func open(name string, flags int, mode uint32) (int, error) {
	for {
		fd, err := syscall.Open(name, flags, mode)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// tryLock takes the lock if it is free. A lock taken on a lock file that
// was removed (and perhaps created anew) since we opened it guards nothing:
// a newcomer would lock the new file. Then the handle starts over at once
// with a fresh descriptor (a tool that deletes the file on every release
// would otherwise make a polling waiter find its file stale every time);
// after a few such rounds it reports the lock as busy, so the caller's wait
// goes on and keeps honouring its context.
func (h *lockHandle) tryLock() (bool, error) {
	for stale := 0; ; {
		err := syscall.Flock(h.fd, syscall.LOCK_EX|syscall.LOCK_NB)
		switch err {
		case nil:
			same, err := h.current()
			if err != nil || same {
				return same, err
			}
			syscall.Close(h.fd)
			h.fd = -1
			if err := h.open(); err != nil || stale == 8 {
				return false, err
			}
			stale++
			continue
		case syscall.EINTR:
			continue
		case syscall.EWOULDBLOCK:
			return false, nil
		}
		return false, &os.PathError{Op: "flock", Path: h.name, Err: err}
	}
}

// current reports whether the descriptor's file is still the one named
// h.name (same device and inode).
func (h *lockHandle) current() (bool, error) {
	var fd, byName syscall.Stat_t
	if err := syscall.Fstat(h.fd, &fd); err != nil {
		return false, &os.PathError{Op: "fstat", Path: h.name, Err: err}
	}
	err := syscall.Lstat(h.name, &byName)
	if errors.Is(err, syscall.ENOENT) {
		return false, nil
	}
	if err != nil {
		return false, &os.PathError{Op: "lstat", Path: h.name, Err: err}
	}
	return fd.Dev == byName.Dev && fd.Ino == byName.Ino, nil
}

// id returns the identity (device and inode) of the file h has open: the
// canonical order in which transactions take locks.
func (h *lockHandle) id() (fileID, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(h.fd, &st); err != nil {
		return fileID{}, &os.PathError{Op: "fstat", Path: h.name, Err: err}
	}
	return fileID{uint64(st.Dev), uint64(st.Ino)}, nil
}

// close releases the lock: the kernel drops a flock when the last
// descriptor of its open file description closes.
func (h *lockHandle) close() {
	if h.fd >= 0 {
		syscall.Close(h.fd)
		h.fd = -1
	}
}
