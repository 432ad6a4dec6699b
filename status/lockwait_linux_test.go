package status

import (
	"context"
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// queueOrder runs the FIFO harness once: a foreign holder has the flock,
// waiter A queues, then waiter B; the holder releases; it returns which
// waiter got the lock first. lock is how A and B wait.
func queueOrder(t *testing.T, lock func(ctx context.Context, name string) (func(), error)) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "status.json")
	release := holdLock(t, path)
	probe, err := openLock(path+LockSuffix, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer probe.close()
	got := make(chan string, 2)
	start := func(name string) {
		go func() {
			unlock, err := lock(t.Context(), path+LockSuffix)
			if err != nil {
				t.Error(err)
				got <- ""
				return
			}
			got <- name
			unlock()
		}()
	}
	start("A")
	waitMarks(t, probe, 1)
	start("B")
	waitMarks(t, probe, 2)
	release()
	first := <-got
	<-got
	return first
}

// marks counts the waiters' marks on the lock file (up to 3).
func marks(h *lockHandle) int {
	n := 0
	var from int64 = queueBase
	for n < 3 {
		lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: from}
		if err := fcntlLock(h.fd, fOFDGetlk, &lk); err != nil || lk.Type == syscall.F_UNLCK {
			return n
		}
		n++
		from = lk.Start + 1
	}
	return n
}

// waitMarks waits until n waiters have queued (an observable condition,
// polled; the test's deadline bounds it).
func waitMarks(t *testing.T, probe *lockHandle, n int) {
	t.Helper()
	for marks(probe) < n {
		if t.Context().Err() != nil {
			t.Fatal("waiters never queued")
		}
		sleepCtx(t.Context(), 50*time.Microsecond)
	}
}

// TestLockQueueFirstComeFirstServed: the waiter that queued first gets the
// lock first, every time.
func TestLockQueueFirstComeFirstServed(t *testing.T) {
	for range 10 {
		if first := queueOrder(t, func(ctx context.Context, name string) (func(), error) { return lockFile(ctx, name, 0o644) }); first != "A" {
			t.Fatalf("waiter %s got the lock first; A queued before B", first)
		}
	}
}

// TestLockQueueControlNoQueue is the control: waiters that mark themselves
// but ignore the queue (each tries the flock whenever it wakes) must be
// seen out of order by the same harness within a few rounds.
func TestLockQueueControlNoQueue(t *testing.T) {
	barging := func(ctx context.Context, name string) (func(), error) {
		h, err := openLock(name, 0o644)
		if err != nil {
			return nil, err
		}
		w := newLockWaiter(h) // marks, so the harness sees it queue
		defer w.close()
		for {
			ok, err := h.tryLock()
			if err != nil {
				h.close()
				return nil, err
			}
			if ok {
				return h.close, nil
			}
			if err := w.wait(ctx, minBackoff); err != nil {
				h.close()
				return nil, err
			}
		}
	}
	for round := range 200 {
		if queueOrder(t, barging) == "B" {
			t.Logf("CONTROL: out of order in round %d", round+1)
			return
		}
	}
	t.Fatal("CONTROL: 200 rounds of waiters that ignore the queue never got out of order: the harness cannot see it")
}

// TestLockWaitCancelDropsMark: a waiter whose ctx ends returns ctx's
// error while the lock is held, and leaves no mark behind.
func TestLockWaitCancelDropsMark(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	holdLock(t, path)
	probe, err := openLock(path+LockSuffix, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer probe.close()
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := lockFile(ctx, path+LockSuffix, 0o644)
		errc <- err
	}()
	waitMarks(t, probe, 1)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("lockFile = %v, want context.Canceled", err)
	}
	if n := marks(probe); n != 0 {
		t.Errorf("%d marks left after the waiter gave up", n)
	}
}
