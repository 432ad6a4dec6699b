//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package flock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/agentstate/core/fs"
)

// A File is one acquisition's descriptor of a lock file.
type File struct {
	fd     int
	name   string
	doc    string      // the document the lock file guards
	perm   os.FileMode // for a lock file created while its document is missing
	locked bool
	bell   *bell         // the lock file's bell while waiting, and holding after a wait
	bellFD int           // f.fd when the bell was mapped
	kept   *bell         // the bell kept with a kept descriptor, until openBell takes it
	start  time.Time     // when the current Lock began
	waited time.Duration // how long the Lock that took the lock waited
}

// Open opens the lock file name, which guards the document doc, with an
// open file description of its own (one this process kept, if name still
// names its file, or else a fresh one), creating it if it is missing, and
// refuses it unless it is a regular file. A final symbolic link is never
// followed and the open never blocks (a named pipe planted as the lock
// file). A lock file created gets doc's permission bits and, as root, its
// owner, or perm minus umask when doc is not a regular file. Errors are
// *os.PathError; a link, directory, pipe or device matches
// [fs.ErrNotRegular].
func Open(name, doc string, perm os.FileMode) (*File, error) {
	f := &File{fd: -1, name: name, doc: doc, perm: perm}
	if k, ok := takeKept(name); ok {
		f.fd, f.kept = k.fd, k.bell
		return f, nil
	}
	if err := f.open(); err != nil {
		return nil, err
	}
	return f, nil
}

// lockFlags: never follow a final symbolic link (a link planted in a shared
// directory must not make us create or lock a file elsewhere) and never
// block in open (a named pipe planted as the lock file).
const lockFlags = syscall.O_CLOEXEC | syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// open opens the lock file with a fresh open file description, creating it
// if it is missing, and checks that it is a regular file.
func (f *File) open() error {
	fd, err := open(f.name, syscall.O_RDWR|lockFlags, 0)
	for try := 0; errors.Is(err, syscall.ENOENT) && try < 8; try++ {
		if fd, err = f.create(); !errors.Is(err, syscall.EEXIST) {
			break
		}
		// Created by someone else meanwhile: open theirs.
		fd, err = open(f.name, syscall.O_RDWR|lockFlags, 0)
	}
	if errors.Is(err, syscall.EACCES) {
		// A lock file we may read but not write still takes a flock. If it
		// does not exist (we may not create it), the cause stays EACCES.
		if rfd, rerr := open(f.name, syscall.O_RDONLY|lockFlags, 0); rerr == nil {
			fd, err = rfd, nil
		}
	}
	if err == nil {
		var st syscall.Stat_t
		if err = syscall.Fstat(fd, &st); err == nil {
			err = checkRegular(&st)
		}
		if err == nil {
			err = trusted(&st, f.name, f.doc)
		}
		if err != nil {
			syscall.Close(fd)
		}
	}
	if err != nil {
		return &os.PathError{Op: "open", Path: f.name, Err: lockOpenError(f.name, err)}
	}
	f.fd = fd
	return nil
}

// Check reports, opening nothing, whether a writer of the document doc
// would refuse its lock file name for its owner ([ErrUntrusted]), or
// because it is not a regular file (fs.ErrNotRegular). A missing lock file
// is an error matching os.ErrNotExist.
func Check(name, doc string) error {
	var st syscall.Stat_t
	if err := syscall.Lstat(name, &st); err != nil {
		return &os.PathError{Op: "lstat", Path: name, Err: err}
	}
	err := checkRegular(&st)
	if err == nil {
		err = trusted(&st, name, doc)
	}
	if err != nil {
		return &os.PathError{Op: "check", Path: name, Err: err}
	}
	return nil
}

// trusted applies the trust rule to the lock file st, named name, of the
// document doc: in a directory with the sticky bit (1777, like /tmp) its
// owner must be the document's, the caller (effective uid) or the
// directory's. Anyone else could unlink it and create it anew, or rename
// another file of theirs over it, whenever they like: a lock on it would
// exclude nobody. Elsewhere whoever may create the lock file may also
// replace the document itself. A lock file this process created passes:
// it is the caller's, or the document's owner's when root gave it away.
func trusted(st *syscall.Stat_t, name, doc string) error {
	uid := st.Uid
	if s := TestSeams(); int(uid) == os.Geteuid() || s != nil && s.TrustAnyOwner {
		return nil
	}
	var d syscall.Stat_t
	if err := syscall.Stat(filepath.Dir(name), &d); err != nil || d.Mode&syscall.S_ISVTX == 0 || d.Uid == uid {
		return err
	}
	if syscall.Lstat(doc, &d) == nil && d.Mode&syscall.S_IFMT == syscall.S_IFREG && d.Uid == uid {
		return nil
	}
	return fmt.Errorf("%w: owned by uid %d in a sticky directory, where only the document's owner, uid %d (this process) or the directory's owner may own it", ErrUntrusted, uid, os.Geteuid())
}

