//go:build unix

package journal

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// A dir is a directory in which recovery acts, open for its sync and for
// the trust rule (its owner and sticky bit). Its files are reached through
// its descriptor (openat, fstatat, unlinkat, renameat; see atCalls), never
// by a path resolved again: whoever may swap a directory on the way to it
// (a link of theirs) could otherwise make a later step act on a file of
// another directory than the one checked. Each file is still opened by the
// opening rules.
type dir struct {
	name     string
	fd       int
	dev, ino uint64
	uid      uint32
	sticky   bool
}

// openDir opens a directory to act in and to sync: O_DIRECTORY (anything
// else — a named pipe, a device — is refused before it is opened) and
// O_NONBLOCK. A symbolic link as its last element is followed, as for every
// path a caller names: a link cannot make recovery act on a file it would
// not trust, since each file found there is checked against the directory
// it is in, and every later step acts in that same directory.
func openDir(name string) (*dir, error) {
	hook("open", name)
	fd, err := retry(func() (int, error) {
		return syscall.Open(name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return nil, &os.PathError{Op: "fstat", Path: name, Err: err}
	}
	return &dir{name: name, fd: fd, dev: uint64(st.Dev), ino: uint64(st.Ino), uid: st.Uid, sticky: uint32(st.Mode)&syscall.S_ISVTX != 0}, nil
}

// sameAs reports whether d and o are one directory (device and inode).
func (d *dir) sameAs(o *dir) bool { return d.dev == o.dev && d.ino == o.ino }

// isAt reports whether name, following links, is d now.
func (d *dir) isAt(name string) bool {
	var st syscall.Stat_t
	return syscall.Stat(name, &st) == nil && uint64(st.Dev) == d.dev && uint64(st.Ino) == d.ino
}

// byPath reports whether d's files are reached by path: where the system
// lacks the *at calls, and in the CONTROL of the tests that show what they
// prevent.
func byPath() bool {
	s := TestSeams()
	return !atCalls || s != nil && s.ByPath
}

func (d *dir) close() {
	if d != nil && d.fd >= 0 {
		syscall.Close(d.fd)
		d.fd = -1
	}
}

func (d *dir) path(base string) string { return filepath.Join(d.name, base) }

// sync makes the directory's entries durable.
func (d *dir) sync() error {
	hook("sync", d.name)
	err := syscall.Fsync(d.fd)
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) {
		err = nil // a file system that cannot sync a directory (see package fs)
	}
	if err != nil {
		return &os.PathError{Op: "fsync", Path: d.name, Err: err}
	}
	return nil
}

// info is what recovery needs to know of a file.
type info struct {
	dev, ino uint64
	uid      uint32
	nlink    uint64
	size     int64
	mode     uint32
}

func infoOf(st *syscall.Stat_t) info {
	return info{dev: uint64(st.Dev), ino: uint64(st.Ino), uid: st.Uid, nlink: uint64(st.Nlink), size: st.Size, mode: uint32(st.Mode)}
}

func (i info) regular() bool    { return i.mode&syscall.S_IFMT == syscall.S_IFREG }
func (i info) isDir() bool      { return i.mode&syscall.S_IFMT == syscall.S_IFDIR }
func (i info) same(o info) bool { return i.dev == o.dev && i.ino == o.ino }
func (i info) owner() int64     { return int64(i.uid) }

// kind names a file that is not a regular one.
func (i info) kind() string {
	switch i.mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		return "a directory"
	case syscall.S_IFLNK:
		return "a symbolic link"
	case syscall.S_IFIFO:
		return "a named pipe"
	case syscall.S_IFCHR, syscall.S_IFBLK:
		return "a device"
	case syscall.S_IFSOCK:
		return "a socket"
	}
	return "a special file"
}

// statOf returns the info of fi, from os.Lstat.
func statOf(fi os.FileInfo) (info, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return info{}, false
	}
	return infoOf(st), true
}

