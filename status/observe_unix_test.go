//go:build unix

package status

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// recorder is an Observer that keeps every Call.
type recorder struct {
	mu    sync.Mutex
	calls []CallReport
}

func (r *recorder) observer() *Observer {
	return &Observer{Done: func(c CallReport) {
		r.mu.Lock()
		r.calls = append(r.calls, c)
		r.mu.Unlock()
	}}
}

func (r *recorder) take() []CallReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	return out
}

func (r *recorder) one(t *testing.T) CallReport {
	t.Helper()
	calls := r.take()
	if len(calls) != 1 {
		t.Fatalf("%d calls reported, want 1: %+v", len(calls), calls)
	}
	return calls[0]
}

// Each call is reported once, with what it did and how it ended.
func TestObserverReportsEachCall(t *testing.T) {
	var rec recorder
	ctx := WithObserver(context.Background(), rec.observer())
	path := filepath.Join(t.TempDir(), StatusFile)

	if _, err := Mutate(ctx, path, Transition(Queued, "")); err != nil {
		t.Fatal(err)
	}
	c := rec.one(t)
	if c.Path != path || c.Op != "mutate" || c.Batch != 1 || !c.Leader || c.Write <= 0 || c.Err != nil || c.Wait <= 0 {
		t.Errorf("a writing Mutate: %+v", c)
	}

	Mutate(ctx, path, func(*Status) error { return nil })
	if c := rec.one(t); c.Write != 0 || c.Err != nil || c.Batch != 1 {
		t.Errorf("a Mutate that changes nothing: %+v", c)
	}

	Mutate(ctx, path, Transition(Running, Blocked))
	if c := rec.one(t); !errors.Is(c.Err, ErrConflict) || c.Write != 0 {
		t.Errorf("a conflict: %+v", c)
	}

	Create(ctx, path, Status{})
	if c := rec.one(t); !errors.Is(c.Err, os.ErrExist) || c.Op != "mutate" {
		t.Errorf("Create of an existing document: %+v", c)
	}

	if err := Remove(ctx, path); err != nil {
		t.Fatal(err)
	}
	if c := rec.one(t); c.Op != "remove" || c.Write <= 0 || c.Err != nil {
		t.Errorf("Remove: %+v", c)
	}

	os.WriteFile(path, []byte(`{"runs": "x"}`), 0o644)
	Mutate(ctx, path, func(*Status) error { return nil })
	if c := rec.one(t); !errors.Is(c.Err, ErrCorrupt) || c.Write != 0 {
		t.Errorf("a corrupt document refused: %+v", c)
	}

	// A call whose ctx ends while it waits behind a held lock.
	os.Remove(path)
	release := holdLock(t, path)
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	Mutate(short, path, Transition(Queued, ""))
	release()
	if c := rec.one(t); !errors.Is(c.Err, context.DeadlineExceeded) || c.Write != 0 || c.Wait <= 0 {
		t.Errorf("a timeout: %+v", c)
	}

	// Calls without the Observer are not reported.
	Mutate(context.Background(), path, Transition(Queued, ""))
	Mutate(WithObserver(context.Background(), nil), path, func(*Status) error { return nil })
	Mutate(WithObserver(context.Background(), &Observer{}), path, func(*Status) error { return nil })
	if calls := rec.take(); len(calls) != 0 {
		t.Errorf("unobserved calls reported: %+v", calls)
	}
}

// A batch: every call reports the batch's size, lock wait and write, and
// exactly one is its leader, so that counting leaders counts writes.
func TestObserverBatch(t *testing.T) {
	const n = 10
	var rec recorder
	ctx := WithObserver(context.Background(), rec.observer())
	path := filepath.Join(t.TempDir(), "counter.json")
	writes := countWrites(t, nil)
	release := holdLock(t, path)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if _, err := NewStore[counterDoc](path).Mutate(ctx, func(d *counterDoc) error { d.Count++; return nil }); err != nil {
				t.Error(err)
			}
		})
	}
	waitQueue(t, path, n) // the leader waits for the lock, the others behind it
	release()
	wg.Wait()
	calls := rec.take()
	if len(calls) != n {
		t.Fatalf("%d calls reported, want %d", len(calls), n)
	}
	leaders := 0
	for _, c := range calls {
		if c.Batch != n || c.Lock <= 0 || c.Write <= 0 || c.Leader && c.Wait < c.Lock || c.Err != nil {
			t.Errorf("call in a batch of %d behind a held lock: %+v", n, c)
		}
		if c.Leader {
			leaders++
		}
	}
	if leaders != *writes || *writes != 1 {
		t.Errorf("%d leaders, %d writes: want one of each", leaders, *writes)
	}
	if got := readCounter(t, path).Count; got != n {
		t.Errorf("count %d, want %d", got, n)
	}

	// CONTROL: counting every call that reports a write counts the
	// batch's one write n times; the test requires the over-count, so
	// that it knows the batch above really shared one write.
	withWrite := 0
	for _, c := range calls {
		if c.Write > 0 {
			withWrite++
		}
	}
	if withWrite == *writes {
		t.Fatalf("CONTROL: %d calls with a write for %d writes: no batch formed, the harness cannot tell", withWrite, *writes)
	}
	t.Logf("CONTROL: counting calls gives %d writes, leaders give %d (real: %d)", withWrite, leaders, *writes)
}
