package filestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/agentstate/core/fs"
)

// LockSuffix is appended to a document's path to name its lock file.
const LockSuffix = ".lock"

// A Doc is one document kept in a file by this package: the status
// package's default backend. It implements status.Backend,
// status.RemoveBackend and status.WatchBackend; [UpdateAll] changes
// several together and [Doc.Quarantine] moves one aside.
type Doc struct {
	path    string      // as given by the caller, for errors
	perm    os.FileMode // for a document file we create
	maxSize int64       // largest document read; <= 0: no limit
}

// New returns the document at path; perm is the mode of a file it
// creates, maxSize the size of the largest file it reads (<= 0: no limit).
func New(path string, perm os.FileMode, maxSize int64) *Doc {
	return &Doc{path: path, perm: perm, maxSize: maxSize}
}

// Name returns the path as the caller gave it.
func (d *Doc) Name() string { return d.path }

// sameOptions reports whether calls through a and b may share a batch: one
// read and one write apply a single size limit and permission, so each
// call batches only with calls of its own options.
func sameOptions(a, b *Doc) bool {
	return a.perm == b.perm && a.maxSize == b.maxSize
}

// Load reads the file without locking: writers replace it by rename, so any
// read sees one complete version.
//
// It first yields the processor (runtime.Gosched). A read is a few short
// system calls, none of which makes the scheduler run another goroutine, so
// goroutines that read in a loop would otherwise keep every processor for a
// full time slice (10 ms) at a time, while a writer of the same process
// that returns from its fsync waits in the run queue behind them: the
// write, and every call in its batch, would take tens of milliseconds.
// The yield costs a reader a trip through the run queue (about a
// microsecond when nothing else is runnable).
func (d *Doc) Load(ctx context.Context) ([]byte, error) {
	if err := checkPath(d.path); err != nil {
		return nil, Error("read", d.path, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("status: read %s: %w", d.path, err)
	}
	runtime.Gosched()
	return Read(d.path, d.path, d.maxSize)
}

// Read reads the document file at path (named name in errors) with
// fs.ReadRegular: a missing file is no document (nil, nil); a link, named
// pipe, device or directory is refused without blocking (fs.ErrNotRegular),
// and so is a file larger than maxSize (fs.ErrTooLarge).
func Read(name, path string, maxSize int64) ([]byte, error) {
	data, err := fs.ReadRegular(path, maxSize)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("status: read %s: %w", name, Cause(err)) // named once, here
	}
	return data, nil // an empty file is a document (a corrupt one), not a missing one
}

// Error reports a failed operation op on the document at path. It names
// path once: an *os.PathError or *fs.PathError for path itself or its lock
// file gives only its operation and cause.
func Error(op, path string, err error) error {
	if path == "" {
		return fmt.Errorf("status: %s: %w", op, err)
	}
	if pathOp, errPath, cause, ok := splitPathError(err); ok {
		switch errPath {
		case path:
			err = fmt.Errorf("%s: %w", pathOp, cause)
		case path + LockSuffix:
			err = fmt.Errorf("%s lock file: %w", pathOp, cause)
		}
	}
	return fmt.Errorf("status: %s %s: %w", op, path, err)
}

// Cause returns the cause of an *os.PathError or *fs.PathError, without
// its operation and path, for a caller that names the path itself; any
// other error as it is.
func Cause(err error) error {
	if _, _, cause, ok := splitPathError(err); ok {
		return cause
	}
	return err
}

// splitPathError returns the parts of an *os.PathError or *fs.PathError.
func splitPathError(err error) (op, path string, cause error, ok bool) {
	switch e := err.(type) {
	case *os.PathError:
		return e.Op, e.Path, e.Err, true
	case *fs.PathError:
		return e.Op, e.Path, e.Err, true
	}
	return "", "", nil, false
}

var errEmptyPath = errors.New("empty path")

// checkPath refuses names that cannot be a document file: empty, or ending
// in a path separator, "." or ".." (the kernel would look for a directory).
func checkPath(path string) error {
	if path == "" {
		return errEmptyPath
	}
	_, base := splitPath(path)
	if base == "" || base == "." || base == ".." {
		return fmt.Errorf("%w: a document path must name a file, not end in %q", fs.ErrInvalidName, path[len(path)-max(len(base), 1):])
	}
	return nil
}

// docPath returns the absolute name of the file that path names, as the
// kernel resolves it when the call starts: the key under which this process
// serialises the document's calls, and the name its lock file, reads and
// writes use. Cleaning "dir/../x" as text is wrong when dir is a symbolic
// link (the kernel goes to the parent of the link's target), so a path
// with ".." has its directory resolved through its links first. The final
// element is not resolved: the document itself is never a link.
func docPath(path string) (string, error) {
	if err := checkPath(path); err != nil {
		return "", err
	}
	if !filepath.IsAbs(path) {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		path = wd + string(os.PathSeparator) + path // not Join: it cleans
	}
	// Windows resolves ".." as text before the file system sees the name.
	if runtime.GOOS == "windows" || !slices.Contains(strings.Split(filepath.ToSlash(path), "/"), "..") {
		return filepath.Clean(path), nil
	}
	dir, base := splitPath(path)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	return filepath.Join(real, base), nil
}

// splitPath returns path's directory and final element without cleaning.
func splitPath(path string) (dir, base string) {
	i := len(path) - 1
	for i >= 0 && !os.IsPathSeparator(path[i]) {
		i--
	}
	return path[:i+1], path[i+1:]
}
