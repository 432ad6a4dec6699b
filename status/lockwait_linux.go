package status

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// Waiting for the flock on Linux: first come, first served across the
// processes that use this package, and woken at once on release.
//
// Queue: a waiting process holds an open file description (OFD) read lock
// on one byte of the lock file, at offset queueBase plus the time it
// started to wait (CLOCK_MONOTONIC, one clock for every process of the
// machine). OFD byte-range locks and flock do not interact on Linux, so the
// protocol's flock is untouched, and the kernel drops the mark when its
// holder closes the descriptor or dies. Only the oldest waiter tries the
// flock; a newcomer that sees a mark queues behind it. Without the queue
// the process that just released the lock, whose next caller is already
// running, takes it again before a waiter elsewhere has even woken up.
//
// Wake-up: an inotify watch on the lock file reports every close of a
// descriptor of it. Holders release the lock by closing their descriptor
// (protocol step 5), so a close is the moment to look again; the poll stays
// as a fallback (a holder may also unlock without closing), with a longer
// backoff.
//
// Both are hints for ordering and speed: programs in other languages
// ignore the marks and take the flock when they can, and where inotify or
// OFD locks are unavailable a waiter polls as before. Mutual exclusion and
// every outcome still come from the flock alone.
type lockWaiter struct {
	h      *lockHandle
	fd     int      // h.fd when the mark and the watch were set up
	events *os.File // the inotify instance; nil when unavailable
	mark   int64    // offset of this waiter's mark; 0 when it has none
	buf    [512]byte
}

// queueBase is the offset of the first queue byte. Bytes below it are left
// alone (Windows' protocol locks byte 0; one system never sees the other's
// locks, but keep them apart anyway).
const queueBase = 1 << 20

// Open file description lock commands (Linux 3.15; the syscall package
// lacks the names).
const (
	fOFDGetlk = 36
	fOFDSetlk = 37
)

// maxWatchedBackoff bounds the fallback poll when closes wake us.
const maxWatchedBackoff = 25 * time.Millisecond

// waitersAhead reports whether another open file description holds a
// waiter's mark below offset end (0: anywhere).
func waitersAhead(h *lockHandle, end int64) bool {
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: queueBase}
	if end > 0 {
		if end <= queueBase {
			return false
		}
		lk.Len = end - queueBase
	}
	if err := fcntlLock(h.fd, fOFDGetlk, &lk); err != nil {
		return false
	}
	return lk.Type != syscall.F_UNLCK
}

func newLockWaiter(h *lockHandle) *lockWaiter {
	w := &lockWaiter{h: h, fd: h.fd}
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err == nil {
		if _, err = syscall.InotifyAddWatch(fd, h.name, syscall.IN_CLOSE_WRITE|syscall.IN_CLOSE_NOWRITE); err != nil {
			syscall.Close(fd)
		} else {
			// Non-blocking, so the runtime's poller waits for it and
			// read deadlines apply.
			w.events = os.NewFile(uintptr(fd), "inotify:"+h.name)
		}
	}
	if now, ok := monotonicNow(); ok {
		lk := syscall.Flock_t{Type: syscall.F_RDLCK, Whence: 0, Start: queueBase + now, Len: 1}
		if fcntlLock(h.fd, fOFDSetlk, &lk) == nil {
			w.mark = lk.Start
		}
	}
	return w
}

// mayTry reports whether this waiter is at the head of the queue.
func (w *lockWaiter) mayTry() bool {
	return w.mark == 0 || !waitersAhead(w.h, w.mark)
}

func fcntlLock(fd, cmd int, lk *syscall.Flock_t) error {
	for {
		err := syscall.FcntlFlock(uintptr(fd), cmd, lk)
		if err != syscall.EINTR {
			return err
		}
	}
}

// monotonicNow reads CLOCK_MONOTONIC in nanoseconds: unlike the monotonic
// reading of time.Now, it is comparable between processes.
func monotonicNow() (int64, bool) {
	var ts syscall.Timespec
	const clockMonotonic = 1
	_, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0)
	if e != 0 {
		return 0, false
	}
	return ts.Nano(), true
}

func (w *lockWaiter) maxBackoff() time.Duration {
	if w.events == nil {
		return maxBackoff
	}
	return maxWatchedBackoff
}

// wait returns when the lock file was closed by anyone, after d, or with
// ctx's error when ctx ends first.
func (w *lockWaiter) wait(ctx context.Context, d time.Duration) error {
	if w.events == nil {
		return sleepCtx(ctx, d)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	deadline := time.Now().Add(d)
	if cd, ok := ctx.Deadline(); ok && cd.Before(deadline) {
		deadline = cd
	}
	w.events.SetReadDeadline(deadline)
	// A cancelled ctx interrupts the read through its deadline; if that
	// function started, it is waited for, so it never outlives this call.
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		w.events.SetReadDeadline(time.Unix(1, 0))
		close(fired)
	})
	_, err := w.events.Read(w.buf[:])
	if !stop() {
		<-fired
	}
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		// The watch is broken: poll from now on.
		w.events.Close()
		w.events = nil
	}
	return nil
}

// follow moves the mark and the watch to the handle's current descriptor
// when tryLock reopened the lock file (a tool deleted and recreated it): the
// old descriptor's mark went with it, and the watch is on the old inode.
func (w *lockWaiter) follow() *lockWaiter {
	if w.h.fd == w.fd {
		return w
	}
	w.mark = 0 // dropped by the kernel with the old descriptor
	w.close()
	return newLockWaiter(w.h)
}

// close drops the waiter's mark and the watch.
func (w *lockWaiter) close() {
	if w.mark != 0 {
		lk := syscall.Flock_t{Type: syscall.F_UNLCK, Whence: 0, Start: w.mark, Len: 1}
		fcntlLock(w.h.fd, fOFDSetlk, &lk)
	}
	if w.events != nil {
		w.events.Close()
	}
}
