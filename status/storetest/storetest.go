// Package storetest is the contract suite every status.Backend must pass.
// A backend's tests call Run with a Harness that knows how to make fresh
// document names and how to read and write raw stored bytes behind the
// Store's back:
//
//	func TestContract(t *testing.T) {
//		storetest.Run(t, storetest.Harness{
//			Path:     func(t *testing.T) string { return filepath.Join(t.TempDir(), "status.json") },
//			WriteRaw: ..., ReadRaw: ...,
//		})
//	}
//
// The suite checks Store-level semantics (decoding, corruption, fn errors
// and panics, the goroutine fn runs on and runtime.Goexit in fn, no-change
// detection, unknown fields, context handling), mutual exclusion between
// Stores sharing one document, Remove and Watch (see status.RemoveBackend
// and status.WatchBackend), and transactions
// over several documents (status.MutateAll and status.LoadAll: all or
// nothing, serialised with Mutate, read together). It does not check
// cross-process exclusion or durability, which depend on the backend.
package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/internal/goid"
	"github.com/google/go-cmp/cmp"
)

// A Harness connects the suite to one backend.
type Harness struct {
	// Path returns a fresh, unused document path (name) for one subtest.
	Path func(t *testing.T) string
	// Options are passed to every status.NewStore call (e.g. status.WithBackend(...)).
	Options []status.Option
	// WriteRaw stores raw bytes as the document at path, bypassing the Store
	// (corrupt-input and unknown-field cases). ReadRaw returns the raw stored
	// bytes (nil, false if absent).
	WriteRaw func(t *testing.T, path string, data []byte)
	ReadRaw  func(t *testing.T, path string) ([]byte, bool)
}

// Doc is the document type the suite stores. Its fields cover a counter,
// a string, an omitempty field and a nested list.
type Doc struct {
	Count int      `json:"count"`
	Name  string   `json:"name"`
	Note  string   `json:"note,omitempty"`
	Seen  []string `json:"seen,omitempty"`
}

// Run runs the contract suite as subtests of t.
func Run(t *testing.T, h Harness) {
	t.Helper()
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, Harness)
	}{
		{"MissingIsZero", testMissingIsZero},
		{"RoundTrip", testRoundTrip},
		{"FnError", testFnError},
		{"FnPanic", testFnPanic},
		{"Corrupt", testCorrupt},
		{"NoChangeNoWrite", testNoChange},
		{"UnknownFieldsPreserved", testUnknownFields},
		{"ClearOmitempty", testClearOmitempty},
		{"CancelledContext", testCancelled},
		{"ConcurrentIncrements", testConcurrentIncrements},
		{"FnOnCallersGoroutine", testFnOnCallersGoroutine},
		{"FnGoexitEndsOnlyItsCaller", testFnGoexit},
		{"SeesPredecessors", testSeesPredecessors},
		{"ReturnedEqualsLoad", testReturnedEqualsLoad},
		{"TxAllOrNothing", testTxAllOrNothing},
		{"TxFnErrorWritesNothing", testTxFnError},
		{"TxCorrupt", testTxCorrupt},
		{"TxUnknownFields", testTxUnknownFields},
		{"TxRefusesBadDocuments", testTxRefuses},
		{"TxCancelledContext", testTxCancelled},
		{"TxConcurrentWithMutate", testTxConcurrent},
		{"TxLoadAllConsistent", testTxLoadAll},
		{"Remove", testRemove},
		{"RemoveCorrupt", testRemoveCorrupt},
		{"RemoveAmongMutates", testRemoveAmongMutates},
		{"Watch", testWatch},
		{"WatchMissing", testWatchMissing},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, h) })
	}
}

func (h Harness) store(path string) *status.Store[Doc] {
	return status.NewStore[Doc](path, h.Options...)
}

func (h Harness) mustRaw(t *testing.T, path string) []byte {
	t.Helper()
	b, ok := h.ReadRaw(t, path)
	if !ok {
		t.Fatalf("document %s is absent, want present", path)
	}
	return b
}

