package etcdstore

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// appendByte is an apply that appends c to the document.
func appendByte(c byte) func([]byte) ([]byte, error) {
	return func(cur []byte) ([]byte, error) { return append(bytes.Clone(cur), c), nil }
}

// holder is a writer that holds its key: its apply blocks (in its second
// call, after a conflict made it contend) until release is called.
type holder struct {
	holding chan struct{} // closed when the blocking apply runs
	release func()
	done    chan error
}

// holdKey makes h hold the key of h: its first apply is held until x has
// committed "X" behind its back, so its commit conflicts; the apply that
// runs next (with a turn, unless turns are off) blocks until release. Its
// change is "H".
func holdKey(t *testing.T, h, x *Backend) *holder {
	t.Helper()
	first, proceed := make(chan struct{}), make(chan struct{})
	hd := &holder{holding: make(chan struct{}), done: make(chan error, 1)}
	rel := make(chan struct{})
	hd.release = func() { close(rel) }
	calls := 0
	go func() {
		hd.done <- h.Update(testCtx(t), func(cur []byte) ([]byte, error) {
			switch calls++; calls {
			case 1:
				close(first)
				<-proceed
			case 2:
				close(hd.holding)
				<-rel
			}
			return append(bytes.Clone(cur), 'H'), nil
		})
	}()
	wait := func(ch <-chan struct{}) {
		t.Helper()
		select {
		case <-ch:
		case err := <-hd.done:
			t.Fatalf("holder's Update returned before it held the key: %v", err)
		}
	}
	wait(first)
	if err := x.Update(testCtx(t), appendByte('X')); err != nil {
		t.Fatal(err)
	}
	close(proceed)
	wait(hd.holding)
	return hd
}

// entries follows the puts of new entries in a key's queue of turns.
func entries(t *testing.T, cli *clientv3.Client, b *Backend) <-chan string {
	t.Helper()
	ctx, cancel := context.WithCancel(testCtx(t))
	t.Cleanup(cancel)
	out := make(chan string, 64)
	events := cli.Watch(ctx, b.turns, clientv3.WithPrefix(), clientv3.WithFilterDelete(), clientv3.WithCreatedNotify())
	<-events // created: every later put is seen
	go func() {
		defer close(out)
		for wr := range events {
			for _, ev := range wr.Events {
				if ev.Kv.Version == 1 {
					out <- string(ev.Kv.Key)
				}
			}
		}
	}()
	return out
}

// startUpdate runs b.Update(apply) in the background.
func startUpdate(ctx context.Context, b *Backend, apply func([]byte) ([]byte, error)) chan error {
	done := make(chan error, 1)
	go func() { done <- b.Update(ctx, apply) }()
	return done
}

// queuedOrDone waits until a new entry appears in the queue or the
// Update has returned (then its error is put back for the caller).
func queuedOrDone(t *testing.T, queued <-chan string, done chan error) {
	t.Helper()
	select {
	case <-queued:
	case err := <-done:
		done <- err
	}
}

// TestTurnsFIFO: writers that queue behind a writer holding its turn
// commit after it, in the order they queued, and a writer that arrives
// while others queue does not overtake them. The CONTROL (optimistic
// retries only, as before turns) lets the later writers overtake the
// holder in the same harness.
func TestTurnsFIFO(t *testing.T) {
	endpoint := sharedServer(t).Endpoint()
	for _, tc := range []struct {
		name    string
		control bool
	}{{"turns", false}, {"CONTROL optimistic only", true}} {
		t.Run(tc.name, func(t *testing.T) {
			var opts []Option
			if tc.control {
				opts = append(opts, withoutTurns())
			}
			path := docPath(t)
			open := func() *Backend { return New(newClient(t, endpoint), path, opts...) }
			h, x, b1, b2 := open(), open(), open(), open()
			queued := entries(t, newClient(t, endpoint), h)
			hd := holdKey(t, h, x)
			if !tc.control {
				<-queued // the holder's own entry
			}
			done1 := startUpdate(testCtx(t), b1, appendByte('1'))
			queuedOrDone(t, queued, done1)
			done2 := startUpdate(testCtx(t), b2, appendByte('2'))
			queuedOrDone(t, queued, done2)
			hd.release()
			for _, done := range []chan error{hd.done, done1, done2} {
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			}
			got, _ := getRaw(t, newClient(t, endpoint), h.Key())
			switch {
			case tc.control && string(got) == "XH12":
				t.Fatalf("CONTROL committed in queue order (%q): the harness does not let late writers overtake", got)
			case !tc.control && string(got) != "XH12":
				t.Fatalf("stored %q; want XH12 (holder, then the writers in the order they queued)", got)
			}
		})
	}
}

