package fs

import (
	"context"
	"errors"
	"io"
	"os"
	"path"
	"syscall"
	"time"
)

// Fs is a file system sandboxed under one directory, built on [os.Root]: every
// path walk is done with openat and O_NOFOLLOW, so neither a name nor a
// symbolic link (even one swapped in concurrently) can reach outside the
// root. Names are slash-separated and relative to the root (see
// [io/fs.ValidPath]); "..", absolute names and links leading outside fail with
// an error matching [ErrOutsideRoot].
//
// An Fs is safe for concurrent use. Errors are [*PathError] values.
type Fs struct {
	root *os.Root
}

// DefaultPerm is the permission [Fs.Append] gives a new file (minus umask),
// and the usual perm for a new file written with [WriteAtomic].
const DefaultPerm os.FileMode = 0o644

// New opens the directory root as a sandbox. [Fs.Close] releases it.
func New(root string) (*Fs, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, wrap("new", root, err)
	}
	learnEscapeError(r)
	return &Fs{root: r}, nil
}

// Close releases the root directory. Operations in flight may fail with
// [os.ErrClosed]; files returned by [Fs.Open] stay usable.
func (fsys *Fs) Close() error { return fsys.root.Close() }

// Name returns the name of the root directory as passed to [New].
func (fsys *Fs) Name() string { return fsys.root.Name() }

// WriteAtomic replaces name with data, atomically and durably, as
// [os.Root.WriteFile] would write it if it were atomic; perm is the
// permission of a new file (minus the umask). The [fs] package doc states
// the sequence and what it guarantees (modes, links inside the root, what
// an error matching [ErrDurabilityUnknown] means). The parent directory
// must exist ([Fs.MkdirAll]).
func (fsys *Fs) WriteAtomic(name string, data []byte, perm os.FileMode) error {
	_, err := fsys.write(name, &source{data: data}, perm)
	return err
}

// WriteAtomicFrom is [Fs.WriteAtomic] with the content streamed from r
// through a fixed-size buffer: memory does not grow with the file size.
// ctx is checked between chunks (a Read blocked in r is not interrupted);
// if ctx is done or r fails, name is left untouched. It returns the number
// of bytes written.
func (fsys *Fs) WriteAtomicFrom(ctx context.Context, name string, r io.Reader, perm os.FileMode) (int64, error) {
	src, err := streamSource(ctx, r)
	if err != nil {
		return 0, wrap("write atomic", name, err)
	}
	return fsys.write(name, src, perm)
}

func (fsys *Fs) write(name string, src *source, perm os.FileMode) (int64, error) {
	const op = "write atomic"
	l, err := local(name)
	if err != nil {
		return 0, wrap(op, name, err)
	}
	d, base, prev, err := pin(fsys.root, l, followInRoot)
	if err != nil {
		return 0, wrap(op, name, err)
	}
	defer d.Close()
	n, err := replace(d, base, prev, perm, src)
	return n, wrap(op, name, err)
}

// ReadFile returns the content of name.
func (fsys *Fs) ReadFile(name string) ([]byte, error) {
	l, err := local(name)
	if err != nil {
		return nil, wrap("read", name, err)
	}
	b, err := fsys.root.ReadFile(l)
	return b, wrap("read", name, err)
}

// Open opens name for reading. The caller closes the file.
func (fsys *Fs) Open(name string) (*os.File, error) {
	l, err := local(name)
	if err != nil {
		return nil, wrap("open", name, err)
	}
	f, err := fsys.root.Open(l)
	return f, wrap("open", name, err)
}