func testMissingIsZero(t *testing.T, h Harness) {
	p := h.Path(t)
	got, err := h.store(p).Load(context.Background())
	if err != nil {
		t.Fatalf("Load of a missing document: %v", err)
	}
	if diff := cmp.Diff(Doc{}, got); diff != "" {
		t.Errorf("Load of a missing document (-want +got):\n%s", diff)
	}
	// fn sees the zero value too, and a no-op creates nothing.
	_, err = h.store(p).Mutate(context.Background(), func(d *Doc) error {
		if diff := cmp.Diff(Doc{}, *d); diff != "" {
			t.Errorf("fn saw (-want +got):\n%s", diff)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("no-op Mutate: %v", err)
	}
	if b, ok := h.ReadRaw(t, p); ok {
		t.Errorf("no-op Mutate of a missing document created it: %q", b)
	}
}

func testRoundTrip(t *testing.T, h Harness) {
	p := h.Path(t)
	want := Doc{Count: 3, Name: "a & <b>", Note: "n", Seen: []string{"x", "y"}}
	got, err := h.store(p).Mutate(context.Background(), func(d *Doc) error {
		*d = want
		return nil
	})
	if err != nil {
		t.Fatalf("Mutate: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Mutate returned (-want +got):\n%s", diff)
	}
	loaded, err := h.store(p).Load(context.Background())
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if diff := cmp.Diff(want, loaded); diff != "" {
		t.Errorf("Load after Mutate (-want +got):\n%s", diff)
	}
	var raw Doc
	if err := json.Unmarshal(h.mustRaw(t, p), &raw); err != nil {
		t.Fatalf("stored bytes are not JSON: %v", err)
	}
	if diff := cmp.Diff(want, raw); diff != "" {
		t.Errorf("stored document (-want +got):\n%s", diff)
	}
}

func testFnError(t *testing.T, h Harness) {
	p := h.Path(t)
	seed := []byte(`{"count": 1, "name": "seed"}`)
	h.WriteRaw(t, p, seed)
	errBoom := errors.New("boom")
	_, err := h.store(p).Mutate(context.Background(), func(d *Doc) error {
		d.Count = 99
		return fmt.Errorf("fn: %w", errBoom)
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("Mutate error = %v, want one wrapping the fn error", err)
	}
	if got := h.mustRaw(t, p); !bytes.Equal(got, seed) {
		t.Errorf("fn error: stored bytes changed to %q", got)
	}
}

func testFnPanic(t *testing.T, h Harness) {
	p := h.Path(t)
	seed := []byte(`{"count": 1, "name": "seed"}`)
	h.WriteRaw(t, p, seed)
	type marker struct{ s string }
	func() {
		defer func() {
			if v := recover(); v != (marker{"fn"}) {
				t.Errorf("recovered %v, want the fn's panic value", v)
			}
		}()
		h.store(p).Mutate(context.Background(), func(d *Doc) error {
			d.Count = 99
			panic(marker{"fn"})
		})
		t.Errorf("Mutate returned; want the fn's panic to propagate")
	}()
	if got := h.mustRaw(t, p); !bytes.Equal(got, seed) {
		t.Errorf("fn panic: stored bytes changed to %q", got)
	}
	// The lock was released: the next Mutate proceeds (the test's deadline
	// would catch a hang).
	got, err := h.store(p).Mutate(context.Background(), func(d *Doc) error { d.Count++; return nil })
	if err != nil || got.Count != 2 {
		t.Errorf("Mutate after a panic = %+v, %v; want count 2", got, err)
	}
}

func testCorrupt(t *testing.T, h Harness) {
	for _, tc := range []struct {
		name   string
		data   string
		offset int64
	}{
		{"truncated", `{"count": 1, "na`, 16},
		{"empty", ``, 0},
		{"garbage", `{"count": 1} trailing`, 14},
		{"wrong type", `{"count": "seven"}`, 17},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := h.Path(t)
			h.WriteRaw(t, p, []byte(tc.data))
			called := false
			_, err := h.store(p).Mutate(context.Background(), func(d *Doc) error {
				called = true
				d.Count = 5
				return nil
			})
			var ce *status.CorruptError
			if !errors.Is(err, status.ErrCorrupt) || !errors.As(err, &ce) {
				t.Fatalf("Mutate error = %v, want a *CorruptError matching ErrCorrupt", err)
			}
			if ce.Offset != tc.offset {
				t.Errorf("CorruptError.Offset = %d, want %d (%v)", ce.Offset, tc.offset, err)
			}
			if ce.Path != p {
				t.Errorf("CorruptError.Path = %q, want %q", ce.Path, p)
			}
			if called {
				t.Errorf("fn was called on a corrupt document")
			}
			if got := h.mustRaw(t, p); string(got) != tc.data {
				t.Errorf("corrupt document was overwritten with %q", got)
			}
			if _, err := h.store(p).Load(context.Background()); !errors.Is(err, status.ErrCorrupt) {
				t.Errorf("Load error = %v, want ErrCorrupt", err)
			}
		})
	}
}

func testNoChange(t *testing.T, h Harness) {
	p := h.Path(t)
	// Formatted the way another program might: compact, different order.
	seed := []byte(`{"name":"x","count":4}`)
	h.WriteRaw(t, p, seed)
	got, err := h.store(p).Mutate(context.Background(), func(d *Doc) error {
		d.Count = 4 // same value
		return nil
	})
	if err != nil {
		t.Fatalf("Mutate: %v", err)
	}
	if diff := cmp.Diff(Doc{Count: 4, Name: "x"}, got); diff != "" {
		t.Errorf("Mutate returned (-want +got):\n%s", diff)
	}
	if b := h.mustRaw(t, p); !bytes.Equal(b, seed) {
		t.Errorf("no-change Mutate rewrote the document: %q", b)
	}
}

func testUnknownFields(t *testing.T, h Harness) {
	p := h.Path(t)
	extra := map[string]string{
		"owner":   `{"id":7, "tags":["a","b"],"deep":{"x":null}}`,
		"ratio":   `1.50e3`,
		"z_last":  `"kept \u00e9 <&>"`,
		"flagged": `true`,
	}
	seed := `{"count":1,"owner":` + extra["owner"] + `,"name":"n","ratio":` + extra["ratio"] +
		`,"z_last":` + extra["z_last"] + `,"flagged":` + extra["flagged"] + `}`
	h.WriteRaw(t, p, []byte(seed))
	for i := range 3 {
		got, err := h.store(p).Mutate(context.Background(), func(d *Doc) error {
			d.Count++
			d.Seen = append(d.Seen, fmt.Sprint(i))
			return nil
		})
		if err != nil {
			t.Fatalf("Mutate %d: %v", i, err)
		}
		if got.Count != 2+i {
			t.Fatalf("Mutate %d: count %d, want %d", i, got.Count, 2+i)
		}
		var members map[string]json.RawMessage
		if err := json.Unmarshal(h.mustRaw(t, p), &members); err != nil {
			t.Fatalf("stored document after Mutate %d is not JSON: %v", i, err)
		}
		for k, want := range extra {
			if got := string(members[k]); got != want {
				t.Errorf("after Mutate %d: field %q = %s, want %s byte for byte", i, k, got, want)
			}
		}
	}
}

func testClearOmitempty(t *testing.T, h Harness) {
	p := h.Path(t)
	h.WriteRaw(t, p, []byte(`{"count":1,"name":"n","note":"remove me","seen":["a"]}`))
	_, err := h.store(p).Mutate(context.Background(), func(d *Doc) error {
		d.Note = ""
		d.Seen = nil
		return nil
	})
	if err != nil {
		t.Fatalf("Mutate: %v", err)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(h.mustRaw(t, p), &members); err != nil {
		t.Fatalf("stored document is not JSON: %v", err)
	}
	for _, k := range []string{"note", "seen"} {
		if v, ok := members[k]; ok {
			t.Errorf("cleared omitempty field %q still stored as %s", k, v)
		}
	}
}

func testCancelled(t *testing.T, h Harness) {
	p := h.Path(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	_, err := h.store(p).Mutate(ctx, func(d *Doc) error {
		called = true
		d.Count = 1
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Mutate with a cancelled context: err = %v, want context.Canceled", err)
	}
	if called {
		t.Errorf("fn ran under a cancelled context")
	}
	if b, ok := h.ReadRaw(t, p); ok {
		t.Errorf("Mutate with a cancelled context wrote %q", b)
	}
}

// Goroutines (and N is small, so that slow backends finish quickly) each
// with its own Store on the same document.
const goroutines, perGoroutine = 8, 25

func testConcurrentIncrements(t *testing.T, h Harness) {
	p := h.Path(t)
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for range goroutines {
		wg.Go(func() {
			s := h.store(p)
			for range perGoroutine {
				if _, err := s.Mutate(context.Background(), func(d *Doc) error {
					d.Count++
					return nil
				}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Mutate: %v", err)
	}
	got, err := h.store(p).Load(context.Background())
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if want := goroutines * perGoroutine; got.Count != want {
		t.Errorf("count = %d after %d increments: lost %d updates", got.Count, want, want-got.Count)
	}
}

// fn runs on the goroutine that called Mutate, also when it runs in a
// batch for another caller's write (status package doc, Guarantees).
func testFnOnCallersGoroutine(t *testing.T, h Harness) {
	p := h.Path(t)
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*perGoroutine)
	for range goroutines {
		wg.Go(func() {
			s, me := h.store(p), goid.Current()
			for range perGoroutine {
				_, err := s.Mutate(context.Background(), func(d *Doc) error {
					if g := goid.Current(); g != me {
						return fmt.Errorf("fn of the caller on goroutine %s ran on goroutine %s", me, g)
					}
					d.Count++
					return nil
				})
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// A fn that calls runtime.Goexit (t.FailNow, say) ends its own caller's
// goroutine inside Mutate, and its change is dropped. The callers around
// it, batched with it or not, return: each either committed its change or
// got an error and committed nothing (the status package doc says when);
// the document stays usable.
func testFnGoexit(t *testing.T, h Harness) {
	p := h.Path(t)
	in, rel := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		_, err := h.store(p).Mutate(context.Background(), func(d *Doc) error {
			close(in)
			<-rel // the callers below queue meanwhile
			d.Count++
			return nil
		})
		first <- err
	}()
	<-in
	type outcome struct {
		err      error
		returned bool
	}
	run := func(fn func(*Doc) error) <-chan outcome {
		ch := make(chan outcome, 1)
		started := make(chan struct{})
		go func() {
			var o outcome
			defer func() { ch <- o }()
			close(started)
			_, o.err = h.store(p).Mutate(context.Background(), fn)
			o.returned = true
		}()
		<-started
		return ch
	}
	inc := func(d *Doc) error { d.Count++; return nil }
	before := []<-chan outcome{run(inc), run(inc)}
	exiter := run(func(d *Doc) error { d.Count += 1000; runtime.Goexit(); return nil })
	after := []<-chan outcome{run(inc), run(inc)}
	close(rel)
	if err := <-first; err != nil {
		t.Fatalf("first Mutate: %v", err)
	}
	if o := <-exiter; o.returned {
		t.Errorf("Mutate whose fn called runtime.Goexit returned (%v); want its goroutine ended", o.err)
	}
	want := 1
	for i, ch := range append(before, after...) {
		o := <-ch
		switch {
		case !o.returned:
			t.Errorf("caller %d: its goroutine ended inside Mutate (another caller's Goexit)", i)
		case o.err == nil:
			want++
		}
	}
	got, err := h.store(p).Mutate(context.Background(), func(d *Doc) error { d.Name = "after"; return nil })
	if err != nil {
		t.Fatalf("Mutate after a Goexit: %v", err)
	}
	if got.Count != want {
		t.Errorf("count = %d, want %d (1 + the callers that returned nil; the exiting fn's +1000 dropped)", got.Count, want)
	}
}

// Every fn sees the document its predecessor committed: each appends the
// count it saw, so the list must be 0, 1, 2, ... in order, with no gaps or
// repeats.
func testSeesPredecessors(t *testing.T, h Harness) {
	p := h.Path(t)
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			s := h.store(p)
			for range 5 {
				if _, err := s.Mutate(context.Background(), func(d *Doc) error {
					d.Seen = append(d.Seen, fmt.Sprint(d.Count))
					d.Count++
					return nil
				}); err != nil {
					t.Errorf("Mutate: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	got, err := h.store(p).Load(context.Background())
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := make([]string, goroutines*5)
	for i := range want {
		want[i] = fmt.Sprint(i)
	}
	if diff := cmp.Diff(want, got.Seen); diff != "" {
		t.Errorf("counts seen by successive fns (-want +got):\n%s", diff)
	}
}

func testReturnedEqualsLoad(t *testing.T, h Harness) {
	p := h.Path(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var last []Doc
	for i := range 4 {
		wg.Go(func() {
			d, err := h.store(p).Mutate(context.Background(), func(d *Doc) error {
				d.Count++
				d.Name = fmt.Sprint("writer ", i)
				return nil
			})
			if err != nil {
				t.Errorf("Mutate: %v", err)
				return
			}
			mu.Lock()
			last = append(last, d)
			mu.Unlock()
		})
	}
	wg.Wait()
	got, err := h.store(p).Load(context.Background())
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	// The Mutate that returned count 4 committed last; Load must equal it.
	for _, d := range last {
		if d.Count == 4 {
			if diff := cmp.Diff(d, got); diff != "" {
				t.Errorf("Load after the last Mutate (-returned +loaded):\n%s", diff)
			}
			return
		}
	}
	t.Errorf("no Mutate returned count 4; returned %+v", last)
}

// pair returns two Stores on fresh documents of one backend.
func (h Harness) pair(t *testing.T) (*status.Store[Doc], *status.Store[Doc]) {
	return h.store(h.Path(t)), h.store(h.Path(t))
}

func testTxAllOrNothing(t *testing.T, h Harness) {
	a, b := h.pair(t)
	h.WriteRaw(t, a.Name(), []byte(`{"count": 1, "name": "a"}`))
	tx, err := status.MutateAll(context.Background(), []status.AnyStore{a, b}, func(tx *status.Tx) error {
		da, err := a.In(tx)
		if err != nil {
			return err
		}
		db, err := b.In(tx)
		if err != nil {
			return err
		}
		if da.Count != 1 {
			return fmt.Errorf("fn saw count %d in a, want 1", da.Count)
		}
		da.Count++
		db.Name = "created"
		return nil
	})
	if err != nil {
		t.Fatalf("MutateAll: %v", err)
	}
	da, erra := a.In(tx)
	db, errb := b.In(tx)
	if erra != nil || errb != nil || da.Count != 2 || db.Name != "created" {
		t.Errorf("returned Tx holds %+v, %v and %+v, %v", *da, erra, *db, errb)
	}
	ga, _ := a.Load(context.Background())
	gb, _ := b.Load(context.Background())
	if diff := cmp.Diff([]Doc{{Count: 2, Name: "a"}, {Name: "created"}}, []Doc{ga, gb}); diff != "" {
		t.Errorf("documents after MutateAll (-want +got):\n%s", diff)
	}

	// The same through MutateAll2, which returns the documents committed.
	ra, rb, err := status.MutateAll2(context.Background(), a, b, func(da, db *Doc) error {
		da.Count++
		db.Name = "again"
		return nil
	})
	if err != nil || ra.Count != 3 || rb.Name != "again" {
		t.Errorf("MutateAll2 returned %+v, %+v, %v", ra, rb, err)
	}
}

func testTxFnError(t *testing.T, h Harness) {
	a, b := h.pair(t)
	seed := []byte(`{"count": 1, "name": "seed"}`)
	h.WriteRaw(t, a.Name(), seed)
	errBoom := errors.New("boom")
	_, _, err := status.MutateAll2(context.Background(), a, b, func(da, db *Doc) error {
		da.Count = 99
		db.Count = 99
		return fmt.Errorf("fn: %w", errBoom)
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("MutateAll error = %v, want one wrapping the fn error", err)
	}
	if got := h.mustRaw(t, a.Name()); !bytes.Equal(got, seed) {
		t.Errorf("fn error: a changed to %q", got)
	}
	if got, ok := h.ReadRaw(t, b.Name()); ok {
		t.Errorf("fn error: b created as %q", got)
	}
}

func testTxCorrupt(t *testing.T, h Harness) {
	a, b := h.pair(t)
	h.WriteRaw(t, a.Name(), []byte(`{"count": 1}`))
	h.WriteRaw(t, b.Name(), []byte(`{"count": `))
	called := false
	_, err := status.MutateAll(context.Background(), []status.AnyStore{a, b}, func(tx *status.Tx) error {
		called = true
		return nil
	})
	if !errors.Is(err, status.ErrCorrupt) || called {
		t.Fatalf("MutateAll over a corrupt document: %v (fn called: %v); want ErrCorrupt, fn not called", err, called)
	}
	if got := h.mustRaw(t, a.Name()); string(got) != `{"count": 1}` {
		t.Errorf("a changed to %q", got)
	}
}

func testTxUnknownFields(t *testing.T, h Harness) {
	a, b := h.pair(t)
	h.WriteRaw(t, a.Name(), []byte(`{"count":1,"owner":{"id":7, "tags":["x"]},"ratio":1.50e3}`))
	if _, _, err := status.MutateAll2(context.Background(), a, b, func(da, db *Doc) error {
		da.Count++
		db.Count++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(h.mustRaw(t, a.Name()), &members); err != nil {
		t.Fatal(err)
	}
	if string(members["owner"]) != `{"id":7, "tags":["x"]}` || string(members["ratio"]) != `1.50e3` {
		t.Errorf("unknown fields not kept byte for byte: %s", h.mustRaw(t, a.Name()))
	}
}

func testTxRefuses(t *testing.T, h Harness) {
	a, b := h.pair(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		docs []status.AnyStore
		fn   func(*status.Tx) error
	}{
		{"twice", []status.AnyStore{a, b, a}, func(*status.Tx) error { return nil }},
		{"undeclared", []status.AnyStore{a}, func(tx *status.Tx) error { d, _ := b.In(tx); d.Count = 5; return nil }},
		{"nil", []status.AnyStore{a, nil}, func(*status.Tx) error { return nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := status.MutateAll(ctx, tc.docs, func(tx *status.Tx) error {
				d, err := a.In(tx)
				if err != nil {
					return err
				}
				d.Count = 5
				return tc.fn(tx)
			})
			if !errors.Is(err, os.ErrInvalid) {
				t.Fatalf("got %v, want an error matching os.ErrInvalid", err)
			}
			for _, s := range []*status.Store[Doc]{a, b} {
				if raw, ok := h.ReadRaw(t, s.Name()); ok {
					t.Fatalf("a refused transaction wrote %s: %q", s.Name(), raw)
				}
			}
		})
	}
}

func testTxCancelled(t *testing.T, h Harness) {
	a, b := h.pair(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	_, _, err := status.MutateAll2(ctx, a, b, func(da, _ *Doc) error {
		called = true
		da.Count = 1
		return nil
	})
	if !errors.Is(err, context.Canceled) || called {
		t.Fatalf("MutateAll with a cancelled context: %v (fn called: %v)", err, called)
	}
}

// Transactions over a and b, and Mutate calls on a, from several
// goroutines: nothing is lost, and each transaction counts in both.
func testTxConcurrent(t *testing.T, h Harness) {
	pa, pb := h.Path(t), h.Path(t)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			a, b := h.store(pa), h.store(pb)
			for i := range 5 {
				first, second := a, b
				if (g+i)%2 == 1 {
					first, second = b, a // the order of the documents does not matter
				}
				if _, _, err := status.MutateAll2(context.Background(), first, second, func(d1, d2 *Doc) error {
					d1.Count++
					d2.Count++
					return nil
				}); err != nil {
					t.Errorf("MutateAll: %v", err)
					return
				}
				if _, err := a.Mutate(context.Background(), func(d *Doc) error {
					d.Seen = append(d.Seen, "m")
					return nil
				}); err != nil {
					t.Errorf("Mutate: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	a, _ := h.store(pa).Load(context.Background())
	b, _ := h.store(pb).Load(context.Background())
	want := goroutines * 5
	if a.Count != want || b.Count != want || len(a.Seen) != want {
		t.Errorf("a %d, b %d, Mutates %d; want %d each", a.Count, b.Count, len(a.Seen), want)
	}
}

// LoadAll reads the two documents at one moment: while transactions
// increment both, every LoadAll sees equal counts.
func testTxLoadAll(t *testing.T, h Harness) {
	pa, pb := h.Path(t), h.Path(t)
	a, b := h.store(pa), h.store(pb)
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		defer close(done)
		for range 20 {
			if _, _, err := status.MutateAll2(context.Background(), a, b, func(da, db *Doc) error {
				da.Count++
				db.Count++
				return nil
			}); err != nil {
				t.Errorf("MutateAll: %v", err)
				return
			}
		}
	})
	for reads := 0; ; reads++ {
		select {
		case <-done:
			wg.Wait()
			return
		default:
		}
		tx, err := status.LoadAll(context.Background(), h.store(pb), h.store(pa))
		if err != nil {
			t.Fatalf("LoadAll: %v", err)
		}
		da, erra := h.store(pa).In(tx)
		db, errb := h.store(pb).In(tx)
		if erra != nil || errb != nil {
			t.Fatalf("In after LoadAll: %v, %v", erra, errb)
		}
		if da.Count != db.Count {
			t.Fatalf("LoadAll %d read a=%d and b=%d: part of a transaction", reads, da.Count, db.Count)
		}
	}
}
