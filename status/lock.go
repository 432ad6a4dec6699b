package status

import (
	"context"
	"math/rand/v2"
	"os"
	"time"
)

// Backoff bounds for polling the non-blocking flock: a blocking flock
// cannot be cancelled, so waiting is a poll that watches ctx. Where the
// system tells a waiter when the lock file is closed (see lockWaiter), the
// poll is only a fallback and backs off further.
const (
	minBackoff = 50 * time.Microsecond
	maxBackoff = 5 * time.Millisecond
)

// lockFile takes the exclusive lock on the lock file name (creating it if
// needed, see openLock for its mode; perm is the mode a new document will
// get) through a fresh open file description, waiting until it is free or
// ctx ends. The returned function releases the lock by closing the
// descriptor.
//
// Where the system allows it, waiters queue first come, first served and
// wake when the lock file is closed (see lockWaiter); a caller that finds
// others waiting takes its place behind them rather than racing them.
func lockFile(ctx context.Context, name string, perm os.FileMode) (unlock func(), err error) {
	h, err := openLock(name, perm)
	if err != nil {
		return nil, err
	}
	if err := h.lock(ctx); err != nil {
		return nil, err
	}
	return h.close, nil
}

// lock waits for the lock of h's file (see lockFile). On failure h is
// closed.
func (h *lockHandle) lock(ctx context.Context) error {
	if !waitersAhead(h, 0) {
		ok, err := h.tryLock()
		if err != nil || ok {
			return lockResult(h, err)
		}
	}
	// Queue and watch before the next attempt, so that a release between
	// that attempt and the wait still wakes us.
	w := newLockWaiter(h)
	backoff := minBackoff
	for {
		if w.mayTry() {
			ok, err := h.tryLock()
			if err != nil || ok {
				w.close() // before h: the mark is on h's descriptor
				return lockResult(h, err)
			}
			w = w.follow()
		}
		// Full jitter: processes polling the same lock spread out.
		d := backoff/2 + rand.N(backoff/2+1)
		backoff = min(2*backoff, w.maxBackoff())
		if err := w.wait(ctx, d); err != nil {
			w.close()
			h.close()
			return err
		}
	}
}

func lockResult(h *lockHandle, err error) error {
	if err != nil {
		h.close()
	}
	return err
}

// A fileID identifies a lock file: device and inode (on Windows, volume
// and file index).
type fileID struct{ dev, ino uint64 }

func (a fileID) less(b fileID) bool {
	return a.dev < b.dev || a.dev == b.dev && a.ino < b.ino
}

// sleepCtx waits for d, or returns ctx's error when ctx ends first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
