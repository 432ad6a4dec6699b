//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package status_test

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentstate/core/status"
)

// The killee child increments runs through status.Mutate. It writes "call"
// before each Mutate and "ack" after each one that returned nil, so the
// parent knows, whatever moment the SIGKILL lands at, a lower bound (acks)
// and an upper bound (calls) for what the child put in the file.
//
// In Hold mode it first does a.Iterations increments, then one Mutate whose
// fn reports "inside" and blocks reading stdin: the child then holds the
// flock until it is killed.
var _ = cpRegister("killee", func(a cpArgs, w *cpReporter) error {
	ctx := context.Background()
	inc := func() error {
		if err := w.line("call"); err != nil {
			return err
		}
		if _, err := status.Mutate(ctx, a.Path, func(s *status.Status) error {
			s.Runs++
			return nil
		}); err != nil {
			return err
		}
		return w.line("ack")
	}
	if a.Hold {
		for range a.Iterations {
			if err := inc(); err != nil {
				return err
			}
		}
		if err := w.line("call"); err != nil {
			return err
		}
		_, err := status.Mutate(ctx, a.Path, func(s *status.Status) error {
			s.Runs++
			if err := w.line("inside"); err != nil {
				return err
			}
			_, _ = io.Copy(io.Discard, os.Stdin) // until the parent kills us
			return errors.New("stdin closed: the parent should have killed this child")
		})
		return err
	}
	var wg sync.WaitGroup
	errc := make(chan error, a.Goroutines)
	for range a.Goroutines {
		wg.Go(func() {
			for {
				if err := inc(); err != nil {
					errc <- err
					return
				}
			}
		})
	}
	wg.Wait() // only on error: otherwise the child runs until it is killed
	return <-errc
})

// cpKillRound starts a killee, SIGKILLs it at the chosen moment and returns
// the calls and acks it reported before it died. beforeKill runs just
// before the signal is sent.
func cpKillRound(t *testing.T, path string, rng *rand.Rand, hold bool, beforeKill func()) (calls, acks int) {
	t.Helper()
	a := cpArgs{Path: path, Goroutines: 4}
	if hold {
		a.Hold, a.Iterations = true, rng.IntN(5)
	}
	c := cpStartGo(t, "killee", "killee", a)
	count := func(l string) {
		switch l {
		case "call":
			calls++
		case "ack":
			acks++
		}
	}
	if hold {
		for {
			l, ok := c.next()
			if !ok {
				c.wait()
				t.Fatalf("killee ended before holding the lock: %v\n%s", c.err, c.stderr.String())
			}
			count(l)
			if l == "inside" {
				break
			}
		}
		// The child is inside fn: it must hold the flock right now.
		if cpTryFlock(t, path+status.LockSuffix) {
			t.Fatal("the lock was free while a Mutate function was running in another process")
		}
	} else {
		// A random number of report lines in: the kill lands anywhere in
		// the child's cycle (waiting, reading, inside fn, writing, fsync).
		for range 1 + rng.IntN(60) {
			l, ok := c.next()
			if !ok {
				break
			}
			count(l)
		}
	}
	beforeKill()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cpKilled(t, c, count)
	return calls, acks
}

// cpTryFlock reports whether an exclusive flock on name can be taken right
// now (and releases it).
func cpTryFlock(t *testing.T, name string) bool {
	t.Helper()
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

// cpIncrementWithin increments runs in the parent. The deadline is only
// there to turn a real hang (a lock nobody will ever release) into a
// failure; nothing asserts on how long the call takes.
func cpIncrementWithin(path string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := status.Mutate(ctx, path, func(s *status.Status) error {
		s.Runs++
		return nil
	})
	return err
}

func TestCrossprocSIGKILL(t *testing.T) {
	t.Parallel()
	kills := 24
	if cpSoak() {
		kills = 60
	}
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	path := cpSeed(t)

	var calls, acks, others, held int
	for i := range kills {
		hold := i%2 == 1
		if hold {
			held++
		}
		// A parent goroutine contends with the killee just before the
		// kill; in hold rounds it waits for the lock the killee dies
		// holding. It must get through.
		waiter := make(chan error, 1)
		c, a := cpKillRound(t, path, rng, hold, func() {
			go func() { waiter <- cpIncrementWithin(path) }()
		})
		calls, acks = calls+c, acks+a
		if err := <-waiter; err != nil {
			t.Fatalf("kill %d: Mutate waiting across the kill: %v", i+1, err)
		}
		// And a fresh caller after the kill proceeds too.
		if err := cpIncrementWithin(path); err != nil {
			t.Fatalf("kill %d: Mutate after the kill: %v", i+1, err)
		}
		others += 2
		s, err := status.Load(context.Background(), path)
		if err != nil {
			t.Fatalf("kill %d: document invalid after the kill: %v", i+1, err)
		}
		if s.State != status.Running || s.Agent != "crossproc" || !s.StartedAt.Equal(cpSeedStarted) {
			t.Fatalf("kill %d: document lost fields: %+v", i+1, s)
		}
	}

	s, err := status.Load(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	lower, upper := others+acks, others+calls
	temps, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*.tmp"))
	t.Logf("%d kills (%d holding the lock inside fn): killees called Mutate %d times, %d acknowledged; parent %d; final runs %d; %d temp files left by killed writes",
		kills, held, calls, acks, others, s.Runs, len(temps))
	if s.Runs < lower || s.Runs > upper {
		t.Errorf("final runs %d, want between %d (every acknowledged increment) and %d (every attempted one)", s.Runs, lower, upper)
	}
	if got := string(cpRawFields(t, path)["x_seed"]); got != cpSeedExtra {
		t.Errorf("unknown field x_seed = %s, want %s", got, cpSeedExtra)
	}
}

// The exclusive-create lock ("the lock is held while NAME.excl exists") is
// what flock replaces: it survives its holder. The holder is killed by the
// same machinery as above; the control asserts that the harness sees the
// next acquirer stuck.
var _ = cpRegister("excl-holder", func(a cpArgs, w *cpReporter) error {
	f, err := os.OpenFile(a.Path+".excl", os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	f.Close()
	if err := w.line("inside"); err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	return errors.New("stdin closed: the parent should have killed this child")
})

// CONTROL: after a SIGKILL, an exclusive-create lock is never released, so
// "others proceed" fails — unlike the flock above. The deadline here is the
// detection, not a timing assertion: the lock file stays forever.
func TestCrossprocSIGKILLControlExclusiveCreateLock(t *testing.T) {
	path := cpSeed(t)
	c := cpStartGo(t, "excl-holder", "excl-holder", cpArgs{Path: path})
	c.expect(t, "inside")
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.wait()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	for {
		f, err := os.OpenFile(path+".excl", os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			f.Close()
			t.Fatal("exclusive-create lock acquired after its holder was killed: the control cannot show a stuck lock")
		}
		if !errors.Is(err, os.ErrExist) {
			t.Fatal(err)
		}
		select {
		case <-ctx.Done():
			t.Logf("exclusive-create lock still held by a dead process: %v", ctx.Err())
			return
		case <-time.After(time.Millisecond):
		}
	}
}
