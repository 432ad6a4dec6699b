package etcdstore

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/internal/goid"
)

// holdDriver starts an Update on b whose apply blocks until the returned
// release is called, so that Updates started meanwhile queue up and are
// then committed together as the next batch. It changes nothing.
func holdDriver(t *testing.T, b *Backend) (release func() error) {
	t.Helper()
	in, rel := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- b.Update(testCtx(t), func(cur []byte) ([]byte, error) {
			close(in)
			<-rel
			return cur, nil // no change
		})
	}()
	<-in
	return func() error { close(rel); return <-done }
}

// waitQueued waits until n Updates of key are queued behind the driver.
func waitQueued(s *shared, key string, n int) {
	for pending(s, key) < n {
		runtime.Gosched()
	}
}

// An outcome is how one Update started by update ended.
type outcome struct {
	err      error
	panicked any  // Update panicked with this value
	returned bool // Update returned (false: its goroutine ended inside it)
}

// update starts b.Update(apply) on a goroutine of its own and reports how
// it ended.
func update(t *testing.T, b *Backend, apply func([]byte) ([]byte, error)) <-chan outcome {
	ch := make(chan outcome, 1)
	go func() {
		var o outcome
		defer func() {
			o.panicked = recover()
			ch <- o
		}()
		o.err = b.Update(testCtx(t), apply)
		o.returned = true
	}()
	return ch
}

// TestBatchMembersIndependent: in one batch, a panicking fn re-panics in
// its own caller, an erroring fn returns its error, and the others commit,
// each seeing its predecessors' results.
func TestBatchMembersIndependent(t *testing.T) {
	cli := newClient(t, sharedServer(t).Endpoint())
	s := newShared(cli, newConfig(nil))
	b := s.open(docPath(t))
	release := holdDriver(t, b)
	run := func(apply func([]byte) ([]byte, error)) <-chan outcome { return update(t, b, apply) }
	errFn := errors.New("fn failed")
	add := appendByte
	first := run(add('1'))
	waitQueued(s, b.Key(), 1)
	panics := run(func([]byte) ([]byte, error) { panic("boom") })
	waitQueued(s, b.Key(), 2)
	fails := run(func([]byte) ([]byte, error) { return []byte("never"), errFn })
	waitQueued(s, b.Key(), 3)
	last := run(add('2'))
	waitQueued(s, b.Key(), 4)
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if o := <-first; o.err != nil || o.panicked != nil {
		t.Errorf("first: %+v, want success", o)
	}
	if o := <-panics; o.panicked != "boom" {
		t.Errorf("panicking fn: %+v, want its panic in its own goroutine", o)
	}
	if o := <-fails; o.err != errFn {
		t.Errorf("failing fn: %+v, want its error as is", o)
	}
	if o := <-last; o.err != nil || o.panicked != nil {
		t.Errorf("last: %+v, want success", o)
	}
	if got, _ := getRaw(t, cli, b.Key()); string(got) != "12" {
		t.Errorf("stored %q, want 12 (1 then 2, in one batch)", got)
	}
}

// TestBatchDeparture: a member whose ctx ends while its batch's commit is
// in flight (and its response lost) leaves with an *OutcomeError; the
// other members are not affected and commit; Resolve finds the departed
// member's change committed with theirs.
func TestBatchDeparture(t *testing.T) {
	endpoint := sharedServer(t).Endpoint()
	leaverCtx, leave := context.WithCancel(testCtx(t))
	defer leave()
	left := make(chan struct{})
	f := &faults{onLoss: func() { leave(); <-left }}
	cli := newFaultyClient(t, []string{endpoint}, f)
	s := newShared(cli, newConfig(nil))
	path := docPath(t)
	st := status.NewStore[counter](path, s.option())
	b := s.open(path)
	release := holdDriver(t, b)

	var leaverErr error
	go func() {
		defer close(left)
		_, leaverErr = st.Mutate(leaverCtx, func(c *counter) error { c.N += 10; return nil })
	}()
	waitQueued(s, b.Key(), 1)
	stayer := make(chan error, 1)
	go func() {
		_, err := st.Mutate(testCtx(t), func(c *counter) error { c.N++; return nil })
		stayer <- err
	}()
	waitQueued(s, b.Key(), 2)
	f.loseResponse.Store(1) // the batch [leaver, stayer] loses its reply
	if err := release(); err != nil {
		t.Fatal(err)
	}
	<-left
	var oe *OutcomeError
	if !errors.As(leaverErr, &oe) || !errors.Is(leaverErr, context.Canceled) {
		t.Fatalf("departed member: %v; want an *OutcomeError matching context.Canceled", leaverErr)
	}
	if err := <-stayer; err != nil {
		t.Fatalf("remaining member: %v; want success", err)
	}
	committed, err := Resolve(testCtx(t), newClient(t, endpoint), oe)
	if err != nil || !committed {
		t.Fatalf("Resolve = %v, %v; want committed", committed, err)
	}
	got, err := status.NewStore[counter](path, With(newClient(t, endpoint))).Load(testCtx(t))
	if err != nil || got.N != 11 {
		t.Fatalf("stored %+v, %v; want n=11 (both changes, once each)", got, err)
	}
}

