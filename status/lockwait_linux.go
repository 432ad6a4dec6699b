package status

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// A lockWaiter lets a waiting process know at once when the lock may have
// become free, and lets the other waiters see that it waits.
//
// Wake-up: an inotify watch on the lock file reports every close of a
// descriptor of it. Holders release the lock by closing their descriptor
// (protocol step 5), so a close is the moment to retry; the poll stays as a
// fallback (a holder may also unlock without closing), with a longer
// backoff. Without the watch a waiter notices a release only at its next
// poll, by which time the process that released has usually taken the
// lock again.
//
// Presence: while it waits, a process holds an open file description
// (OFD) read lock on byte waitByte of the lock file. OFD byte-range locks
// and flock do not interact on Linux, so the protocol's flock is untouched;
// a process that just released the flock tests for such a lock
// (othersWaiting) to decide whether to yield its turn.
//
// Both are hints: if inotify or OFD locks are unavailable the waiter polls
// as before, and no outcome depends on them.
type lockWaiter struct {
	h      *lockHandle
	events *os.File // the inotify instance; nil when unavailable
	marked bool
	buf    [512]byte
}

// waitByte is the byte of the lock file that waiters read-lock. Byte 0 is
// left alone (Windows' protocol locks it; one system never sees the other's
// locks, but keep them apart anyway).
const waitByte = 1

// Open file description lock commands (Linux 3.15; the syscall package
// lacks the names).
const (
	fOFDGetlk = 36
	fOFDSetlk = 37
)

const (
	// maxWatchedBackoff bounds the fallback poll when closes wake us.
	maxWatchedBackoff = 25 * time.Millisecond
	// yieldTurn bounds how long a process that just released the lock
	// lets a waiting process take it before competing again.
	yieldTurn = 20 * time.Millisecond
)

func newLockWaiter(h *lockHandle) *lockWaiter {
	w := &lockWaiter{h: h}
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
	w.marked = w.ofdLock(fOFDSetlk, syscall.F_RDLCK) == nil
	return w
}

// othersWaiting reports whether another open file description holds a
// waiter's mark on the lock file.
func (w *lockWaiter) othersWaiting() bool {
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: waitByte, Len: 1}
	if err := fcntlLock(w.h.fd, fOFDGetlk, &lk); err != nil {
		return false
	}
	return lk.Type != syscall.F_UNLCK
}

func (w *lockWaiter) ofdLock(cmd int, typ int16) error {
	lk := syscall.Flock_t{Type: typ, Whence: 0, Start: waitByte, Len: 1}
	return fcntlLock(w.h.fd, cmd, &lk)
}

func fcntlLock(fd, cmd int, lk *syscall.Flock_t) error {
	for {
		err := syscall.FcntlFlock(uintptr(fd), cmd, lk)
		if err != syscall.EINTR {
			return err
		}
	}
}

// turn is how long a yielding process waits for a close before it
// competes: one turn of another process, or yieldTurn at most.
func (w *lockWaiter) turn() time.Duration { return yieldTurn }

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
	// A cancelled ctx (no deadline) interrupts the read through its
	// deadline; stop waits for that function if it already started, so it
	// never outlives this call.
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
		// The watch is broken (the lock file was removed, say): poll.
		w.events.Close()
		w.events = nil
	}
	return nil
}

// close drops the waiter's mark and the watch.
func (w *lockWaiter) close() {
	if w.marked {
		w.ofdLock(fOFDSetlk, syscall.F_UNLCK)
	}
	if w.events != nil {
		w.events.Close()
	}
}
