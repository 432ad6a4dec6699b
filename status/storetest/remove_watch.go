package storetest

import (
	"context"
	"errors"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/agentstate/core/status"
	"github.com/google/go-cmp/cmp"
)

// Remove deletes the document; a Mutate after it starts from the zero
// value; a second Remove reports os.ErrNotExist and changes nothing.
func testRemove(t *testing.T, h Harness) {
	p := h.Path(t)
	ctx := context.Background()
	if err := h.store(p).Remove(ctx); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Remove of a missing document: %v, want os.ErrNotExist", err)
	}
	if _, err := h.store(p).Mutate(ctx, func(d *Doc) error { d.Count, d.Name = 3, "x"; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := h.store(p).Remove(ctx); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if b, ok := h.ReadRaw(t, p); ok {
		t.Fatalf("after Remove the document is still stored: %q", b)
	}
	got, err := h.store(p).Mutate(ctx, func(d *Doc) error {
		if diff := cmp.Diff(Doc{}, *d); diff != "" {
			t.Errorf("fn after Remove saw (-want +got):\n%s", diff)
		}
		d.Count++
		return nil
	})
	if err != nil || got.Count != 1 {
		t.Fatalf("Mutate after Remove = %+v, %v; want a new document with count 1", got, err)
	}
	if err := h.store(p).Remove(ctx); err != nil {
		t.Fatalf("Remove of the new document: %v", err)
	}
	if err := h.store(p).Remove(ctx); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("second Remove: %v, want os.ErrNotExist", err)
	}
}

// Remove does not decode: a corrupt document, which Mutate refuses, can be
// removed. A cancelled context removes nothing.
func testRemoveCorrupt(t *testing.T, h Harness) {
	p := h.Path(t)
	h.WriteRaw(t, p, []byte(`{"count": `))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := h.store(p).Remove(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Remove with a cancelled context: %v, want context.Canceled", err)
	}
	h.mustRaw(t, p)
	if err := h.store(p).Remove(context.Background()); err != nil {
		t.Fatalf("Remove of a corrupt document: %v", err)
	}
	if b, ok := h.ReadRaw(t, p); ok {
		t.Errorf("the corrupt document is still stored: %q", b)
	}
}

// Remove takes its place among concurrent Mutates: every increment before
// it is removed with the document and every one after it starts from zero,
// so the counts that the Mutates return are 1..a and 1..b, with b the
// final count and a ≥ 1 (the first Mutate returned before the Remove
// began). A lost update, or a Remove that a concurrent write undid,
// breaks the pattern.
func testRemoveAmongMutates(t *testing.T, h Harness) {
	p := h.Path(t)
	ctx := context.Background()
	inc := func(d *Doc) error { d.Count++; return nil }
	if _, err := h.store(p).Mutate(ctx, inc); err != nil {
		t.Fatal(err)
	}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		counts = []int{1}
		errs   = make(chan error, goroutines+1)
	)
	wg.Go(func() {
		if err := h.store(p).Remove(ctx); err != nil {
			errs <- err
		}
	})
	for range goroutines {
		wg.Go(func() {
			s := h.store(p)
			for range perGoroutine / 5 {
				got, err := s.Mutate(ctx, inc)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				counts = append(counts, got.Count)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Remove or Mutate: %v", err)
	}
	final, err := h.store(p).Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if final.Count >= len(counts) {
		t.Fatalf("final count %d after %d increments: the Remove, which came after the first, removed nothing", final.Count, len(counts))
	}
	var want []int
	for i := 1; i <= len(counts)-final.Count; i++ {
		want = append(want, i)
	}
	for i := 1; i <= final.Count; i++ {
		want = append(want, i)
	}
	slices.Sort(want)
	slices.Sort(counts)
	if diff := cmp.Diff(want, counts); diff != "" {
		t.Errorf("counts returned around a Remove, final count %d (-want +got):\n%s", final.Count, diff)
	}
}

// Watch yields the current document, then each change as the same
// Entry[Doc] on every backend: a value, Removed, an error matching
// status.ErrCorrupt for a corrupt document (and the watch goes on), a new
// value after it. Each step is taken once the watch has reported the
// previous one, so no change can be coalesced away.
func testWatch(t *testing.T, h Harness) {
	p := h.Path(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	set := func(n int) func() {
		return func() {
			if _, err := h.store(p).Mutate(ctx, func(d *Doc) error { d.Count = n; return nil }); err != nil {
				t.Fatal(err)
			}
		}
	}
	remove := func() {
		if err := h.store(p).Remove(ctx); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		want string // what the watch reports before the step runs
		then func()
	}{
		{"1", set(2)},
		{"2", remove},
		{"removed", func() { h.WriteRaw(t, p, []byte(`{"count": `)) }},
		{"corrupt", remove},
		{"removed", set(5)},
		{"5", cancel},
	}
	set(1)()
	i := 0
	for e, err := range h.store(p).Watch(ctx) {
		got := "value"
		switch {
		case errors.Is(err, status.ErrCorrupt):
			got = "corrupt"
		case err != nil:
			t.Fatalf("step %d: watch error %v", i, err)
		case e.Removed:
			got = "removed"
		default:
			got = string(rune('0' + e.Value.Count))
		}
		if e.Path != p {
			t.Errorf("step %d: entry path %q, want %q", i, e.Path, p)
		}
		if got == "corrupt" && i > 0 && steps[i-1].want == "corrupt" {
			continue // a writer that is not atomic may show two corrupt states
		}
		if i == len(steps) {
			t.Fatalf("after the last step the watch reported %s", got)
		}
		if got != steps[i].want {
			t.Fatalf("step %d: watch reported %s, want %s", i, got, steps[i].want)
		}
		steps[i].then()
		i++
	}
	if i != len(steps) {
		t.Fatalf("the watch ended after %d of %d steps", i, len(steps))
	}
}

// A watch of a missing document yields nothing for it (not Removed), then
// its creation, whether that comes before or after the watch's first read.
func testWatchMissing(t *testing.T, h Harness) {
	p := h.Path(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	created := make(chan error, 1)
	go func() {
		// Not ctx: the watch may report the write, and end, before
		// Mutate returns.
		_, err := h.store(p).Mutate(context.Background(), func(d *Doc) error { d.Count = 1; return nil })
		created <- err
	}()
	var got []string
	for e, err := range h.store(p).Watch(ctx) {
		switch {
		case err != nil:
			got = append(got, "error: "+err.Error())
		case e.Removed:
			got = append(got, "removed")
		default:
			got = append(got, string(rune('0'+e.Value.Count)))
		}
		cancel()
	}
	if err := <-created; err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"1"}, got); diff != "" {
		t.Errorf("watch of a document created meanwhile (-want +got):\n%s", diff)
	}
}