// Append appends data to name, creating it with [DefaultPerm] (minus umask)
// if needed, and makes the appended data durable before it returns: the
// file is fsynced, and so is its directory when Append created the file. It
// is meant for logs: data goes out in one write with O_APPEND, so appends by
// several goroutines or processes on a local file system do not interleave
// within one call. It is not a way to write a whole file ([Fs.WriteAtomic]).
func (fsys *Fs) Append(name string, data []byte) error {
	const op = "append"
	l, err := local(name)
	if err != nil {
		return wrap(op, name, err)
	}
	f, created, err := openAppend(fsys.root, l)
	if err != nil {
		return wrap(op, name, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && created {
		err = durabilityUnknown(syncPath(fsys.root, parent(l)))
	}
	return wrap(op, name, err)
}

// openAppend opens name for appending, creating it if it is missing;
// created reports that it was (its directory entry then needs a sync).
func openAppend(r *os.Root, name string) (f *os.File, created bool, err error) {
	f, err = r.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	if !errors.Is(err, os.ErrNotExist) {
		return f, false, err
	}
	f, err = r.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, DefaultPerm)
	return f, true, err
}

// MkdirAll creates name and any missing parents with perm (minus umask),
// like [os.MkdirAll], and makes every directory it creates durable: each new
// directory and the parent of the first one are fsynced before it returns.
func (fsys *Fs) MkdirAll(name string, perm os.FileMode) error {
	l, err := local(name)
	if err != nil {
		return wrap("mkdir all", name, err)
	}
	return wrap("mkdir all", name, mkdirAll(fsys.root, l, perm))
}

// Stat returns the FileInfo of name, following a final symbolic link
// inside the root.
func (fsys *Fs) Stat(name string) (os.FileInfo, error) {
	l, err := local(name)
	if err != nil {
		return nil, wrap("stat", name, err)
	}
	fi, err := fsys.root.Stat(l)
	return fi, wrap("stat", name, err)
}

// Exists reports whether name exists. A name below a regular file
// ("f/x") does not exist. A name that cannot be checked (bad name, outside
// the root, permission denied) is an error, not "false".
func (fsys *Fs) Exists(name string) (bool, error) {
	l, err := local(name)
	if err != nil {
		return false, wrap("exists", name, err)
	}
	_, err = fsys.root.Stat(l)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, os.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return false, nil
	}
	return false, wrap("exists", name, err)
}

// ReadDir returns the entries of directory name sorted by file name,
// temp files of writes in progress included (they are hidden names).
func (fsys *Fs) ReadDir(name string) ([]os.DirEntry, error) {
	const op = "read dir"
	l, err := local(name)
	if err != nil {
		return nil, wrap(op, name, err)
	}
	f, err := fsys.root.Open(l)
	if err != nil {
		return nil, wrap(op, name, err)
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	sortEntries(ents)
	return ents, wrap(op, name, err)
}

// Remove removes the file or empty directory name and makes the removal
// durable (the parent directory is fsynced).
func (fsys *Fs) Remove(name string) error {
	return fsys.removeWith("remove", name, fsys.root.Remove, false)
}

// RemoveAll removes name and everything it contains, like os.RemoveAll (a
// missing name is not an error), and fsyncs the parent directory.
func (fsys *Fs) RemoveAll(name string) error {
	return fsys.removeWith("remove all", name, fsys.root.RemoveAll, true)
}

// removeWith runs remove on name and fsyncs the parent. With missingOK a
// missing name is success and nothing is synced (its parent may be missing
// too).
func (fsys *Fs) removeWith(op, name string, remove func(string) error, missingOK bool) error {
	l, err := local(name)
	if err != nil {
		return wrap(op, name, err)
	}
	if l == "." {
		return wrap(op, name, ErrInvalidName)
	}
	if _, err := fsys.root.Lstat(l); missingOK && errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err := remove(l); err != nil {
		return wrap(op, name, err)
	}
	return wrap(op, name, durabilityUnknown(syncPath(fsys.root, parent(l))))
}

// Rename renames oldname to newname inside the root, replacing newname if
// it is a file (a symbolic link at newname is replaced, not followed: this
// is rename(2)). Both parent directories are fsynced before it returns.
func (fsys *Fs) Rename(oldname, newname string) error {
	const op = "rename"
	desc := oldname + " -> " + newname
	lo, err := local(oldname)
	if err != nil {
		return wrap(op, desc, err)
	}
	ln, err := local(newname)
	if err != nil {
		return wrap(op, desc, err)
	}
	if err := fsys.root.Rename(lo, ln); err != nil {
		return wrap(op, desc, err)
	}
	err = syncPath(fsys.root, parent(ln))
	if po := parent(lo); err == nil && po != parent(ln) {
		err = syncPath(fsys.root, po)
	}
	return wrap(op, desc, durabilityUnknown(err))
}

// SweepTemp removes the temp files that writes interrupted by a crash left
// in directory dir, when they are older than olderThan (by modification
// time). Only regular files whose names have exactly the shape of this
// package's temp files (".<base>.<16 hex digits>.tmp") are removed; nothing
// else is touched. Pick olderThan well above the longest write, or a
// write in progress loses its temp file and fails. It returns the removed
// names (dir-prefixed, sorted) and the errors of removals that failed.
func (fsys *Fs) SweepTemp(dir string, olderThan time.Duration) (removed []string, err error) {
	l, err := local(dir)
	if err != nil {
		return nil, wrap("sweep temp", dir, err)
	}
	names, err := sweep(fsys.root, l, olderThan)
	for _, n := range names {
		removed = append(removed, path.Join(dir, n))
	}
	return removed, wrap("sweep temp", dir, err)
}