// TestTurnDeparture: a writer whose ctx ends while it waits for its turn
// leaves the queue at once: the writer behind it gets its turn when the
// holder commits, not when the leaver's lease would expire (an hour here,
// past the test's deadline).
func TestTurnDeparture(t *testing.T) {
	endpoint := sharedServer(t).Endpoint()
	path := docPath(t)
	open := func() *Backend { return New(newClient(t, endpoint), path, WithTurnTTL(time.Hour)) }
	h, x, leaver, b := open(), open(), open(), open()
	queued := entries(t, newClient(t, endpoint), h)
	hd := holdKey(t, h, x)
	<-queued
	leaveCtx, leave := context.WithCancel(testCtx(t))
	defer leave()
	left := startUpdate(leaveCtx, leaver, func([]byte) ([]byte, error) {
		t.Error("the departed writer's apply ran")
		return nil, nil
	})
	<-queued
	done := startUpdate(testCtx(t), b, appendByte('B'))
	<-queued
	leave()
	if err := <-left; !errors.Is(err, context.Canceled) || errors.Is(err, ErrOutcomeUnknown) {
		t.Fatalf("departed writer: %v; want a plain context.Canceled", err)
	}
	hd.release()
	if err := <-hd.done; err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got, _ := getRaw(t, newClient(t, endpoint), h.Key()); string(got) != "XHB" {
		t.Fatalf("stored %q; want XHB", got)
	}
}

// TestTurnEntryNames: a With reuses a few entry names per key, so that a
// hot key's queue does not grow etcd's index by one dead key per turn
// (every read of the queue scans them until the history is compacted).
func TestTurnEntryNames(t *testing.T) {
	endpoint := sharedServer(t).Endpoint()
	path := docPath(t)
	const writers, updates = 4, 25
	bs := make([]*Backend, writers)
	for i := range bs {
		bs[i] = New(newClient(t, endpoint), path)
	}
	watcher := newClient(t, endpoint)
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	events := watcher.Watch(ctx, bs[0].turns, clientv3.WithPrefix(), clientv3.WithCreatedNotify())
	<-events // created: every later put is seen
	errs := make(chan error, writers)
	for _, b := range bs {
		go func() {
			for range updates {
				if err := b.Update(ctx, appendByte('.')); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := getRaw(t, watcher, bs[0].Key()); len(got) != writers*updates {
		t.Fatalf("stored %d updates, want %d", len(got), writers*updates)
	}
	// A put that reaches etcd after this one is seen before it.
	end, err := watcher.Put(ctx, bs[0].turns+"~end", "")
	if err != nil {
		t.Fatal(err)
	}
	names, puts := map[string]bool{}, 0
	for wr := range events {
		for _, ev := range wr.Events {
			if ev.Type == mvccpb.PUT && ev.Kv.Version == 1 && ev.Kv.ModRevision < end.Header.Revision {
				names[string(ev.Kv.Key)] = true
				puts++
			}
		}
		if wr.Header.Revision >= end.Header.Revision {
			break
		}
	}
	watcher.Delete(ctx, bs[0].turns+"~end")
	t.Logf("%d entries queued under %d names", puts, len(names))
	if puts < writers {
		t.Fatalf("only %d entries queued: the writers did not contend", puts)
	}
	if len(names) > writers*turnSlots {
		t.Fatalf("%d entry names for %d writers; want at most %d", len(names), writers, writers*turnSlots)
	}
}

// TestTurnAbsorbs: a batch that waited for its turn commits, in that turn,
// the Updates of its process that queued behind it meanwhile: one commit
// for three callers.
func TestTurnAbsorbs(t *testing.T) {
	endpoint := sharedServer(t).Endpoint()
	path := docPath(t)
	h, x := New(newClient(t, endpoint), path), New(newClient(t, endpoint), path)
	s := newShared(newClient(t, endpoint), newConfig(nil))
	sb := s.open(path)
	queued := entries(t, newClient(t, endpoint), h)
	hd := holdKey(t, h, x)
	<-queued
	doneA := startUpdate(testCtx(t), sb, appendByte('a'))
	<-queued // a's batch waits for its turn
	doneB := startUpdate(testCtx(t), sb, appendByte('b'))
	waitQueued(s, sb.Key(), 1) // b and c wait in the process
	doneC := startUpdate(testCtx(t), sb, appendByte('c'))
	waitQueued(s, sb.Key(), 2)
	hd.release()
	for _, done := range []chan error{hd.done, doneA, doneB, doneC} {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	resp, err := newClient(t, endpoint).Get(testCtx(t), sb.Key())
	if err != nil {
		t.Fatal(err)
	}
	// X, H, then a, b and c in one commit: three versions.
	if kv := resp.Kvs[0]; string(kv.Value) != "XHabc" || kv.Version != 3 {
		t.Fatalf("stored %q at version %d; want XHabc at version 3", kv.Value, kv.Version)
	}
}