// TestApplyGoexit: an apply that calls runtime.Goexit (t.FailNow inside fn,
// say) ends only its own caller's goroutine, which it runs on: Update does
// not return there, the other members of its batch commit their changes
// without its change, and the key stays usable. (Run on the driver's
// goroutine instead, the Goexit failed the whole batch: the control.)
func TestApplyGoexit(t *testing.T) {
	cli := newClient(t, sharedServer(t).Endpoint())
	s := newShared(cli, newConfig(nil))
	b := s.open(docPath(t))
	release := holdDriver(t, b)
	run := func(apply func([]byte) ([]byte, error)) <-chan outcome { return update(t, b, apply) }
	add := appendByte
	first := run(add('1'))
	waitQueued(s, b.Key(), 1)
	exits := run(func(cur []byte) ([]byte, error) {
		_ = append(bytes.Clone(cur), 'X')
		runtime.Goexit()
		return nil, nil
	})
	waitQueued(s, b.Key(), 2)
	last := run(add('2'))
	waitQueued(s, b.Key(), 3)
	if err := release(); err != nil {
		t.Fatal(err)
	}
	for name, ch := range map[string]<-chan outcome{"first": first, "last": last} {
		if o := <-ch; !o.returned || o.err != nil || o.panicked != nil {
			t.Errorf("%s member of the batch: %+v; want it committed (another member's Goexit must not affect it)", name, o)
		}
	}
	if o := <-exits; o.returned {
		t.Errorf("Update whose apply called Goexit returned %v; want its own goroutine ended", o.err)
	}
	if got, _ := getRaw(t, cli, b.Key()); string(got) != "12" {
		t.Errorf("stored %q, want 12 (the exiting member's change dropped)", got)
	}
	if err := b.Update(testCtx(t), add('3')); err != nil {
		t.Fatalf("Update after a Goexit: %v", err)
	}
}

// TestApplyRunsOnCallersGoroutine: every run of an apply, also the re-run
// after a conflict, is on the goroutine that called Update.
func TestApplyRunsOnCallersGoroutine(t *testing.T) {
	cli := newClient(t, sharedServer(t).Endpoint())
	s := newShared(cli, newConfig(nil))
	b := s.open(docPath(t))
	release := holdDriver(t, b)
	type runs struct {
		err         error
		runs, elsew int // runs of apply; runs on another goroutine
	}
	interfered := false
	run := func(interfere bool) <-chan runs {
		ch := make(chan runs, 1)
		go func() {
			var o runs
			me := goid.Current()
			o.err = b.Update(testCtx(t), func(cur []byte) ([]byte, error) {
				o.runs++
				if goid.Current() != me {
					o.elsew++
				}
				if interfere && !interfered { // a write behind the batch's back: a conflict
					interfered = true
					if _, err := cli.Put(testCtx(t), b.Key(), "other"); err != nil {
						return nil, err
					}
				}
				return append(bytes.Clone(cur), '+'), nil
			})
			ch <- o
		}()
		return ch
	}
	chs := []<-chan runs{run(true)}
	waitQueued(s, b.Key(), 1)
	chs = append(chs, run(false))
	waitQueued(s, b.Key(), 2)
	if err := release(); err != nil {
		t.Fatal(err)
	}
	for i, ch := range chs {
		o := <-ch
		if o.err != nil || o.elsew != 0 || o.runs < 2 {
			t.Errorf("member %d: %+v; want success, at least 2 runs (a conflict), none on another goroutine", i, o)
		}
	}
	if got, _ := getRaw(t, cli, b.Key()); string(got) != "other++" {
		t.Errorf("stored %q, want other++", got)
	}
}

