package status_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status"
)

func TestCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	ctx := context.Background()
	st, err := status.Create(ctx, path, status.Status{State: status.Queued, Task: "fix-42"})
	if err != nil {
		t.Fatal(err)
	}
	if st.State != status.Queued || st.UpdatedAt.IsZero() || st.UpdatedAt.Location() != time.UTC {
		t.Errorf("Create returned %+v, want queued and stamped in UTC", st)
	}
	read, err := status.Load(ctx, path)
	if err != nil || read != st {
		t.Errorf("Load after Create = %+v, %v; want %+v", read, err, st)
	}
	before, _ := os.ReadFile(path)

	_, err = status.Create(ctx, path, status.Status{State: status.Running})
	if !errors.Is(err, os.ErrExist) {
		t.Fatalf("second Create: err = %v, want os.ErrExist", err)
	}
	if want := "status: create " + path + ": "; !strings.HasPrefix(err.Error(), want) || strings.Count(err.Error(), path) != 1 {
		t.Errorf("error %q should start with %q and name the path once", err, want)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Errorf("a refused Create changed the document:\n%s", after)
	}
}

// A document that exists is never replaced, even when it cannot be
// decoded: it is still someone's document.
func TestCreateKeepsAnyExistingFile(t *testing.T) {
	for _, content := range []string{"", "{", `{"status":"running"}`} {
		path := filepath.Join(t.TempDir(), "status.json")
		if err := fs.WriteAtomic(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := status.Create(context.Background(), path, status.Status{State: status.Queued})
		if !errors.Is(err, os.ErrExist) {
			t.Errorf("Create over %q: err = %v, want os.ErrExist", content, err)
		}
		if got, _ := os.ReadFile(path); string(got) != content {
			t.Errorf("Create over %q left %q", content, got)
		}
	}
}

func TestCreateBadContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	if _, err := status.NewStore[status.Status](path).Create(nil, status.Status{}); err == nil {
		t.Error("Create(nil ctx) succeeded")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := status.Create(ctx, path, status.Status{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Create(cancelled ctx): err = %v, want context.Canceled", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed Create left a document: %v", err)
	}
}

// createRace starts n creators of one document at once and returns how
// many succeeded. Each calls wait once, after it has looked at the file (if
// it does) and before it writes: wait returns only when all have called it,
// so every look happens before every write.
func createRace(t *testing.T, n int, create func(path string, wait func()) error) int {
	t.Helper()
	path := filepath.Join(t.TempDir(), "status.json")
	var ready sync.WaitGroup
	ready.Add(n)
	wait := func() { ready.Done(); ready.Wait() }
	errs := make([]error, n)
	var done sync.WaitGroup
	for i := range n {
		done.Add(1)
		go func() {
			defer done.Done()
			errs[i] = create(path, wait)
		}()
	}
	done.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, os.ErrExist):
			t.Errorf("create: %v", err)
		}
	}
	return ok
}

// Of several creators, exactly one succeeds. The control, a plain
// "create if missing" (look, then write), lets every creator overwrite the
// others in the same harness.
func TestCreateExactlyOne(t *testing.T) {
	const n = 8
	if ok := createRace(t, n, func(path string, wait func()) error {
		wait()
		_, err := status.Create(context.Background(), path, status.Status{State: status.Queued})
		return err
	}); ok != 1 {
		t.Errorf("status.Create: %d of %d creators succeeded, want 1", ok, n)
	}

	if ok := createRace(t, n, func(path string, wait func()) error {
		_, err := os.Stat(path)
		wait()
		if err == nil {
			return os.ErrExist
		}
		return fs.WriteAtomic(path, []byte(`{"status":"queued"}`), 0o644)
	}); ok == 1 {
		t.Errorf("control: look-then-write let only one creator succeed; the harness does not show the race")
	}
}

// stamped is a caller's own document type that opts in to stamping.
type stamped struct {
	Note      string    `json:"note"`
	UpdatedAt time.Time `json:"updated_at"`
}

func (d *stamped) Stamp(now time.Time) { d.UpdatedAt = now }

// A Store of a caller's Stamper type stamps like Store[Status]: on a
// change and on Create, never on a no-change Mutate (which writes nothing).
// The control is the same type without the method.
func TestStamperCallerType(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "doc.json")
	store := status.NewStore[stamped](path)
	created, err := store.Create(ctx, stamped{Note: "a"})
	if err != nil || created.UpdatedAt.IsZero() {
		t.Fatalf("Create = %+v, %v; want stamped", created, err)
	}
	changed, err := store.Mutate(ctx, func(d *stamped) error { d.Note = "b"; return nil })
	if err != nil || changed.UpdatedAt.Before(created.UpdatedAt) || changed.UpdatedAt.Location() != time.UTC {
		t.Fatalf("Mutate = %+v, %v; want stamped in UTC, not before %v", changed, err, created.UpdatedAt)
	}
	before, _ := os.ReadFile(path)
	same, err := store.Mutate(ctx, func(d *stamped) error { d.Note = "b"; return nil })
	if err != nil || !same.UpdatedAt.Equal(changed.UpdatedAt) {
		t.Errorf("no-change Mutate = %+v, %v; want UpdatedAt kept at %v", same, err, changed.UpdatedAt)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Errorf("no-change Mutate rewrote the file")
	}

	type unstamped struct {
		Note      string    `json:"note"`
		UpdatedAt time.Time `json:"updated_at"`
	}
	plain, err := status.NewStore[unstamped](path).Mutate(ctx, func(d *unstamped) error { d.Note = "c"; return nil })
	if err != nil || !plain.UpdatedAt.Equal(changed.UpdatedAt) {
		t.Errorf("control: a type without Stamp got UpdatedAt %v (err %v), want it left at %v", plain.UpdatedAt, err, changed.UpdatedAt)
	}
}

// A guard that the document must have no state yet reads properly when it
// fails.
func TestConflictWithEmptyFromState(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	ctx := context.Background()
	if _, err := status.Create(ctx, path, status.Status{State: status.Running}); err != nil {
		t.Fatal(err)
	}
	_, err := status.Mutate(ctx, path, status.Transition(status.Queued, ""))
	want := `status: cannot move from "running" to "queued" (allowed from ""): state conflict`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
}
