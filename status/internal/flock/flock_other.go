//go:build !(darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd || windows)

package flock

import (
	"errors"
	"os"
	"time"
)

// A File is never opened on systems without flock.
type File struct {
	locked bool
	name   string
	bell   *bell
	start  time.Time     // when the current Lock began
	waited time.Duration // how long the Lock that took the lock waited
}

// Open returns [errors.ErrUnsupported]: the system has no flock.
func Open(name, doc string, perm os.FileMode) (*File, error) {
	return nil, &os.PathError{Op: "lock", Path: name, Err: errors.ErrUnsupported}
}

func (f *File) tryLock() (bool, error) { return false, errors.ErrUnsupported }
func (f *File) closeFD()               {}

// ID returns [errors.ErrUnsupported].
func (f *File) ID() (ID, error) { return ID{}, errors.ErrUnsupported }
