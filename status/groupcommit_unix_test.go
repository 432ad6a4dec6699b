//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package status

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/internal/deepdiff"
)

// holdLock takes the document's lock the way a foreign process would: a
// fresh open of <path>.lock and a blocking flock(LOCK_EX). It returns the
// release function (also registered as cleanup).
func holdLock(t *testing.T, path string) (release func()) {
	t.Helper()
	fd, err := syscall.Open(path+LockSuffix, syscall.O_RDWR|syscall.O_CREAT|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(fd, syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() { once.Do(func() { syscall.Close(fd) }) }
	t.Cleanup(release)
	return release
}

// waitQueue waits until n requests are queued on path (an observable
// condition, polled; the test's own deadline bounds it).
func waitQueue(t *testing.T, path string, n int) {
	t.Helper()
	for queueLen(t, path) < n {
		time.Sleep(50 * time.Microsecond)
	}
}

type counterDoc struct {
	Count int      `json:"count"`
	Seen  []string `json:"seen,omitempty"`
}

// countWrites replaces writeFile for the test and counts its calls; fail,
// if non-nil, is returned instead of writing.
func countWrites(t *testing.T, fail error) *int {
	t.Helper()
	n := new(int)
	var mu sync.Mutex
	orig := writeFile
	setWriteFile(t, func(path string, data []byte, perm os.FileMode) error {
		mu.Lock()
		*n++
		mu.Unlock()
		if fail != nil {
			return fail
		}
		return orig(path, data, perm)
	})
	return n
}

func readCounter(t *testing.T, path string) counterDoc {
	t.Helper()
	d, err := NewStore[counterDoc](path).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestMutateDeadlineWhileLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	holdLock(t, path)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := NewStore[counterDoc](path).Mutate(ctx, func(d *counterDoc) error {
		t.Errorf("fn ran while another holder had the lock")
		return nil
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want one wrapping context.DeadlineExceeded", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("document was created: %v", err)
	}
}

func TestMutateCancelWhileWaitingForLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	release := holdLock(t, path)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error)
	go func() {
		_, err := NewStore[counterDoc](path).Mutate(ctx, func(d *counterDoc) error { d.Count++; return nil })
		errc <- err
	}()
	waitQueue(t, path, 1)
	cancel()
	// The lock is still held: the caller must return on its own.
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want one wrapping context.Canceled", err)
	}
	release()
	if got := readCounter(t, path); got.Count != 0 {
		t.Errorf("count = %d, want 0 (cancelled call must change nothing)", got.Count)
	}
}

// A queued (non-leader) caller whose context ends leaves the queue without
// disturbing the leader.
func TestQueuedCallerCancel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	release := holdLock(t, path)
	inc := func(d *counterDoc) error { d.Count++; return nil }

	leader := make(chan error)
	go func() { _, err := NewStore[counterDoc](path).Mutate(context.Background(), inc); leader <- err }()
	waitQueue(t, path, 1)

	ctx, cancel := context.WithCancel(context.Background())
	follower := make(chan error)
	go func() { _, err := NewStore[counterDoc](path).Mutate(ctx, inc); follower <- err }()
	waitQueue(t, path, 2)
	cancel()
	if err := <-follower; !errors.Is(err, context.Canceled) {
		t.Fatalf("follower err = %v, want context.Canceled", err)
	}
	release()
	if err := <-leader; err != nil {
		t.Fatalf("leader: %v", err)
	}
	if got := readCounter(t, path); got.Count != 1 {
		t.Errorf("count = %d, want 1 (only the leader's increment)", got.Count)
	}
}

// A leader whose context ends while it waits for the flock hands the lead
// to the next caller, which must neither fail nor hang.
func TestLeaderCancelPassesLeadership(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	release := holdLock(t, path)
	inc := func(d *counterDoc) error { d.Count++; return nil }

	ctx, cancel := context.WithCancel(context.Background())
	leader := make(chan error)
	go func() { _, err := NewStore[counterDoc](path).Mutate(ctx, inc); leader <- err }()
	waitQueue(t, path, 1)
	follower := make(chan error)
	go func() { _, err := NewStore[counterDoc](path).Mutate(context.Background(), inc); follower <- err }()
	waitQueue(t, path, 2)

	cancel()
	if err := <-leader; !errors.Is(err, context.Canceled) {
		t.Fatalf("leader err = %v, want context.Canceled", err)
	}
	release()
	if err := <-follower; err != nil {
		t.Fatalf("follower failed after the leader gave up: %v", err)
	}
	if got := readCounter(t, path); got.Count != 1 {
		t.Errorf("count = %d, want 1", got.Count)
	}
}

