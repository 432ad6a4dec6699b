package status

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestNestedMutateIsAnError(t *testing.T) {
	dir := t.TempDir()
	reg, task := txDocs(t, dir)
	seedTx(t, reg, task)
	ctx := context.Background()
	other := NewStore[txReg](filepath.Join(dir, "other.json"))
	for _, tc := range []struct {
		name  string
		outer func(inner func() error) error
		inner func() error
	}{
		{"Mutate in Mutate", mutateAround(reg), func() error {
			_, err := reg.Mutate(ctx, func(r *txReg) error { r.Active = 50; return nil })
			return err
		}},
		{"Create in Mutate", mutateAround(reg), func() error {
			_, err := reg.Create(ctx, txReg{})
			return err
		}},
		{"Remove in Mutate", mutateAround(reg), func() error { return reg.Remove(ctx) }},
		{"same file, another Store", mutateAround(reg), func() error {
			_, err := NewStore[map[string]any](reg.Name()).Mutate(ctx, func(*map[string]any) error { return nil })
			return err
		}},
		{"MutateAll in Mutate", mutateAround(task), func() error {
			_, err := MutateAll(ctx, []Doc{reg, task}, spawn(reg, task))
			return err
		}},
		{"LoadAll in Mutate", mutateAround(task), func() error {
			_, err := LoadAll(ctx, other, task)
			return err
		}},
		{"Mutate in MutateAll", func(inner func() error) error {
			_, err := MutateAll(ctx, []Doc{reg, task}, func(*Tx) error { return inner() })
			return err
		}, func() error {
			_, err := task.Mutate(ctx, func(s *Status) error { s.Runs = 50; return nil })
			return err
		}},
		{"through a Mutate of another document", mutateAround(reg), func() error {
			var nestedErr error
			_, err := other.Mutate(ctx, func(o *txReg) error {
				o.Active++
				_, nestedErr = reg.Mutate(ctx, func(r *txReg) error { r.Active = 50; return nil })
				return nil
			})
			return errors.Join(err, nestedErr)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var innerErr error
			err := tc.outer(func() error { innerErr = tc.inner(); return nil })
			if err != nil {
				t.Fatalf("outer call: %v", err)
			}
			if !errors.Is(innerErr, ErrNested) {
				t.Fatalf("nested call returned %v, want ErrNested", innerErr)
			}
			if got, _ := reg.Load(ctx); got.Active == 50 {
				t.Fatal("the nested call wrote")
			}
			if got, _ := task.Load(ctx); got.Runs == 50 {
				t.Fatal("the nested call wrote")
			}
		})
	}
}

// mutateAround runs inner inside a Mutate of s that changes s.
func mutateAround[T any](s *Store[T]) func(inner func() error) error {
	return func(inner func() error) error {
		_, err := s.Mutate(context.Background(), func(*T) error { return inner() })
		return err
	}
}

// A nested call made by the function of a batch member (run in its own
// goroutine while another caller leads) is found as well.
func TestNestedInBatchMember(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	ctx := context.Background()
	inside, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		Mutate(ctx, path, func(s *Status) error { close(inside); <-release; return nil })
	})
	<-inside
	var nestedErr error
	wg.Go(func() {
		Mutate(ctx, path, func(s *Status) error {
			_, nestedErr = Mutate(ctx, path, func(s *Status) error { return nil })
			s.Runs++
			return nil
		})
	})
	waitQueued(t, path, 1)
	close(release)
	wg.Wait()
	if !errors.Is(nestedErr, ErrNested) {
		t.Fatalf("nested call in a batch member: %v", nestedErr)
	}
	if got, _ := Load(ctx, path); got.Runs != 1 {
		t.Fatalf("runs %d, want the member's change", got.Runs)
	}
}

// Calls from other goroutines while a function runs are not nested, even
// when they come from inside the function of a call on another document:
// they wait for their turn and succeed.
func TestNestedNoFalsePositive(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	ctx := context.Background()
	inside, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		Mutate(ctx, a, func(s *Status) error { close(inside); <-release; s.Runs++; return nil })
	})
	<-inside
	errs := make(chan error, 2)
	wg.Go(func() {
		_, err := Mutate(ctx, a, func(s *Status) error { s.Runs++; return nil })
		errs <- err
	})
	wg.Go(func() {
		_, err := Mutate(ctx, b, func(*Status) error {
			_, err := Mutate(ctx, a, func(s *Status) error { s.Runs++; return nil })
			return err
		})
		errs <- err
	})
	waitQueued(t, a, 2)
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a call from another goroutine: %v", err)
		}
	}
	if got, _ := Load(ctx, a); got.Runs != 3 {
		t.Fatalf("runs %d, want 3", got.Runs)
	}
}

// What is not found: a nested call through another spelling of the path
// whose entry differs (a linked directory) waits for the flock its own
// caller holds, until its ctx ends. The package doc says so.
func TestNestedThroughLinkedDirectoryWaits(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink(dir, filepath.Join(dir, "alias")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "status.json")
	var innerErr error
	_, err := Mutate(context.Background(), path, func(*Status) error {
		ctx, cancel := context.WithCancel(context.Background())
		go func() { waitQueued(t, filepath.Join(dir, "alias", "status.json"), 1); cancel() }()
		_, innerErr = Mutate(ctx, filepath.Join(dir, "alias", "status.json"), func(*Status) error { return nil })
		return nil
	})
	if err != nil || !errors.Is(innerErr, context.Canceled) {
		t.Fatalf("outer %v, inner %v; want the inner call to wait until its ctx ended", err, innerErr)
	}
}
