package status

import (
	"context"
	"math/rand/v2"
	"os"
	"time"
)

// Backoff bounds for polling the non-blocking flock: a blocking flock
// cannot be cancelled, so waiting is a poll that watches ctx.
const (
	minBackoff = 50 * time.Microsecond
	maxBackoff = 5 * time.Millisecond
)

// lockFile takes the exclusive lock on the lock file name (creating it if
// needed, see openLock for its mode; perm is the mode a new document will
// get) through a fresh open file description, polling until it is free or
// ctx ends. The returned function releases the lock by closing the
// descriptor.
func lockFile(ctx context.Context, name string, perm os.FileMode) (unlock func(), err error) {
	h, err := openLock(name, perm)
	if err != nil {
		return nil, err
	}
	var timer *time.Timer
	backoff := minBackoff
	for {
		ok, err := h.tryLock()
		if err != nil {
			h.close()
			return nil, err
		}
		if ok {
			return h.close, nil
		}
		// Full jitter: processes polling the same lock spread out.
		d := backoff/2 + rand.N(backoff/2+1)
		backoff = min(2*backoff, maxBackoff)
		if timer == nil {
			timer = time.NewTimer(d)
		} else {
			timer.Reset(d)
		}
		select {
		case <-ctx.Done():
			timer.Stop()
			h.close()
			return nil, ctx.Err()
		case <-timer.C:
		}
	}
}
