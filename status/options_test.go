package status

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentstate/core/fs"
)

// queueBehind runs first and then second as calls queued, in that order,
// behind a call that holds path's turn, so that they go to the same batch
// unless their options keep them apart. It returns their errors.
func queueBehind(t *testing.T, path string, first, second func() error) (error, error) {
	t.Helper()
	ctx := context.Background()
	inside, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		Mutate(ctx, path, func(*Status) error { close(inside); <-release; return errors.New("writes nothing") })
	})
	<-inside
	var err1, err2 error
	wg.Go(func() { err1 = first() })
	waitQueued(t, path, 1)
	wg.Go(func() { err2 = second() })
	waitQueued(t, path, 2)
	close(release)
	wg.Wait()
	return err1, err2
}

// A call's WithMaxSize applies to that call, also when it is queued behind
// a call with a larger limit: calls batch only with calls of the same
// options.
func TestMaxSizeIsPerCall(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	ctx := context.Background()
	if _, err := Mutate(ctx, path, func(s *Status) error { s.Note = strings.Repeat("x", 4096); return nil }); err != nil {
		t.Fatal(err)
	}
	loose, strict := NewStore[Status](path), NewStore[Status](path, WithMaxSize(1024))
	_, err := queueBehind(t, path,
		func() error { _, err := loose.Mutate(ctx, func(s *Status) error { s.Runs++; return nil }); return err },
		func() error { _, err := strict.Mutate(ctx, func(s *Status) error { s.Runs++; return nil }); return err })
	if !errors.Is(err, fs.ErrTooLarge) {
		t.Fatalf("the call with a 1 KiB limit on a 4 KiB document returned %v, want fs.ErrTooLarge", err)
	}
	if got, _ := loose.Load(ctx); got.Runs != 1 {
		t.Fatalf("runs %d, want 1 (the call with the larger limit only)", got.Runs)
	}
}

// A call's WithPerm applies to the file it creates, also when it is queued
// behind a call with other bits.
func TestPermIsPerCall(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	ctx := context.Background()
	open, private := NewStore[Status](path), NewStore[Status](path, WithPerm(0o600))
	errFail := errors.New("fails")
	err1, err2 := queueBehind(t, path,
		func() error { _, err := open.Mutate(ctx, func(*Status) error { return errFail }); return err },
		func() error {
			_, err := private.Mutate(ctx, func(s *Status) error { s.Runs++; return nil })
			return err
		})
	if !errors.Is(err1, errFail) || err2 != nil {
		t.Fatalf("errors %v, %v", err1, err2)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("the file created by the WithPerm(0o600) call has mode %v", fi.Mode().Perm())
	}
}