// startQueued starts n Mutate calls one after another so that they queue
// in order behind the held lock; fn(i) is the i-th call's function.
func startQueued(t *testing.T, path string, n int, fn func(i int) func(*counterDoc) error) []chan outcome {
	t.Helper()
	res := make([]chan outcome, n)
	for i := range n {
		res[i] = make(chan outcome, 1)
		go func() {
			var o outcome
			defer func() {
				o.panicVal = recover()
				res[i] <- o
			}()
			o.doc, o.err = NewStore[counterDoc](path).Mutate(context.Background(), fn(i))
		}()
		waitQueue(t, path, i+1)
	}
	return res
}

type outcome struct {
	doc      counterDoc
	err      error
	panicVal any
}

// TestGroupCommitBatch queues calls behind a held lock so that one leader
// runs them all in one batch, and checks the batch's semantics: one write,
// each fn sees its predecessors, a failing or panicking fn drops only its
// own change, and the panic surfaces in its own goroutine.
func TestGroupCommitBatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	writes := countWrites(t, nil)
	release := holdLock(t, path)
	errFail := errors.New("fn refuses")
	const n = 8
	res := startQueued(t, path, n, func(i int) func(*counterDoc) error {
		return func(d *counterDoc) error {
			d.Count++
			d.Seen = append(d.Seen, fmt.Sprint(i))
			switch i {
			case 3:
				return fmt.Errorf("call %d: %w", i, errFail)
			case 5:
				panic(fmt.Sprint("panic in call ", i))
			}
			return nil
		}
	})
	release()

	var want counterDoc
	for i := range n {
		o := <-res[i]
		switch i {
		case 3:
			if !errors.Is(o.err, errFail) || o.panicVal != nil {
				t.Errorf("call 3: err %v panic %v, want its own error", o.err, o.panicVal)
			}
			continue
		case 5:
			if o.panicVal != "panic in call 5" {
				t.Errorf("call 5: recovered %v, want its own panic value", o.panicVal)
			}
			continue
		}
		want.Count++
		want.Seen = append(want.Seen, fmt.Sprint(i))
		if o.err != nil || o.panicVal != nil {
			t.Fatalf("call %d: err %v panic %v", i, o.err, o.panicVal)
		}
		if diff := deepdiff.Diff(want, o.doc); diff != "" {
			t.Errorf("call %d returned (-want +got):\n%s", i, diff)
		}
	}
	if diff := deepdiff.Diff(want, readCounter(t, path)); diff != "" {
		t.Errorf("stored document (-want +got):\n%s", diff)
	}
	if *writes != 1 {
		t.Errorf("%d writes for one batch, want 1", *writes)
	}
}

// A failed durable write is reported to every caller whose change it
// carried, with errors.Is working on the fs sentinel.
func TestGroupCommitWriteError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	countWrites(t, fmt.Errorf("injected: %w", fs.ErrDurabilityUnknown))
	release := holdLock(t, path)
	errFail := errors.New("fn refuses")
	res := startQueued(t, path, 3, func(i int) func(*counterDoc) error {
		return func(d *counterDoc) error {
			d.Count++
			if i == 1 {
				return errFail
			}
			return nil
		}
	})
	release()
	for i := range 3 {
		o := <-res[i]
		want := fs.ErrDurabilityUnknown
		if i == 1 {
			want = errFail
		}
		if !errors.Is(o.err, want) {
			t.Errorf("call %d: err = %v, want %v", i, o.err, want)
		}
	}
}

func TestGroupCommitCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	const bad = `{"count": 1,`
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	writes := countWrites(t, nil)
	release := holdLock(t, path)
	res := startQueued(t, path, 3, func(int) func(*counterDoc) error {
		return func(d *counterDoc) error { d.Count++; return nil }
	})
	release()
	for i := range 3 {
		var ce *CorruptError
		if o := <-res[i]; !errors.As(o.err, &ce) || ce.Path != path {
			t.Errorf("call %d: err = %v, want *CorruptError for %s", i, o.err, path)
		}
	}
	if *writes != 0 {
		t.Errorf("%d writes over a corrupt document", *writes)
	}
	if b, _ := os.ReadFile(path); string(b) != bad {
		t.Errorf("corrupt document changed to %q", b)
	}
}

