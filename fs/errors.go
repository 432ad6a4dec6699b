package fs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// Sentinel errors. They are wrapped, never returned bare: test for them with
// [errors.Is].
var (
	// ErrDurabilityUnknown reports that the change was applied (a write's
	// new content replaced the destination and readers see it; a rename,
	// removal or mkdir happened) but the directory could not be synced, so
	// it may not survive a power loss. Do not retry the sync: write the
	// whole content again if durability matters.
	ErrDurabilityUnknown = errors.New("applied, durability unknown")

	// ErrOutsideRoot reports a name that leaves the sandbox of an [Fs]: an
	// absolute name, a ".." element, or a symbolic link that points outside.
	ErrOutsideRoot = errors.New("name is outside the root")

	// ErrInvalidName reports a name an [Fs] does not accept: empty, or not in
	// the slash-separated form of io/fs.ValidPath (no "." or empty elements,
	// no leading or trailing slash).
	ErrInvalidName = errors.New("invalid name")

	// ErrNotRegular reports a name that exists but is not a regular file (a
	// directory, device, named pipe, socket, or a symbolic link where links
	// are not followed): a write never replaces it and [ReadRegular] never
	// reads it.
	ErrNotRegular = errors.New("not a regular file")

	// ErrTooLarge reports a file larger than the limit its reader set
	// ([ReadRegular]). Nothing beyond the limit was read.
	ErrTooLarge = errors.New("file too large")

	// ErrMountPoint reports a destination that is a mount point (for example a
	// bind-mounted single file): rename cannot replace it and this package
	// never falls back to a non-atomic copy.
	ErrMountPoint = errors.New("destination is a mount point")
)

// PathError records a failed operation, the name it was applied to (as the
// caller gave it) and the cause. Its message reads
// "fs: <op> <path>: <cause>". It also matches *[os.PathError] (the same
// type as io/fs.PathError) with [errors.As], holding the same Op, Path and
// Err, so that code written for the os package's errors keeps working.
type PathError struct {
	Op   string // "write atomic", "mkdir all", "rename", ...
	Path string // the caller's name; for Rename "old -> new"
	Err  error
}

func (e *PathError) Error() string { return "fs: " + e.Op + " " + e.Path + ": " + e.Err.Error() }

// Unwrap returns the cause, so [errors.Is] sees sentinels and syscall errors.
func (e *PathError) Unwrap() error { return e.Err }

// As sets *target to an *os.PathError copy of e when target is an
// **os.PathError.
func (e *PathError) As(target any) bool {
	p, ok := target.(**os.PathError)
	if ok {
		*p = &os.PathError{Op: e.Op, Path: e.Path, Err: e.Err}
	}
	return ok
}

func wrap(op, path string, err error) error {
	if err == nil {
		return nil
	}
	err = withoutPath(err, path)
	if isEscape(err) && !errors.Is(err, ErrOutsideRoot) {
		err = fmt.Errorf("%w: %w", ErrOutsideRoot, err)
	}
	return &PathError{Op: op, Path: path, Err: err}
}

// withoutPath drops the *os.PathError or *os.LinkError that an os or
// [os.Root] call wraps around its cause when it names the same path as the
// *PathError about to wrap it, so that the message names the path once.
// One naming another path (a parent directory, a temp file) is kept.
func withoutPath(err error, path string) error {
	same := func(p string) bool { return filepath.Clean(p) == filepath.Clean(filepath.FromSlash(path)) }
	switch e := err.(type) {
	case *os.PathError:
		if same(e.Path) {
			return e.Err
		}
	case *os.LinkError:
		if same(e.Old + " -> " + e.New) {
			return e.Err
		}
	}
	return err
}

// [os.Root] reports a name that escapes it with an unexported error value. We
// learn that value once, lazily, from an operation that fails lexically
// (no system call is made), instead of matching on its message.
var (
	escapeOnce sync.Once
	escapeErr  error
)

func learnEscapeError(r *os.Root) {
	escapeOnce.Do(func() {
		_, err := r.Lstat("..")
		var pe *os.PathError
		if errors.As(err, &pe) {
			escapeErr = pe.Err
		}
	})
}

func isEscape(err error) bool {
	return escapeErr != nil && errors.Is(err, escapeErr)
}

// durabilityUnknown wraps the error of a directory sync that failed after
// the change became visible. Some file systems (FUSE, network, some
// overlays) answer a directory fsync with EINVAL or ENOTSUP: that means "not
// supported", not "data lost", and is not reported.
func durabilityUnknown(err error) error {
	if err == nil || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrDurabilityUnknown, err)
}
