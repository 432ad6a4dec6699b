//go:build !unix

package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentstate/core/fs"
)

// Without openat, the directory is its name and every step goes by path;
// there is no owner to check and no sticky bit (see file_unix.go for the
// rules).
type dir struct{ name string }

func openDir(name string) (*dir, error) {
	hook("open", name)
	fi, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &os.PathError{Op: "open", Path: name, Err: errNotDir}
	}
	return &dir{name: name}, nil
}

var errNotDir = errors.New("not a directory")

// byPath: a directory's files are always reached by path here.
func byPath() bool { return true }

func (d *dir) sameAs(*dir) bool             { return true }
func (d *dir) isAt(string) bool             { return true }
func (d *dir) close()                       {}
func (d *dir) path(base string) string      { return filepath.Join(d.name, base) }
func (d *dir) sync() error                  { hook("sync", d.name); return nil } // a directory cannot be synced (see package fs)
func (d *dir) unlink(base string) error     { return os.Remove(d.path(base)) }
func (d *dir) rename(from, to string) error { return os.Rename(d.path(from), d.path(to)) }

func (d *dir) createExcl(base string, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(d.path(base), os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
}

type info struct {
	fi   os.FileInfo
	size int64
}

func (i info) regular() bool { return i.fi != nil && i.fi.Mode().IsRegular() }
func (i info) isDir() bool   { return i.fi != nil && i.fi.IsDir() }
func (i info) same(o info) bool {
	return i.fi != nil && o.fi != nil && os.SameFile(i.fi, o.fi)
}
func (i info) kind() string {
	if i.isDir() {
		return "a directory"
	}
	return "a special file"
}

func (i info) owner() int64 { return -1 }

func statOf(fi os.FileInfo) (info, bool) { return info{fi: fi, size: fi.Size()}, true }

func (d *dir) stat(base string) (info, bool, error) {
	fi, err := os.Lstat(d.path(base))
	if errors.Is(err, os.ErrNotExist) {
		return info{}, false, nil
	}
	if err != nil {
		return info{}, false, err
	}
	return info{fi: fi, size: fi.Size()}, true, nil
}

type file struct {
	f    *os.File
	info info
}

func (f *file) close() {
	if f != nil {
		f.f.Close()
	}
}

func (d *dir) open(role, base string, limit int64) (*file, error) {
	return openPath(role, d.path(base), limit)
}

func openPath(role, name string, limit int64) (*file, error) {
	hook("open", name)
	fi, err := os.Lstat(name)
	if err != nil {
		return nil, &Error{Role: role, Path: name, Err: errors.Unwrap(err)}
	}
	if !fi.Mode().IsRegular() {
		return nil, &Error{Role: role, Path: name, Err: fmt.Errorf("%w: %w", ErrUntrusted, fs.ErrNotRegular)}
	}
	if limit > 0 && fi.Size() > limit {
		return nil, tooLarge(role, name, fi.Size(), limit)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, &Error{Role: role, Path: name, Err: errors.Unwrap(err)}
	}
	return &file{f: f, info: info{fi: fi, size: fi.Size()}}, nil
}

func (d *dir) trusts(role, name string, fi info, docUID int64) error { return nil }

func lexists(name string) (bool, error) {
	_, err := os.Lstat(name)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

func copyOwnerMode(f *os.File, prev os.FileInfo) error { return f.Chmod(prev.Mode().Perm()) }

const oNoFollow = 0