// errNotDir is the error of a path whose directory is not one.
var errNotDir error = syscall.ENOTDIR

// stat returns the file base in d without following a link; ok is false
// when there is none.
func (d *dir) stat(base string) (fi info, ok bool, err error) {
	if byPath() {
		return lstat(d.path(base))
	}
	var st syscall.Stat_t
	_, err = retry(func() (int, error) { return 0, fstatat(d.fd, base, &st) })
	switch {
	case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ENOTDIR):
		return info{}, false, nil
	case err != nil:
		return info{}, false, &os.PathError{Op: "fstatat", Path: d.path(base), Err: err}
	}
	return infoOf(&st), true, nil
}

func lstat(name string) (info, bool, error) {
	var st syscall.Stat_t
	_, err := retry(func() (int, error) { return 0, syscall.Lstat(name, &st) })
	switch {
	case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ENOTDIR):
		return info{}, false, nil
	case err != nil:
		return info{}, false, &os.PathError{Op: "lstat", Path: name, Err: err}
	}
	return infoOf(&st), true, nil
}

// A file is a regular file recovery opened to read or sync.
type file struct {
	f    *os.File
	info info
}

func (f *file) close() {
	if f != nil {
		f.f.Close()
	}
}

// open opens the file base in d by the opening rules (see openPath).
func (d *dir) open(role, base string, limit int64) (*file, error) {
	if byPath() {
		return openPath(role, d.path(base), limit)
	}
	name := d.path(base)
	hook("open", name)
	before, ok, err := d.stat(base)
	return openChecked(role, name, limit, before, ok, err, func(flags int) (int, error) {
		return openat(d.fd, base, flags, 0)
	})
}

// openPath opens the file at name by the opening rules: never through a
// symbolic link, never blocking, and only a regular file, refused before
// it is opened when it is not one (opening a device can have effects) and
// checked again on the descriptor. limit > 0 bounds its size. A missing
// file is an error matching os.ErrNotExist.
func openPath(role, name string, limit int64) (*file, error) {
	hook("open", name)
	before, ok, err := lstat(name)
	return openChecked(role, name, limit, before, ok, err, func(flags int) (int, error) {
		return syscall.Open(name, flags, 0)
	})
}

// openChecked opens the file named name, found as before (ok: it exists;
// err: the look failed), with open, by the opening rules.
func openChecked(role, name string, limit int64, before info, ok bool, err error, open func(flags int) (int, error)) (*file, error) {
	switch {
	case err != nil:
		return nil, &Error{Role: role, Path: name, Err: errors.Unwrap(err)}
	case !ok:
		return nil, &Error{Role: role, Path: name, Err: syscall.ENOENT}
	case !before.regular():
		return nil, notRegular(role, name, before)
	case limit > 0 && before.size > limit:
		return nil, tooLarge(role, name, before.size, limit)
	}
	fd, err := retry(func() (int, error) {
		return open(syscall.O_RDONLY | syscall.O_NOFOLLOW | syscall.O_NONBLOCK | syscall.O_CLOEXEC)
	})
	if err != nil {
		if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK) { // O_NOFOLLOW on a link (EMLINK: FreeBSD)
			return nil, notRegular(role, name, info{mode: syscall.S_IFLNK})
		}
		return nil, &Error{Role: role, Path: name, Err: err}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return nil, &Error{Role: role, Path: name, Err: err}
	}
	fi := infoOf(&st)
	if !fi.regular() || !fi.same(before) {
		syscall.Close(fd)
		return nil, untrusted(role, name, "replaced while it was opened")
	}
	if limit > 0 && fi.size > limit {
		syscall.Close(fd)
		return nil, tooLarge(role, name, fi.size, limit)
	}
	return &file{f: os.NewFile(uintptr(fd), name), info: fi}, nil
}

