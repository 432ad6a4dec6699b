package syncshare

import (
	"errors"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
)

// setSyncFS makes shared syncs call sync instead of syncfs(2) until tb
// ends, skipping tb in a build without the test switches. sync may call
// through to the real one.
func setSyncFS(tb testing.TB, sync func(fd int, syncfs func(int) error) error) {
	tb.Helper()
	s := TestSeams()
	if s == nil {
		tb.Skip("needs the test switches: go test -tags crashhooks")
	}
	s.SyncFS = sync
	tb.Cleanup(func() { s.SyncFS = nil })
}

// syncLog records, on one logical clock, when each member of a shared sync
// finished writing, when each sync started and ended, and when each member
// got its answer.
type syncLog struct {
	clock atomic.Int64
	mu    sync.Mutex
	syncs [][2]int64 // start, end of every syncfs
}

func (l *syncLog) tick() int64 { return l.clock.Add(1) }

// fakeSyncfs stands in for syncfs: it takes a while (yields) and logs its
// span.
func (l *syncLog) fakeSyncfs(int) error {
	start := l.tick()
	for range 20 {
		runtime.Gosched()
	}
	end := l.tick()
	l.mu.Lock()
	l.syncs = append(l.syncs, [2]int64{start, end})
	l.mu.Unlock()
	return nil
}

// covered reports whether a sync started after wrote and ended before
// returned.
func (l *syncLog) covered(wrote, returned int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.syncs {
		if s[0] > wrote && s[1] < returned {
			return true
		}
	}
	return false
}

// syncFunc is Share.Sync's signature, so the harness can run a broken
// implementation as the control.
type syncFunc func(fd int, seq uint64, own func() error) error

// runShareHarness has writers goroutines each "write" and then sync, many
// times, and counts the calls that returned without a sync that started
// after their write and ended before their return (own syncs count: they
// start after the write by construction).
func runShareHarness(t *testing.T, l *syncLog, syncOf func(*Share) syncFunc) (uncovered, shared int) {
	t.Helper()
	const writers, rounds = 8, 200
	key := fsKey{}
	key.X__val[0] = int32(os.Getpid()) // a key no real file system in this test uses
	key.X__val[1] = -1
	var wg sync.WaitGroup
	var bad, calls atomic.Int64
	for range writers {
		s := join(key)
		wg.Go(func() {
			defer s.Leave()
			for range rounds {
				wrote := l.tick()
				ownSpan := [2]int64{-1, -1}
				err := syncOf(s)(3, openSeq.Add(1), func() error {
					ownSpan[0] = l.tick()
					ownSpan[1] = l.tick()
					return nil
				})
				returned := l.tick()
				if err != nil {
					t.Error(err)
					return
				}
				if ownSpan[0] > wrote && ownSpan[1] < returned {
					continue
				}
				calls.Add(1)
				if !l.covered(wrote, returned) {
					bad.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return int(bad.Load()), int(calls.Load())
}

// TestSharedSyncCoversEveryWrite: with replaces sharing syncfs rounds, no
// call returns before a sync that started after its write has ended.
func TestSharedSyncCoversEveryWrite(t *testing.T) {
	l := &syncLog{}
	setSyncFS(t, func(fd int, _ func(int) error) error { return l.fakeSyncfs(fd) })
	uncovered, shared := runShareHarness(t, l, func(s *Share) syncFunc { return s.Sync })
	if uncovered != 0 {
		t.Errorf("%d of %d shared syncs returned without a sync that started after their write", uncovered, shared)
	}
	if shared == 0 {
		t.Fatal("no call shared a round: the harness did not exercise rounds")
	}
	t.Logf("%d calls shared %d rounds", shared, len(l.syncs))
}

// TestSharedSyncControlJoinRunning is the control: a share that lets a
// caller ride on the round already running (which may have started before
// the caller's write) must be caught by the same harness.
func TestSharedSyncControlJoinRunning(t *testing.T) {
	l := &syncLog{}
	var mu sync.Mutex
	var running chan struct{}
	naive := func(*Share) syncFunc {
		return func(fd int, _ uint64, _ func() error) error {
			mu.Lock()
			if c := running; c != nil {
				mu.Unlock()
				<-c // the bug: this round may have started before our write
				return nil
			}
			c := make(chan struct{})
			running = c
			mu.Unlock()
			l.fakeSyncfs(fd)
			mu.Lock()
			running = nil
			mu.Unlock()
			close(c)
			return nil
		}
	}
	uncovered, shared := runShareHarness(t, l, naive)
	t.Logf("CONTROL: %d of %d shared syncs uncovered", uncovered, shared)
	if uncovered == 0 {
		t.Fatal("CONTROL: riding on a running sync was not detected: the harness cannot see an early return")
	}
}

// TestSharedSyncError: a failed round fails every member, and the next
// round is led normally.
func TestSharedSyncError(t *testing.T) {
	errBoom := errors.New("injected syncfs failure")
	var fail atomic.Bool
	fail.Store(true)
	setSyncFS(t, func(int, func(int) error) error {
		if fail.Load() {
			return errBoom
		}
		return nil
	})
	key := fsKey{}
	key.X__val[0] = int32(os.Getpid())
	key.X__val[1] = -2
	a, b := join(key), join(key) // two writers: no one is alone
	defer a.Leave()
	defer b.Leave()
	if err := a.Sync(3, openSeq.Add(1), nil); !errors.Is(err, errBoom) {
		t.Fatalf("sync = %v, want the round's error", err)
	}
	fail.Store(false)
	if err := b.Sync(3, openSeq.Add(1), nil); err != nil {
		t.Fatalf("next round: %v", err)
	}
}

// TestKernelAtLeast checks the kernel release parser that gates syncfs.
func TestKernelAtLeast(t *testing.T) {
	for _, c := range []struct {
		rel  string
		want bool
	}{
		{"5.8.0", true}, {"5.7.19", false}, {"6.18.44-fc-v769", true}, {"4.19.0-25-amd64", false},
		{"5.10", true}, {"10.0", true}, {"5", false}, {"", false}, {"x.y", false},
	} {
		if got := kernelAtLeast(c.rel, 5, 8); got != c.want {
			t.Errorf("kernelAtLeast(%q) = %v, want %v", c.rel, got, c.want)
		}
	}
}

// The syscall package's Fsid field name, checked at compile time.
var _ = syscall.Fsid{}.X__val