// TestDepartWhenGiven: a member whose ctx ends as its batch gives it the
// document either runs its apply and waits for the commit, or declines and
// leaves; either way the batch goes on, and the member's error tells whether
// its change was committed. The member ahead of it in the batch ends its ctx
// from its own apply, so that the departure races with the driver giving
// it the document. Without the decline the driver would wait for the
// departed caller for ever (the control: the test then fails).
func TestDepartWhenGiven(t *testing.T) {
	cli := newClient(t, sharedServer(t).Endpoint())
	s := newShared(cli, newConfig(nil))
	for i := range 30 {
		b := s.open(docPath(t) + "/" + strconv.Itoa(i))
		ctx, cancel := context.WithTimeout(testCtx(t), 30*time.Second) // bounds a hang
		defer cancel()
		release := holdDriver(t, b)
		leaverCtx, leave := context.WithCancel(ctx)
		first := make(chan error, 1)
		go func() {
			first <- b.Update(ctx, func(cur []byte) ([]byte, error) {
				leave()
				return append(bytes.Clone(cur), '1'), nil
			})
		}()
		waitQueued(s, b.Key(), 1)
		leaver := make(chan error, 1)
		go func() {
			leaver <- b.Update(leaverCtx, func(cur []byte) ([]byte, error) { return append(bytes.Clone(cur), 'L'), nil })
		}()
		waitQueued(s, b.Key(), 2)
		if err := release(); err != nil {
			t.Fatal(err)
		}
		if err := <-first; err != nil {
			t.Fatalf("first member: %v", err)
		}
		err := <-leaver
		got, _ := getRaw(t, cli, b.Key())
		var oe *OutcomeError
		switch {
		case errors.As(err, &oe):
			committed, rerr := Resolve(ctx, cli, oe)
			if rerr != nil || committed != (string(got) == "1L") {
				t.Fatalf("Resolve = %v, %v with %q stored", committed, rerr, got)
			}
		case err == nil && string(got) != "1L", err != nil && string(got) != "1":
			t.Fatalf("leaver: %v with %q stored", err, got)
		}
		if err := b.Update(ctx, func(cur []byte) ([]byte, error) { return cur, nil }); err != nil {
			t.Fatalf("key unusable after a departure: %v", err)
		}
	}
}

// TestBatchFailKeepsFnError: when a batch's commit fails, a member whose
// own apply failed still gets its own error, as is (status.Backend's
// contract, and what the file backend does); the others get the commit's.
func TestBatchFailKeepsFnError(t *testing.T) {
	cli := newClient(t, sharedServer(t).Endpoint())
	s := newShared(cli, newConfig(nil))
	b := s.open(docPath(t))
	release := holdDriver(t, b)
	huge := make(chan error, 1)
	go func() {
		// Over etcd's request size limit: the server rejects the commit.
		huge <- b.Update(testCtx(t), func([]byte) ([]byte, error) { return bytes.Repeat([]byte("x"), 4<<20), nil })
	}()
	waitQueued(s, b.Key(), 1)
	errFn := errors.New("fn failed")
	fails := make(chan error, 1)
	go func() {
		fails <- b.Update(testCtx(t), func([]byte) ([]byte, error) { return nil, errFn })
	}()
	waitQueued(s, b.Key(), 2)
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if err := <-huge; err == nil {
		t.Errorf("oversized commit succeeded; want an error")
	}
	if err := <-fails; err != errFn {
		t.Errorf("failing fn in a failed batch: %v; want its own error as is", err)
	}
}

// TestBatchDepartureAfterOwnFailure: a member whose own fn failed (or
// panicked) in the run its batch is committing, and whose ctx then ends,
// gets that error (or panic), not an *OutcomeError: its change is in no
// commit, so there is nothing to resolve.
func TestBatchDepartureAfterOwnFailure(t *testing.T) {
	errFn := errors.New("fn failed")
	for _, tc := range []struct {
		name  string
		apply func([]byte) ([]byte, error)
		check func(t *testing.T, err error, panicVal any)
	}{
		{"error", func([]byte) ([]byte, error) { return nil, errFn }, func(t *testing.T, err error, pv any) {
			if err != errFn || pv != nil {
				t.Errorf("departed member whose fn failed: %v, panic %v; want its own error as is", err, pv)
			}
		}},
		{"panic", func([]byte) ([]byte, error) { panic("boom") }, func(t *testing.T, err error, pv any) {
			if pv != "boom" {
				t.Errorf("departed member whose fn panicked: %v, panic %v; want its panic", err, pv)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leaverCtx, leave := context.WithCancel(testCtx(t))
			defer leave()
			left := make(chan struct{})
			f := &faults{onLoss: func() { leave(); <-left }}
			cli := newFaultyClient(t, sharedServer(t).Endpoints(), f)
			s := newShared(cli, newConfig(nil))
			b := s.open(docPath(t))
			release := holdDriver(t, b)

			var leaverErr error
			var leaverPanic any
			go func() {
				defer close(left)
				defer func() { leaverPanic = recover() }()
				leaverErr = b.Update(leaverCtx, tc.apply)
			}()
			waitQueued(s, b.Key(), 1)
			stayer := make(chan error, 1)
			go func() {
				stayer <- b.Update(testCtx(t), func(cur []byte) ([]byte, error) { return append(bytes.Clone(cur), 'x'), nil })
			}()
			waitQueued(s, b.Key(), 2)
			f.loseResponse.Store(1) // the batch's commit loses its reply
			if err := release(); err != nil {
				t.Fatal(err)
			}
			<-left
			tc.check(t, leaverErr, leaverPanic)
			if err := <-stayer; err != nil {
				t.Fatalf("remaining member: %v; want success", err)
			}
		})
	}
}
