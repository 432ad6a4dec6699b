package flock

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"syscall"
	"time"
	"unsafe"

	"github.com/agentstate/core/internal/ctxtime"
)

// The CONTROL of the liveness tests: the waiting strategy this package
// replaced, kept here (test code only) so that the tests can show, in the
// same harness, the failures the bell and the timeouts prevent.
//
// A waiting process held an open file description (OFD) read lock, a
// "mark", on one byte of the lock file at offset oldQueueBase plus the
// CLOCK_MONOTONIC time it started to wait; only the oldest mark's holder
// tried the flock; and an inotify watch on the lock file woke every waiter
// on every close of any of its descriptors. Everyone obeyed state that
// other processes control.

const (
	oldQueueBase = 1 << 20
	fOFDSetlk    = 37
)

// oldLock waits for f's lock as the replaced queue did. It calls the test
// hooks as Lock does (the rung hook when a close of the lock file woke it).
func oldLock(ctx context.Context, f *File) error {
	if !oldWaitersAhead(f.fd, 0) {
		if ok, err := f.try(); err != nil || ok {
			return f.acquired(err)
		}
	}
	events := oldWatch(f.name)
	if events != nil {
		defer events.Close()
	}
	mark := int64(0)
	if now, ok := monotonicNow(); ok {
		lk := syscall.Flock_t{Type: syscall.F_RDLCK, Start: oldQueueBase + now, Len: 1}
		if fcntlLock(f.fd, fOFDSetlk, &lk) == nil {
			mark = lk.Start
		}
	}
	got := func(err error) error {
		if err == nil && mark != 0 {
			lk := syscall.Flock_t{Type: syscall.F_UNLCK, Start: mark, Len: 1}
			fcntlLock(f.fd, fOFDSetlk, &lk)
		}
		return f.acquired(err)
	}
	backoff := 50 * time.Microsecond
	var buf [512]byte
	for {
		if mark == 0 || !oldWaitersAhead(f.fd, mark) {
			if ok, err := f.try(); err != nil || ok {
				return got(err)
			}
		}
		if s := TestSeams(); s != nil && s.sleep != nil {
			s.sleep()
		}
		d := backoff/2 + rand.N(backoff/2+1)
		backoff = min(2*backoff, 25*time.Millisecond)
		if events == nil {
			if err := ctxtime.Sleep(ctx, d); err != nil {
				f.Close()
				return err
			}
			continue
		}
		deadline := time.Now().Add(d)
		if cd, ok := ctx.Deadline(); ok && cd.Before(deadline) {
			deadline = cd
		}
		events.SetReadDeadline(deadline)
		_, err := events.Read(buf[:])
		if err := ctx.Err(); err != nil {
			f.Close()
			return err
		}
		if s := TestSeams(); err == nil && s != nil && s.rung != nil {
			s.rung()
		}
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			f.Close()
			return err
		}
	}
}

// oldWatch watches every close of name (the replaced queue's wake-up).
func oldWatch(name string) *os.File {
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	if _, err := syscall.InotifyAddWatch(fd, name, syscall.IN_CLOSE_WRITE|syscall.IN_CLOSE_NOWRITE); err != nil {
		syscall.Close(fd)
		return nil
	}
	return os.NewFile(uintptr(fd), "inotify")
}

// oldWaitersAhead reports whether another open file description holds a
// mark below offset end (0: anywhere).
func oldWaitersAhead(fd int, end int64) bool {
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Start: oldQueueBase}
	if end > 0 {
		lk.Len = end - oldQueueBase
	}
	if err := fcntlLock(fd, fOFDGetlk, &lk); err != nil {
		return false
	}
	return lk.Type != syscall.F_UNLCK
}

func fcntlLock(fd, cmd int, lk *syscall.Flock_t) error {
	for {
		err := syscall.FcntlFlock(uintptr(fd), cmd, lk)
		if err != syscall.EINTR {
			return err
		}
	}
}

// monotonicNow reads CLOCK_MONOTONIC, as the replaced queue compared it
// between processes.
func monotonicNow() (int64, bool) {
	var ts syscall.Timespec
	_, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano(), e == 0
}
