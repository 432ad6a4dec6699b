//go:build !(darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd || windows)

package status

import (
	"errors"
	"os"
)

type lockHandle struct{}

func openLock(name string, perm os.FileMode) (*lockHandle, error) {
	return nil, &os.PathError{Op: "lock", Path: name, Err: errors.ErrUnsupported}
}

func (h *lockHandle) tryLock() (bool, error) { return false, errors.ErrUnsupported }
func (h *lockHandle) close()                 {}
func (h *lockHandle) id() (fileID, error)    { return fileID{}, errors.ErrUnsupported }