// A batch larger than maxBatch is split; nothing is lost.
func TestGroupCommitBatchCap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	writes := countWrites(t, nil)
	release := holdLock(t, path)
	const n = maxBatch + 3
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if _, err := NewStore[counterDoc](path).Mutate(context.Background(), func(d *counterDoc) error {
				d.Count++
				return nil
			}); err != nil {
				t.Errorf("Mutate: %v", err)
			}
		})
	}
	waitQueue(t, path, n)
	release()
	wg.Wait()
	if got := readCounter(t, path); got.Count != n {
		t.Errorf("count = %d, want %d", got.Count, n)
	}
	if *writes != 2 {
		t.Errorf("%d writes, want 2 (one full batch of %d, then the rest)", *writes, maxBatch)
	}
}

// A fn that calls runtime.Goexit (t.FailNow inside fn, say) kills the
// leader's goroutine; the lock and the registry entry must still be released.
func TestFnGoexitReleasesLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	done := make(chan struct{})
	go func() {
		defer close(done)
		NewStore[counterDoc](path).Mutate(context.Background(), func(d *counterDoc) error {
			d.Count = 100
			runtime.Goexit()
			return nil
		})
	}()
	<-done
	got, err := NewStore[counterDoc](path).Mutate(context.Background(), func(d *counterDoc) error { d.Count++; return nil })
	if err != nil || got.Count != 1 {
		t.Fatalf("Mutate after Goexit = %+v, %v; want count 1", got, err)
	}
	if n := registrySize(t); n != 0 {
		t.Errorf("registry holds %d entries after all calls returned", n)
	}
}

// In a batch, a fn that calls runtime.Goexit ends only its own caller's
// goroutine: the others (the leader included, who runs the batch) return
// normally, their changes committed, and the exiting caller's change is
// dropped.
func TestFollowerGoexitEndsOnlyItsCaller(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	release := holdLock(t, path)
	mutate := func(fn func(*counterDoc) error) (ret <-chan error, exited <-chan struct{}) {
		r, x := make(chan error, 1), make(chan struct{})
		go func() {
			defer close(x)
			_, err := NewStore[counterDoc](path).Mutate(context.Background(), fn)
			r <- err
		}()
		return r, x
	}
	leaderRet, leaderExited := mutate(func(d *counterDoc) error { d.Count++; return nil })
	waitQueue(t, path, 1)
	exiterRet, exiterExited := mutate(func(d *counterDoc) error { d.Count += 100; runtime.Goexit(); return nil })
	waitQueue(t, path, 2)
	lastRet, lastExited := mutate(func(d *counterDoc) error { d.Count += 10; return nil })
	waitQueue(t, path, 3)
	release()
	for name, c := range map[string]struct {
		ret    <-chan error
		exited <-chan struct{}
	}{"leader": {leaderRet, leaderExited}, "last": {lastRet, lastExited}} {
		<-c.exited
		select {
		case err := <-c.ret:
			if err != nil {
				t.Errorf("%s: Mutate = %v, want nil", name, err)
			}
		default:
			t.Errorf("%s: goroutine ended without Mutate returning (another caller's Goexit ended it)", name)
		}
	}
	<-exiterExited
	if len(exiterRet) != 0 {
		t.Errorf("the caller whose fn called Goexit returned from Mutate: %v", <-exiterRet)
	}
	if got := readCounter(t, path); got.Count != 11 {
		t.Errorf("count = %d, want 11 (leader's +1 and last's +10, not the exiting +100)", got.Count)
	}
}

func TestRegistryEntriesReleased(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	paths := make([]string, 5)
	for i := range paths {
		paths[i] = filepath.Join(dir, fmt.Sprint("doc", i, ".json"))
	}
	for g := range 10 {
		wg.Go(func() {
			for _, p := range paths {
				NewStore[counterDoc](p).Mutate(context.Background(), func(d *counterDoc) error {
					d.Seen = append(d.Seen, fmt.Sprint(g))
					return nil
				})
			}
		})
	}
	wg.Wait()
	if n := registrySize(t); n != 0 {
		t.Errorf("registry holds %d entries after all calls returned, want 0", n)
	}
	for _, p := range paths {
		var d counterDoc
		b, _ := os.ReadFile(p)
		if err := json.Unmarshal(b, &d); err != nil || len(d.Seen) != 10 {
			t.Errorf("%s: %d appends recorded (err %v), want 10", p, len(d.Seen), err)
		}
		if _, err := os.Stat(p + LockSuffix); err != nil {
			t.Errorf("lock file: %v (it must persist)", err)
		}
	}
}

