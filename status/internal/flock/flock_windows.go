//go:build windows

package flock

import (
	"errors"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// LockFileEx and UnlockFileEx through the standard library's syscall
// package, as cmd/go's lockedfile does, so that the package needs no module
// beyond the standard library. kernel32.dll is a known DLL: the loader maps
// the system copy whatever the search path.
var (
	kernel32         = syscall.NewLazyDLL("kernel32.dll")
	procLockFileEx   = kernel32.NewProc("LockFileEx")
	procUnlockFileEx = kernel32.NewProc("UnlockFileEx")
)

const (
	lockfileFailImmediately = 0x00000001 // LOCKFILE_FAIL_IMMEDIATELY
	lockfileExclusiveLock   = 0x00000002 // LOCKFILE_EXCLUSIVE_LOCK

	errorLockViolation syscall.Errno = 33 // ERROR_LOCK_VIOLATION
)

// A File is one acquisition's handle of a lock file.
type File struct {
	f      *os.File
	locked bool
	byte0  bool // LockFileEx holds the first byte
	name   string
	bell   *bell
	start  time.Time     // when the current Lock began
	waited time.Duration // how long the Lock that took the lock waited
}

// Open opens (or creates) the lock file name. Windows has no flock: the
// lock is LockFileEx on its first byte, and doc and perm are not used.
func Open(name, doc string, perm os.FileMode) (*File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	return &File{f: f, name: name}, nil
}

// tryLock locks the first byte of the lock file (never the document, which
// readers must be able to open; Windows locks are mandatory).
func (f *File) tryLock() (bool, error) {
	err := lockFileEx(f.f.Fd(), lockfileExclusiveLock|lockfileFailImmediately)
	if err == nil {
		f.byte0 = true
		return true, nil
	}
	if errors.Is(err, errorLockViolation) || errors.Is(err, syscall.ERROR_IO_PENDING) {
		return false, nil
	}
	return false, &os.PathError{Op: "LockFileEx", Path: f.f.Name(), Err: err}
}

// ID returns the identity (volume and file index) of the lock file.
func (f *File) ID() (ID, error) {
	var fi syscall.ByHandleFileInformation
	if err := syscall.GetFileInformationByHandle(syscall.Handle(f.f.Fd()), &fi); err != nil {
		return ID{}, &os.PathError{Op: "GetFileInformationByHandle", Path: f.f.Name(), Err: err}
	}
	return ID{uint64(fi.VolumeSerialNumber), uint64(fi.FileIndexHigh)<<32 | uint64(fi.FileIndexLow)}, nil
}

// closeFD releases the lock, then the handle. Closing the handle alone
// would release it too, but Windows documents that release as happening at
// some later time, which a waiting process would sit through.
func (f *File) closeFD() {
	if f.f == nil {
		return
	}
	if f.byte0 {
		unlockFileEx(f.f.Fd())
		f.byte0 = false
	}
	f.f.Close()
	f.f = nil
}

// lockFileEx locks the file's first byte. The pointer conversion stays in
// the Call expression, where the syscall package keeps ol alive.
func lockFileEx(handle uintptr, flags uint32) error {
	ol := new(syscall.Overlapped)
	r, _, err := procLockFileEx.Call(handle, uintptr(flags), 0, 1, 0, uintptr(unsafe.Pointer(ol)))
	return callErr(r, err)
}

// unlockFileEx unlocks the file's first byte.
func unlockFileEx(handle uintptr) error {
	ol := new(syscall.Overlapped)
	r, _, err := procUnlockFileEx.Call(handle, 0, 1, 0, uintptr(unsafe.Pointer(ol)))
	return callErr(r, err)
}

// callErr is the error of a call returning a Windows BOOL: nil when r is
// nonzero, else the last error.
func callErr(r uintptr, err error) error {
	if r != 0 {
		return nil
	}
	if errno, ok := err.(syscall.Errno); ok && errno != 0 {
		return errno
	}
	return syscall.EINVAL
}
