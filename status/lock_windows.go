//go:build windows

package status

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

type lockHandle struct {
	f *os.File
}

func openLock(name string, _ os.FileMode) (*lockHandle, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	return &lockHandle{f: f}, nil
}

// tryLock locks the first byte of the lock file (never the document, which
// readers must be able to open; Windows locks are mandatory).
func (h *lockHandle) tryLock() (bool, error) {
	ol := new(windows.Overlapped)
	err := windows.LockFileEx(windows.Handle(h.f.Fd()),
		windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return false, nil
	}
	return false, &os.PathError{Op: "LockFileEx", Path: h.f.Name(), Err: err}
}

// close releases the lock with the handle.
func (h *lockHandle) close() { h.f.Close() }
