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

// id returns the identity (volume and file index) of the lock file: the
// canonical order in which transactions take locks.
func (h *lockHandle) id() (fileID, error) {
	var fi windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(h.f.Fd()), &fi); err != nil {
		return fileID{}, &os.PathError{Op: "GetFileInformationByHandle", Path: h.f.Name(), Err: err}
	}
	return fileID{uint64(fi.VolumeSerialNumber), uint64(fi.FileIndexHigh)<<32 | uint64(fi.FileIndexLow)}, nil
}

// close releases the lock with the handle.
func (h *lockHandle) close() { h.f.Close() }
