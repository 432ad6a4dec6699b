package core

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// checkThenCreate is the unsafe pattern, kept as the control: look the name
// up, and if it is missing create a mutex and store it. Two first callers can
// both miss, and each returns its own mutex.
type checkThenCreate struct {
	m         sync.Map
	afterMiss func()
}

func (t *checkThenCreate) get(name string) *sync.Mutex {
	if mu, ok := t.m.Load(name); ok {
		return mu.(*sync.Mutex)
	}
	mu := new(sync.Mutex)
	if t.afterMiss != nil {
		t.afterMiss()
	}
	t.m.Store(name, mu)
	return mu
}

// firstCallerSplits runs up to rounds rounds. In each, callers goroutines wait
// on a barrier (a channel closed once they are all started), then call get for
// a name nobody used before. It returns the number of rounds in which the
// callers did not all receive the same mutex, stopping at the first such round
// if stopAtFirst is set.
func firstCallerSplits(get func(string) *sync.Mutex, callers, rounds int, stopAtFirst bool) int {
	splits := 0
	for r := range rounds {
		name := fmt.Sprintf("ws-%d", r)
		got := make([]*sync.Mutex, callers)
		start := make(chan struct{})
		var ready, done sync.WaitGroup
		ready.Add(callers)
		done.Add(callers)
		for i := range callers {
			go func() {
				defer done.Done()
				ready.Done()
				<-start
				got[i] = get(name)
			}()
		}
		ready.Wait()
		close(start)
		done.Wait()
		for _, mu := range got[1:] {
			if mu != got[0] {
				splits++
				break
			}
		}
		if splits > 0 && stopAtFirst {
			return splits
		}
	}
	return splits
}

const lockCallers = 8

func lockRounds() int {
	if soak() {
		return 20000
	}
	return 1000
}

// TestLockFirstCallersShareOneMutex is the fix for the double mutex: however
// the first callers for a name interleave, they all get the same mutex. The
// window between the miss and the store is widened by a yield, exactly as in
// the control below.
func TestLockFirstCallersShareOneMutex(t *testing.T) {
	for _, yield := range []bool{false, true} {
		t.Run(fmt.Sprintf("yield=%v", yield), func(t *testing.T) {
			var tab lockTable
			if yield {
				tab.afterMiss = runtime.Gosched
			}
			if n := firstCallerSplits(tab.get, lockCallers, lockRounds(), false); n != 0 {
				t.Fatalf("%d of %d rounds handed out more than one mutex for a fresh name", n, lockRounds())
			}
		})
	}
}

// TestLockControlCheckThenCreateSplits shows that the harness above sees the
// bug: the check-then-create pattern hands two first callers two
// different mutexes.
func TestLockControlCheckThenCreateSplits(t *testing.T) {
	tab := &checkThenCreate{afterMiss: runtime.Gosched}
	if n := firstCallerSplits(tab.get, lockCallers, lockRounds(), true); n == 0 {
		t.Fatalf("control: check-then-create never handed out two mutexes in %d rounds; the harness cannot see the bug", lockRounds())
	}
}

func TestLockSameNameSameMutex(t *testing.T) {
	var tab lockTable
	a, b, other := tab.get("a"), tab.get("a"), tab.get("b")
	if a != b {
		t.Error("two calls for the same name returned different mutexes")
	}
	if a == other {
		t.Error("different names share a mutex")
	}
	if tab.get("") == nil {
		t.Error("empty name: nil mutex")
	}
}

// TestLockExcludes checks that the mutex really serialises the goroutines that
// share a name: an unguarded counter would be reported by -race and lose
// increments.
func TestLockExcludes(t *testing.T) {
	var tab lockTable
	const workers, each = 8, 200
	counter := 0
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				mu := tab.get("counter")
				mu.Lock()
				counter++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if counter != workers*each {
		t.Fatalf("counter = %d, want %d", counter, workers*each)
	}
}