// create makes the lock file with the document's owner and permission bits
// (so that whoever may open the document may open its lock, as the
// document's owner decided, not as our umask would), or with perm minus
// umask when there is no document yet: it will get the same.
func (f *File) create() (int, error) {
	var doc syscall.Stat_t
	err := syscall.Lstat(f.doc, &doc)
	hasDoc := err == nil && doc.Mode&syscall.S_IFMT == syscall.S_IFREG
	mode := uint32(f.perm.Perm() & 0o666)
	if hasDoc {
		mode = uint32(doc.Mode) & 0o666
	}
	fd, err := open(f.name, syscall.O_RDWR|syscall.O_CREAT|syscall.O_EXCL|lockFlags, mode)
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

// lockOpenError explains why the lock file could not be opened: the
// sentinel lets callers tell a planted or foreign lock file
// (fs.ErrNotRegular) apart.
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
	case errors.Is(err, syscall.ENXIO):
		// What open(2) says of a socket, or of a named pipe without a
		// reader opened for writing: neither is a lock file.
		var st syscall.Stat_t
		if syscall.Lstat(name, &st) == nil {
			if err := checkRegular(&st); err != nil {
				return err
			}
		}
	}
	return err
}

func checkRegular(st *syscall.Stat_t) error {
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		return nil
	case syscall.S_IFIFO:
		return fmt.Errorf("%w: a named pipe", fs.ErrNotRegular)
	case syscall.S_IFCHR, syscall.S_IFBLK:
		return fmt.Errorf("%w: a device", fs.ErrNotRegular)
	case syscall.S_IFSOCK:
		return fmt.Errorf("%w: a socket", fs.ErrNotRegular)
	case syscall.S_IFLNK:
		return fmt.Errorf("%w: a symbolic link", fs.ErrNotRegular)
	case syscall.S_IFDIR:
		return fmt.Errorf("%w: a directory", fs.ErrNotRegular)
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
// a newcomer would lock the new file. Then the file starts over at once
// with a fresh descriptor (a tool that deletes the file on every release
// would otherwise make a polling waiter find its file stale every time);
// after a few such rounds it reports the lock as busy, so the caller's wait
// goes on and keeps honouring its context.
func (f *File) tryLock() (bool, error) {
	for stale := 0; ; {
		err := syscall.Flock(f.fd, syscall.LOCK_EX|syscall.LOCK_NB)
		switch err {
		case nil:
			same, err := f.current()
			if err != nil || same {
				return same, err
			}
			f.closeFD()
			if err := f.open(); err != nil || stale == 8 {
				return false, err
			}
			stale++
			continue
		case syscall.EINTR:
			continue
		case syscall.EWOULDBLOCK:
			return false, nil
		}
		return false, &os.PathError{Op: "flock", Path: f.name, Err: err}
	}
}

// current reports whether the descriptor's file is still the one named
// f.name (same device and inode).
func (f *File) current() (bool, error) {
	if s := TestSeams(); s != nil && s.noRecheck {
		return true, nil
	}
	var fd, byName syscall.Stat_t
	if err := syscall.Fstat(f.fd, &fd); err != nil {
		return false, &os.PathError{Op: "fstat", Path: f.name, Err: err}
	}
	err := syscall.Lstat(f.name, &byName)
	if errors.Is(err, syscall.ENOENT) {
		return false, nil
	}
	if err != nil {
		return false, &os.PathError{Op: "lstat", Path: f.name, Err: err}
	}
	return fd.Dev == byName.Dev && fd.Ino == byName.Ino, nil
}

// ID returns the identity (device and inode) of the file f has open.
func (f *File) ID() (ID, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(f.fd, &st); err != nil {
		return ID{}, &os.PathError{Op: "fstat", Path: f.name, Err: err}
	}
	return ID{uint64(st.Dev), uint64(st.Ino)}, nil
}

// closeFD releases the lock: the kernel drops a flock when the last
// descriptor of its open file description closes.
func (f *File) closeFD() {
	if f.fd >= 0 {
		closeLock(f.fd)
		f.fd = -1
	}
	if f.kept != nil {
		f.kept.close()
		f.kept = nil
	}
}

// release releases the lock, if f holds it, and reports whether f's
// descriptor is to be kept (see [File.worthKeeping]) rather than closed. A kept
// descriptor is unlocked whether f holds the lock or not: a flock taken on
// a file that turned out to be stale must not stay behind.
func (f *File) release() bool {
	if f.worthKeeping() {
		for {
			err := syscall.Flock(f.fd, syscall.LOCK_UN)
			if err == nil {
				return true
			}
			if err != syscall.EINTR {
				break
			}
		}
	}
	f.closeFD()
	return false
}

// keep keeps f's descriptor, unlocked, with its bell b (which is closed
// instead if it is another file's) or the bell f was given with it.
func (f *File) keep(b *bell) {
	if b != nil && f.stale() {
		b.close()
		b = nil
	}
	if b == nil {
		b = f.kept
	} else if f.kept != nil {
		f.kept.close()
	}
	f.kept = nil
	keep(kept{name: f.name, fd: f.fd, bell: b})
	f.fd = -1
}
