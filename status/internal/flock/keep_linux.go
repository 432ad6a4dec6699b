package flock

import "syscall"

// fOFDGetlk is F_OFD_GETLK (Linux 3.15), which the syscall package lacks.
const fOFDGetlk = 36

// othersHoldRangeLocks reports whether a byte-range lock of another open
// file description is held on fd's file: then its close would walk them
// all. A write lock over the whole file conflicts with any such lock, so
// the kernel stops at the first one it finds.
func othersHoldRangeLocks(fd int) bool {
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: 0, Len: 0}
	return syscall.FcntlFlock(uintptr(fd), fOFDGetlk, &lk) == nil && lk.Type != syscall.F_UNLCK
}