// Spellings of one path share one entry (keyed by the absolute path the
// kernel resolves, see docPath), so they batch together instead of racing.
func TestRegistryKeyIsCleanAbsolutePath(t *testing.T) {
	dir := t.TempDir()
	clean := filepath.Join(dir, "status.json")
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	unclean := dir + "/sub/../status.json"
	release := holdLock(t, clean)
	done := make(chan error)
	go func() {
		_, err := NewStore[counterDoc](unclean).Mutate(context.Background(), func(d *counterDoc) error { d.Count++; return nil })
		done <- err
	}()
	waitQueue(t, clean, 1)
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// The next leader waits (gather) for the owners the last batch woke, and
// only for those that are alive: a batch with a follower whose fn called
// runtime.Goexit, and one whose ctx ended while the batch was being
// written, must still let the next leader, queued meanwhile, write.
// Counting the exited owner would make that leader wait until its ctx ends.
func TestGatherWaitsOnlyForLiveOwners(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	release := holdLock(t, path)
	writing, proceed := make(chan struct{}), make(chan struct{})
	var first sync.Once
	setWriteFile(t, func(p string, data []byte, perm os.FileMode) error {
		first.Do(func() { close(writing); <-proceed })
		return writeFile(p, data, perm)
	})

	type call struct {
		ret    chan error
		exited chan struct{}
	}
	mutate := func(ctx context.Context, fn func(*counterDoc) error) call {
		c := call{make(chan error, 1), make(chan struct{})}
		go func() {
			defer close(c.exited)
			_, err := NewStore[counterDoc](path).Mutate(ctx, fn)
			c.ret <- err
		}()
		return c
	}
	cancelCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	leader := mutate(context.Background(), func(d *counterDoc) error { d.Count++; return nil })
	waitQueue(t, path, 1)
	exiter := mutate(context.Background(), func(d *counterDoc) error { runtime.Goexit(); return nil })
	waitQueue(t, path, 2)
	cancelled := mutate(cancelCtx, func(d *counterDoc) error { d.Count += 10; return nil })
	waitQueue(t, path, 3)
	follower := mutate(context.Background(), func(d *counterDoc) error { d.Count += 100; return nil })
	waitQueue(t, path, 4)
	release()
	<-writing // the batch of four is taken and applied
	cancel()
	// A hang guard, not a timing bound: it turns the failure into an error.
	nextCtx, stop := context.WithTimeout(context.Background(), time.Minute)
	defer stop()
	next := mutate(nextCtx, func(d *counterDoc) error { d.Count += 1000; return nil })
	waitQueue(t, path, 1)
	close(proceed)

	for name, c := range map[string]call{"leader": leader, "cancelled": cancelled, "follower": follower, "next leader": next} {
		<-c.exited
		if err := <-c.ret; err != nil {
			t.Errorf("%s: Mutate = %v, want nil", name, err)
		}
	}
	<-exiter.exited
	if got := readCounter(t, path); got.Count != 1111 {
		t.Errorf("count = %d, want 1111", got.Count)
	}
}

// Load is a scheduling point: a goroutine that reads in a loop lets the
// other runnable goroutines of its processor run at every read (a writer
// back from its fsync among them). With one processor, a goroutine started
// just before Load has run when Load returns. Not always: one scheduling
// round in 61 takes the yielding goroutine itself from the global run
// queue first, so the test asks for most of 100 reads; without the yield
// almost none let it run.
func TestLoadYields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	if _, err := Mutate(context.Background(), path, func(s *Status) error { s.Runs = 1; return nil }); err != nil {
		t.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const reads = 100
	yielded := 0
	for range reads {
		ran, done := make(chan struct{}), make(chan struct{})
		go func() { close(ran); close(done) }() // runnable, on this processor
		if _, err := Load(context.Background(), path); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ran:
			yielded++
		default:
		}
		<-done
	}
	if yielded < reads/2 {
		t.Errorf("a goroutine runnable on the only processor ran during %d of %d reads, want most", yielded, reads)
	}
}
