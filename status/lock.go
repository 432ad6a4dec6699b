package status

import (
	"context"
	"math/rand/v2"
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
// needed) through a fresh open file description, waiting until it is free
// or ctx ends. The returned function releases the lock by closing the
// descriptor; the lock file itself is never removed.
//
// yield is set when this process released the lock an instant ago and
// wants it again: then, if another process is waiting for it, the caller
// lets that process have it first (one turn; see lockWaiter.othersWaiting).
// Without this a process with a busy queue re-takes the lock before a
// waiter elsewhere has even woken up.
func lockFile(ctx context.Context, name string, yield bool) (unlock func(), err error) {
	h, err := openLock(name)
	if err != nil {
		return nil, err
	}
	if !yield {
		ok, err := h.tryLock()
		if err != nil || ok {
			return lockResult(h, err)
		}
	}
	// Register as a waiter before the next attempt, so that a release
	// between that attempt and the wait still wakes us.
	w := newLockWaiter(h)
	defer w.close()
	if yield && w.othersWaiting() {
		if err := w.wait(ctx, w.turn()); err != nil {
			h.close()
			return nil, err
		}
	}
	backoff := minBackoff
	for {
		ok, err := h.tryLock()
		if err != nil || ok {
			return lockResult(h, err)
		}
		// Full jitter: processes polling the same lock spread out.
		d := backoff/2 + rand.N(backoff/2+1)
		backoff = min(2*backoff, w.maxBackoff())
		if err := w.wait(ctx, d); err != nil {
			h.close()
			return nil, err
		}
	}
}

func lockResult(h *lockHandle, err error) (func(), error) {
	if err != nil {
		h.close()
		return nil, err
	}
	return h.close, nil
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
