package flock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The liveness tests: whatever another process does with a lock file that
// it may read (stop while it waits, hold OFD read locks on it, flood it
// with opens and closes, ring its bell, run in another time namespace), a
// waiter gets the lock when it is free. Each runs the same harness on the
// CONTROL, the replaced queue (oldqueue_linux_test.go) or a mechanism
// switched off, which must fail: it never gets the lock before its
// deadline, or wakes up far more often. The deadlines are generous
// (seconds); the delays are measured and reported by BenchmarkHandoff.

const (
	// A waiter that must get the lock gets it before okDeadline; the
	// CONTROL, which never gets it, gives up after controlDeadline.
	okDeadline      = 10 * time.Second
	controlDeadline = 3 * time.Second
)

// deadlineCtx returns a context that ends after controlDeadline for a
// CONTROL, else after okDeadline.
func deadlineCtx(t *testing.T, control bool) context.Context {
	d := okDeadline
	if control {
		d = controlDeadline
	}
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// TestStoppedWaiter: another process waits for the lock ahead of us and is
// stopped (SIGSTOP: Ctrl-Z, a paused container, a debugger). When the
// holder releases, we get the lock. (A stopped process leaves the bell's
// queue: the kernel ends its sleep to stop it and restarts the sleep when
// it continues.) The CONTROL (the replaced queue) waits behind the stopped
// waiter's mark for ever.
func TestStoppedWaiter(t *testing.T) {
	for _, old := range []bool{false, true} {
		t.Run(map[bool]string{false: "bell", true: "CONTROL_old_queue"}[old], func(t *testing.T) {
			replacedQueue(t, old)
			name := lockName(t)
			release := holdLock(t, name)
			w := start(t, helperCmd(t, helperArgs{Mode: "wait", Name: name, Old: old, Timeout: time.Minute}))
			w.expect(t, "sleeping")
			if !old {
				waitFor(t, "the helper sleeps on the bell", func() bool { return bellSleepers(w.cmd.Process.Pid) > 0 })
			}
			if err := w.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			asleep := make(chan struct{})
			var once sync.Once
			hook(t, &seamsFor(t).sleep, func() { once.Do(func() { close(asleep) }) })
			ctx := deadlineCtx(t, old)
			got := lockAsync(t, ctx, name, old)
			<-asleep
			release()
			err := <-got
			switch {
			case !old && err != nil:
				t.Fatalf("with a stopped waiter ahead: %v", err)
			case old && err == nil:
				t.Fatal("CONTROL: the replaced queue got the lock past a stopped waiter: the harness cannot show the failure")
			case old:
				t.Logf("CONTROL: %v, the lock free all the while", err)
			}
		})
	}
}

// TestAbsorbingReader: a reader (any user who may read the lock file) maps
// it and sleeps on its bell ahead of us, taking every ring and sleeping
// again without taking the lock. Our waiter still gets the lock when the
// holder releases it, at its own next timeout. The CONTROL (a waiter that
// sleeps until the bell rings, without timeouts) never does.
func TestAbsorbingReader(t *testing.T) {
	for _, timeouts := range []bool{true, false} {
		t.Run(map[bool]string{true: "bell", false: "CONTROL_no_timeouts"}[timeouts], func(t *testing.T) {
			setSeam(t, &seamsFor(t).noTimeouts, !timeouts)
			name := lockName(t)
			holder, err := lockWith(t.Context(), name, false)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(name, bellSize); err != nil {
				t.Fatal(err)
			}
			r := start(t, helperCmd(t, helperArgs{Mode: "absorb", Name: name}))
			r.expect(t, "sleeping")
			waitFor(t, "the reader sleeps on the bell", func() bool { return bellSleepers(r.cmd.Process.Pid) > 0 })
			ctx := deadlineCtx(t, !timeouts)
			got := lockAsync(t, ctx, name, false)
			waitFor(t, "the waiter sleeps on the bell", func() bool { return bellSleepers(os.Getpid()) > 0 })
			holder.Close() // rings: the reader wakes, and sleeps again
			err = <-got
			switch {
			case timeouts && err != nil:
				t.Fatalf("behind a reader that takes the rings: %v", err)
			case !timeouts && err == nil:
				t.Fatal("CONTROL: a waiter without timeouts got the lock: the harness cannot show the failure")
			case !timeouts:
				t.Logf("CONTROL: %v, the lock free all the while", err)
			}
		})
	}
}

// TestForeignMarks: a second user who may only read the lock file (0644,
// root's) takes an OFD read lock on one byte of it, at the offset where the
// replaced queue's oldest waiter would have. That is invisible to flock and
// to us: we get the free lock. The CONTROL waits behind it for ever.
func TestForeignMarks(t *testing.T) {
	for _, old := range []bool{false, true} {
		t.Run(map[bool]string{false: "bell", true: "CONTROL_old_queue"}[old], func(t *testing.T) {
			replacedQueue(t, old)
			name := sharedDir(t) + "/status.json.lock"
			if err := os.WriteFile(name, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			markHolder(t, name, 1, oldQueueBase+1)
			ctx := deadlineCtx(t, old)
			f, err := lockWith(ctx, name, old)
			if err == nil {
				f.Close()
			}
			switch {
			case !old && err != nil:
				t.Fatalf("next to a second user's mark: %v", err)
			case old && err == nil:
				t.Fatal("CONTROL: the replaced queue ignored the mark: the harness cannot show the failure")
			case old:
				t.Logf("CONTROL: %v, the lock free all the while", err)
			}
		})
	}
}

// TestManyMarksNotRead: marks held by a second user (1,000 here) cost an
// uncontended acquisition nothing because it never searches them. Traced,
// 20 acquisitions make at most one F_OFD_GETLK per release (whether the
// file carries any byte-range lock at all; see keep_unix.go), and each of
// them finds a lock: the kernel stops at the first one. A query that finds
// none (F_UNLCK) has walked every mark. The CONTROL (the replaced queue)
// makes such a walk in most acquisitions
// (BenchmarkUncontendedNextToMarks has the cost).
func TestManyMarksNotRead(t *testing.T) {
	if _, err := exec.LookPath("strace"); err != nil {
		t.Fatal("strace is missing (make deps installs it):", err)
	}
	name := sharedDir(t) + "/status.json.lock"
	if err := os.WriteFile(name, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	markHolder(t, name, 1000, oldQueueBase+1<<50)
	for _, old := range []bool{false, true} {
		const n = 20
		trace := t.TempDir() + "/trace"
		cmd := helperCmd(t, helperArgs{Mode: "acquire", Name: name, Old: old, Timeout: time.Minute},
			"strace", "-f", "-qq", "-e", "trace=fcntl", "-o", trace)
		cmd.Env = append(cmd.Env, fmt.Sprintf("FLOCK_TEST_REPEAT=%d", n))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		log, err := os.ReadFile(trace)
		if err != nil {
			t.Fatal(err)
		}
		// strace shows F_OFD_GETLK's answer.
		getlk := strings.Count(string(log), "F_OFD_GETLK")
		walks := strings.Count(string(log), "F_OFD_GETLK, {l_type=F_UNLCK")
		switch {
		case !old && (walks != 0 || getlk > n):
			t.Errorf("%d uncontended acquisitions made %d F_OFD_GETLK calls, %d of them walking every mark", n, getlk, walks)
		case old && walks*2 < n:
			// The replaced queue walks the marks in nearly every
			// acquisition (19 or 20 of 20, as its queue position allows).
			t.Errorf("CONTROL: the replaced queue walked the marks only %d times in %d acquisitions: the harness cannot see it", walks, n)
		default:
			t.Logf("old queue %v: %d F_OFD_GETLK calls in %d acquisitions, %d walking every mark", old, getlk, n, walks)
		}
	}
}

var _ = func() bool {
	// acquire takes and releases the lock FLOCK_TEST_REPEAT times, nobody
	// else wanting it.
	helperModes["acquire"] = func(a helperArgs) int {
		var n int
		fmt.Sscan(os.Getenv("FLOCK_TEST_REPEAT"), &n)
		TestSeams().noKeep = a.Old // the replaced queue closed on every release
		for range n {
			f, err := lockWith(context.Background(), a.Name, a.Old)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			f.Close()
		}
		return 0
	}
	return true
}()

// TestEventFlood: while the lock is held, a second user opens and closes
// the lock file read-only 30,000 times. A waiter does not wake for any of
// it: its tries stay within what its own timeouts allow. The CONTROL (the
// replaced queue, woken by every close) tries hundreds of times.
func TestEventFlood(t *testing.T) {
	if fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC); err != nil {
		t.Skip("no inotify here: the CONTROL (the replaced queue) cannot run:", err)
	} else {
		syscall.Close(fd)
	}
	for _, old := range []bool{false, true} {
		t.Run(map[bool]string{false: "bell", true: "CONTROL_old_queue"}[old], func(t *testing.T) {
			replacedQueue(t, old)
			name := sharedDir(t) + "/status.json.lock"
			if err := os.WriteFile(name, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			release := holdLock(t, name)
			var tries atomic.Int64
			asleep := make(chan struct{})
			var once sync.Once
			hook(t, &seamsFor(t).try, func() { tries.Add(1) })
			hook(t, &seamsFor(t).sleep, func() { once.Do(func() { close(asleep) }) })
			t0 := time.Now()
			got := lockAsync(t, t.Context(), name, old)
			<-asleep
			fl := flooder(t, name, 30_000)
			fl.expect(t, "done")
			n, elapsed := tries.Load(), time.Since(t0)
			release()
			if err := <-got; err != nil {
				t.Fatal(err)
			}
			// Timeouts at 20 ms, then the time waited, at most 200 ms:
			// at most log2(elapsed/20ms)+1 of them, plus one per 200 ms.
			bound := int64(8 + elapsed/(100*time.Millisecond))
			t.Logf("%d tries during the flood (%v)", n, elapsed.Round(time.Millisecond))
			switch {
			case !old && n > bound:
				t.Errorf("a waiter tried %d times during a flood of %v (its timeouts allow %d)", n, elapsed, bound)
			case old && n <= 10*bound:
				t.Errorf("CONTROL: the replaced queue tried only %d times: the harness cannot see the flood", n)
			}
		})
	}
}

// TestTimeNamespace: a waiter in a container whose CLOCK_MONOTONIC is a
// million seconds ahead (unshare --time) gets the lock while three waiters
// of this process keep taking it in turn. The replaced queue ordered its
// waiters by their clocks, so the CONTROL always sees waiters "older" than
// itself and never gets it.
func TestTimeNamespace(t *testing.T) {
	if out, err := exec.Command("unshare", "--time", "--monotonic", "1000000", "--fork", "true").CombinedOutput(); err != nil {
		t.Skipf("no time namespace here (unshare --time: %v: %s)", err, out)
	}
	for _, old := range []bool{false, true} {
		t.Run(map[bool]string{false: "bell", true: "CONTROL_old_queue"}[old], func(t *testing.T) {
			replacedQueue(t, old)
			name := lockName(t)
			// Held until the waiter in the namespace sleeps, so that it
			// must wait.
			holder, err := lockWith(t.Context(), name, old)
			if err != nil {
				t.Fatal(err)
			}
			ctx, stop := context.WithCancel(t.Context())
			var wg sync.WaitGroup
			for range 3 {
				wg.Go(func() {
					for ctx.Err() == nil {
						if f, err := lockWith(ctx, name, old); err == nil {
							time.Sleep(time.Millisecond) // the holder's work
							f.Close()
						}
					}
				})
			}
			defer wg.Wait()
			defer stop()
			timeout := okDeadline
			if old {
				timeout = controlDeadline
			}
			w := start(t, helperCmd(t, helperArgs{Mode: "wait", Name: name, Old: old, Timeout: timeout},
				"unshare", "--time", "--monotonic", "1000000", "--fork"))
			w.expect(t, "sleeping")
			holder.Close()
			res := w.expect(t, "")
			switch {
			case !old && !strings.HasPrefix(res, "got"):
				t.Fatalf("the waiter in the time namespace: %s", res)
			case old && strings.HasPrefix(res, "got"):
				t.Fatal("CONTROL: the replaced queue served the waiter in the time namespace: the harness cannot show the failure")
			case old:
				t.Logf("CONTROL: %s", res)
			}
		})
	}
}

// TestReleaseWakesOne: 16 waiters sleep; the holder releases and each takes
// and releases the lock in turn. Each release wakes one waiter, so the
// waiters are woken about 16 times in all. The CONTROL (the replaced queue,
// which every close wakes) is woken about 16*15/2 times.
func TestReleaseWakesOne(t *testing.T) {
	const n = 16
	for _, old := range []bool{false, true} {
		t.Run(map[bool]string{false: "bell", true: "CONTROL_old_queue"}[old], func(t *testing.T) {
			replacedQueue(t, old)
			name := lockName(t)
			release := holdLock(t, name)
			var sleeps, rungs atomic.Int64
			hook(t, &seamsFor(t).sleep, func() { sleeps.Add(1) })
			hook(t, &seamsFor(t).rung, func() { rungs.Add(1) })
			var wg sync.WaitGroup
			errs := make(chan error, n)
			for i := range n {
				wg.Go(func() {
					f, err := lockWith(t.Context(), name, old)
					if err != nil {
						errs <- err
						return
					}
					f.Close()
				})
				waitFor(t, "the waiters sleep", func() bool { return sleeps.Load() > int64(i) })
			}
			if !old {
				waitFor(t, "the waiters sleep on the bell", func() bool { return bellSleepers(os.Getpid()) == n })
			}
			rungs.Store(0)
			release()
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			r := rungs.Load()
			t.Logf("%d waiters woken %d times by releases", n, r)
			switch {
			case !old && r > 2*n:
				t.Errorf("%d waiters were woken %d times by %d releases", n, r, n)
			case old && r <= 2*n:
				t.Errorf("CONTROL: the replaced queue woke %d waiters only %d times: the harness cannot see it", n, r)
			}
		})
	}
}

// TestFirstComeFirstServed: of two waiters asleep on the bell, the one that
// went to sleep first gets the lock first when the holder releases it,
// every time. The CONTROL (no
// bell: waiters poll) is seen out of order within a few rounds.
func TestFirstComeFirstServed(t *testing.T) {
	order := func(t *testing.T) string {
		name := lockName(t)
		// The holder is one of ours: its release rings the bell.
		holder, err := lockWith(t.Context(), name, false)
		if err != nil {
			t.Fatal(err)
		}
		release := holder.Close
		var sleeps atomic.Int64
		hook(t, &seamsFor(t).sleep, func() { sleeps.Add(1) })
		var mu sync.Mutex
		var got []string
		var wg sync.WaitGroup
		for i, who := range []string{"A", "B"} {
			wg.Go(func() {
				f, err := lockWith(t.Context(), name, false)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				got = append(got, who)
				mu.Unlock()
				f.Close()
			})
			waitFor(t, who+" sleeps", func() bool { return sleeps.Load() > int64(i) })
			if !seamsFor(t).noBell {
				waitFor(t, who+" sleeps on the bell", func() bool { return bellSleepers(os.Getpid()) > i })
			}
		}
		release()
		wg.Wait()
		if len(got) == 0 {
			t.FailNow()
		}
		if !seamsFor(t).noBell && sleeps.Load() > 2 {
			// A timed out before the release and slept again, behind B:
			// the round shows nothing about the bell's order.
			return ""
		}
		return got[0]
	}
	// Waiters sleep until the bell rings: a timeout that ends a sleep on a
	// loaded machine would let B try the lock before the woken A does,
	// which shows nothing about the bell's order.
	s := seamsFor(t)
	s.noTimeouts = true
	defer func() { s.noTimeouts = false }()
	for rounds := 0; rounds < 10; {
		switch first := order(t); first {
		case "A":
			rounds++
		case "B":
			t.Fatalf("%s got the lock first; A slept first", first)
		}
	}
	s.noTimeouts = false
	t.Run("CONTROL_no_bell", func(t *testing.T) {
		s.noBell = true
		defer func() { s.noBell = false }()
		for round := range 200 {
			if order(t) == "B" {
				t.Logf("CONTROL: out of order in round %d", round+1)
				return
			}
		}
		t.Fatal("CONTROL: 200 rounds of polling waiters were never out of order: the harness cannot see it")
	})
}

// TestFalseRings: a reader rings the bell for nothing, as fast as it can,
// while the lock is held. A waiter rung four times without getting the
// lock ignores the bell until its next timeout: it is woken by the bell at
// most four times per timeout. The CONTROL (rings never ignored) is woken
// far more often than that.
func TestFalseRings(t *testing.T) {
	limit := int64(maxFalseRings)
	for _, deaf := range []bool{true, false} {
		t.Run(map[bool]string{true: "bell", false: "CONTROL_never_deaf"}[deaf], func(t *testing.T) {
			if !deaf {
				s := seamsFor(t)
				s.falseRings = 1 << 30
				defer func() { s.falseRings = 0 }()
			}
			name := lockName(t)
			release := holdLock(t, name)
			var sleeps, rungs atomic.Int64
			asleep := make(chan struct{})
			var once sync.Once
			hook(t, &seamsFor(t).rung, func() { rungs.Add(1) })
			hook(t, &seamsFor(t).sleep, func() {
				sleeps.Add(1)
				once.Do(func() { close(asleep) })
			})
			got := lockAsync(t, t.Context(), name, false)
			<-asleep
			r := start(t, helperCmd(t, helperArgs{Mode: "ring", Name: name}))
			for range 20 {
				r.expect(t, "rang")
			}
			r.stop()
			release()
			if err := <-got; err != nil {
				t.Fatal(err)
			}
			rung := rungs.Load()
			others := sleeps.Load() - rung // timeouts, and sleeps that ignore the bell
			t.Logf("woken by the bell %d times, %d other sleeps, during 200,000 false rings", rung, others)
			switch {
			case deaf && rung > limit*(others+1):
				t.Errorf("woken by the bell %d times with only %d other sleeps", rung, others)
			case !deaf && rung <= limit*(others+1):
				t.Errorf("CONTROL: a waiter that never ignores the bell was woken only %d times (%d other sleeps): the harness cannot see the rings", rung, others)
			}
		})
	}
}

// TestCancelWhileAsleep: a waiter asleep on the bell returns ctx's error
// when ctx is cancelled, and the sleep is interrupted, not waited out: the
// sleeper sleeps for an hour. The CONTROL (no interrupt) is still asleep
// when the test gives up on it.
func TestCancelWhileAsleep(t *testing.T) {
	name := lockName(t)
	holdLock(t, name)
	f, err := Open(name, name, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := f.openBell(true)
	if b == nil {
		t.Fatal("no bell")
	}
	defer b.close()
	for _, interrupt := range []bool{true, false} {
		s := b.sleeper()
		done := make(chan woken, 1)
		go func() { done <- s.sleep(b.word(), time.Hour) }()
		waitFor(t, "the sleeper sleeps", func() bool { return bellSleepers(os.Getpid()) > 0 })
		if interrupt {
			s.interrupt()
			select {
			case <-done:
			case <-time.After(okDeadline):
				t.Fatal("interrupt did not end the sleep")
			}
			continue
		}
		select {
		case <-done:
			t.Fatal("CONTROL: an uninterrupted hour's sleep ended: the harness cannot see an interrupt")
		case <-time.After(time.Second):
			t.Log("CONTROL: still asleep after a second")
		}
		s.interrupt()
		<-done
	}
	// An interrupt that comes before the sleep reaches the kernel is not
	// lost either.
	for range 1000 {
		s := b.sleeper()
		done := make(chan woken, 1)
		go func() { done <- s.sleep(b.word(), time.Hour) }()
		s.interrupt()
		select {
		case <-done:
		case <-time.After(okDeadline):
			t.Fatal("an early interrupt was lost")
		}
	}

	ctx, cancel := context.WithCancel(t.Context())
	g, err := Open(name, name, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- g.Lock(ctx) }()
	waitFor(t, "the waiter sleeps", func() bool { return bellSleepers(os.Getpid()) > 0 })
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Lock = %v, want context.Canceled", err)
	}
}

// TestTimedOutWaiterKeepsItsPlace: waiter A sleeps on the bell; a newer
// waiter B sleeps after it; A's first timeout passes while the lock is
// still held, so A sleeps again, behind B in the kernel's queue. The
// release's ring must still wake A, which came first (it is in a higher
// class: see interruptBits), and not B. The CONTROL rings as a release
// did before the classes, waking the first sleeper in the kernel's queue
// whatever its bits: that is B.
func TestTimedOutWaiterKeepsItsPlace(t *testing.T) {
	for _, control := range []bool{false, true} {
		t.Run(map[bool]string{false: "ring", true: "CONTROL_ring_any"}[control], func(t *testing.T) {
			// A round in which A's first timeout passed before B was
			// asleep shows nothing (A is ahead of B in the kernel's queue
			// too): it is run again.
			for round := 0; ; round++ {
				aWoken, bWoken, ok := timedOutRound(t, control)
				if !ok && round < 10 {
					continue
				}
				if !ok {
					t.Fatal("B never fell asleep within A's first timeout")
				}
				t.Logf("A woken by the ring: %v; B woken: %v", aWoken, bWoken)
				switch {
				case !control && (bWoken || !aWoken):
					t.Fatal("the ring woke B, the newer waiter, not A")
				case control && !bWoken:
					t.Fatal("CONTROL: a ring of any bit did not wake B: the harness cannot see the order")
				}
				return
			}
		})
	}
}

// timedOutRound is one round of TestTimedOutWaiterKeepsItsPlace: ok is
// false if A's first timeout passed before B was asleep.
func timedOutRound(t *testing.T, control bool) (aWoken, bWoken, ok bool) {
	name := lockName(t)
	release := holdLock(t, name)
	var sleeps, rungs atomic.Int64
	hook(t, &seamsFor(t).sleep, func() { sleeps.Add(1) })
	hook(t, &seamsFor(t).rung, func() { rungs.Add(1) })
	got := make(chan *File, 1)
	go func() {
		f, err := lockWith(t.Context(), name, false)
		if err != nil {
			t.Error(err)
		}
		got <- f
	}()
	defer func() {
		release()
		if f := <-got; f != nil {
			f.Close()
		}
	}()
	// On a loaded machine A's first timeout can pass before this goroutine
	// looks: the count is then past 1 for good, and the round is run again.
	waitFor(t, "A sleeps on the bell", func() bool {
		return sleeps.Load() > 1 || sleeps.Load() == 1 && bellSleepers(os.Getpid()) == 1
	})
	if sleeps.Load() > 1 {
		return false, false, false
	}
	bb, err := readerBell(name)
	if err != nil {
		t.Fatal(err)
	}
	defer bb.close()
	b := bb.sleeper()
	bDone := make(chan woken, 1)
	go func() { bDone <- b.sleep(bb.word(), time.Hour) }()
	bWoke := func() bool { // before A's release rings again
		select {
		case <-bDone:
			return true
		default:
			b.interrupt()
			<-bDone
			return false
		}
	}
	waitFor(t, "B sleeps", func() bool { return bellSleepers(os.Getpid()) == 2 || sleeps.Load() > 1 })
	if sleeps.Load() > 1 {
		bWoke()
		return false, false, false
	}
	// Every sleep of A after its first is behind B, in a higher class.
	waitFor(t, "A timed out and sleeps again, behind B", func() bool {
		return sleeps.Load() >= 2 && bellSleepers(os.Getpid()) == 2
	})
	release()
	if control {
		bb.wake(futexBitsetAny)
	} else {
		bb.ring()
	}
	f := <-got
	bWoken = bWoke()
	got <- f
	return rungs.Load() > 0, bWoken, true
}

// A process whose last release woke a waiter sleeps before it tries again,
// with a first timeout of twice its last wait, within firstSleep and
// maxSleep: it does not try while the others' turns take their usual time.
// One that woke nobody, or longer than courtesyWindow ago, tries at once.
func TestCourtesy(t *testing.T) {
	name := lockName(t)
	now := time.Now()
	for _, c := range []struct {
		woke   bool
		ago    time.Duration
		waited time.Duration
		polite bool
		first  time.Duration
	}{
		{false, 0, 60 * time.Millisecond, false, firstSleep},
		{true, 2 * courtesyWindow, 60 * time.Millisecond, false, firstSleep},
		{true, 0, 60 * time.Millisecond, true, 120 * time.Millisecond},
		{true, 0, time.Millisecond, true, firstSleep},
		{true, 0, time.Second, true, maxSleep},
	} {
		rememberRelease(name, c.woke, c.waited)
		polite, first := courtesy(name, now.Add(c.ago))
		if polite != c.polite || first != c.first {
			t.Errorf("woke %v %v ago after a wait of %v: polite %v, first timeout %v; want %v, %v", c.woke, c.ago, c.waited, polite, first, c.polite, c.first)
		}
	}
}