// unlink removes the file base in d; never a directory (unlink(2) and
// unlinkat(2) without AT_REMOVEDIR refuse one).
func (d *dir) unlink(base string) error {
	_, err := retry(func() (int, error) {
		if byPath() {
			return 0, syscall.Unlink(d.path(base))
		}
		return 0, unlinkat(d.fd, base)
	})
	if err != nil {
		return &os.PathError{Op: "unlink", Path: d.path(base), Err: err}
	}
	return nil
}

// rename renames from over to, both in d.
func (d *dir) rename(from, to string) error {
	_, err := retry(func() (int, error) {
		if byPath() {
			return 0, syscall.Rename(d.path(from), d.path(to))
		}
		return 0, renameat(d.fd, from, d.fd, to)
	})
	if err != nil {
		return &os.LinkError{Op: "rename", Old: d.path(from), New: d.path(to), Err: err}
	}
	return nil
}

// createExcl creates the new file base in d, never through a link.
func (d *dir) createExcl(base string, perm os.FileMode) (*os.File, error) {
	if byPath() {
		return createExcl(d.path(base), perm)
	}
	fd, err := retry(func() (int, error) {
		return openat(d.fd, base, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, uint32(perm.Perm()))
	})
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: d.path(base), Err: err}
	}
	return os.NewFile(uintptr(fd), d.path(base)), nil
}

// trusts applies the trust rule to the transaction file fi, named name, in
// d, for a document owned by docUID (-1: the document does not exist). See
// package status (Transactions) for why the rule is what it is.
func (d *dir) trusts(role, name string, fi info, docUID int64) error {
	if fi.nlink != 1 {
		return untrusted(role, name, "it has %d hard links", fi.nlink)
	}
	euid := int64(os.Geteuid())
	if s := TestSeams(); s != nil && s.StrictOwner {
		if want := docUID; want < 0 && int64(fi.uid) != euid || want >= 0 && int64(fi.uid) != want {
			return untrusted(role, name, "owned by uid %d, not by the document's owner", fi.uid)
		}
		return nil
	}
	if s := TestSeams(); !d.sticky || s != nil && s.TrustAnyOwner {
		return nil
	}
	if uid := int64(fi.uid); uid == docUID || uid == euid || uid == int64(d.uid) {
		return nil
	}
	return untrusted(role, name, "owned by uid %d in a sticky directory, where only the document's owner, uid %d (this process) or the directory's owner may leave transaction files", fi.uid, euid)
}

// lexists reports whether name exists, without following a link; it costs
// one lstat and no allocation of an error when it does not: every lock
// acquisition asks it, for the marker.
func lexists(name string) (bool, error) {
	var st syscall.Stat_t
	for {
		switch err := syscall.Lstat(name, &st); err {
		case nil:
			return true, nil
		case syscall.ENOENT:
			return false, nil
		case syscall.EINTR:
			continue
		default:
			return false, &os.PathError{Op: "lstat", Path: name, Err: err}
		}
	}
}

func retry(call func() (int, error)) (int, error) {
	for {
		n, err := call()
		if err != syscall.EINTR {
			return n, err
		}
	}
}

// copyOwnerMode gives f, the new content of a document, the owner (when we
// may: root, or a group we belong to) and the permission bits of prev, the
// document it will replace, as fs.WriteAtomic does.
func copyOwnerMode(f *os.File, prev os.FileInfo) error {
	if st, ok := prev.Sys().(*syscall.Stat_t); ok && (int(st.Uid) != os.Geteuid() || int(st.Gid) != os.Getegid()) {
		err := f.Chown(int(st.Uid), int(st.Gid))
		if errors.Is(err, syscall.EPERM) {
			err = f.Chown(-1, int(st.Gid)) // a group we belong to
		}
		if err != nil && !errors.Is(err, syscall.EPERM) {
			return err
		}
	}
	// After the chown: chown may clear setuid/setgid bits.
	return f.Chmod(prev.Mode() & (os.ModePerm | os.ModeSetuid | os.ModeSetgid | os.ModeSticky))
}

const oNoFollow = syscall.O_NOFOLLOW
