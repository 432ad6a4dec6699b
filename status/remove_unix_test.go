//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package status

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestRemove(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "status.json")
	if _, err := Mutate(ctx, path, func(s *Status) error { s.Runs = 1; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := Remove(ctx, path); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{path, path + LockSuffix} {
		if _, err := os.Lstat(name); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still exists after Remove (%v)", name, err)
		}
	}
	if err := Remove(ctx, path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("second Remove = %v, want os.ErrNotExist", err)
	}
	if st, err := Load(ctx, path); err != nil || st.Runs != 0 {
		t.Errorf("Load after Remove = %+v, %v; want the zero Status", st, err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := Remove(cancelled, path); !errors.Is(err, context.Canceled) {
		t.Errorf("Remove with a cancelled context = %v", err)
	}
}

// Remove takes its turn under the lock: it waits for the holder, and a
// Mutate queued after it finds no document and starts from zero. (A Remove
// that did not wait would have removed the document under the holder's
// feet; one that ran after the Mutate would leave no document.)
func TestRemoveTakesItsTurn(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "status.json")
	if _, err := Mutate(ctx, path, func(s *Status) error { s.Runs = 5; return nil }); err != nil {
		t.Fatal(err)
	}
	release := holdLock(t, path)
	removed := make(chan error, 1)
	go func() { removed <- Remove(ctx, path) }()
	waitQueue(t, path, 1)
	mutated := make(chan error, 1)
	var after Status
	go func() {
		var err error
		after, err = Mutate(ctx, path, func(s *Status) error { s.Runs++; return nil })
		mutated <- err
	}()
	waitQueue(t, path, 2)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the document went away while another process held the lock: %v", err)
	}
	release()
	if err := <-removed; err != nil {
		t.Fatal(err)
	}
	if err := <-mutated; err != nil || after.Runs != 1 {
		t.Fatalf("Mutate after Remove = runs %d, %v; want 1 (a new document)", after.Runs, err)
	}
}
