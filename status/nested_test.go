package status

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A call that fn makes on a document its own call holds waits for its turn,
// which comes only after fn returns: it ends when its ctx does, with ctx's
// error, having written nothing, and the outer call goes on (the package
// doc's rule on nested calls).
func TestNestedCallWaitsForItsCtx(t *testing.T) {
	dir := t.TempDir()
	reg, task := txDocs(t, dir)
	seedTx(t, reg, task)
	other := NewStore[txReg](filepath.Join(dir, "other.json"))
	for _, tc := range []struct {
		name  string
		outer func(inner func() error) error
		waits string // the document the inner call queues on
		inner func(ctx context.Context) error
	}{
		{"Mutate in Mutate", mutateAround(reg), reg.Name(), func(ctx context.Context) error {
			_, err := reg.Mutate(ctx, func(r *txReg) error { r.Active = 50; return nil })
			return err
		}},
		{"Create in Mutate", mutateAround(reg), reg.Name(), func(ctx context.Context) error {
			_, err := reg.Create(ctx, txReg{})
			return err
		}},
		{"Remove in Mutate", mutateAround(reg), reg.Name(), func(ctx context.Context) error { return reg.Remove(ctx) }},
		{"same file, another Store", mutateAround(reg), reg.Name(), func(ctx context.Context) error {
			_, err := NewStore[map[string]any](reg.Name()).Mutate(ctx, func(*map[string]any) error { return nil })
			return err
		}},
		{"MutateAll in Mutate", mutateAround(task), task.Name(), func(ctx context.Context) error {
			_, err := MutateAll(ctx, []AnyStore{reg, task}, spawn(reg, task))
			return err
		}},
		{"LoadAll in Mutate", mutateAround(task), task.Name(), func(ctx context.Context) error {
			_, err := LoadAll(ctx, other, task)
			return err
		}},
		{"Mutate in MutateAll", func(inner func() error) error {
			_, err := MutateAll(context.Background(), []AnyStore{reg, task}, func(*Tx) error { return inner() })
			return err
		}, task.Name(), func(ctx context.Context) error {
			_, err := task.Mutate(ctx, func(s *Status) error { s.Runs = 50; return nil })
			return err
		}},
		{"through a Mutate of another document", mutateAround(reg), reg.Name(), func(ctx context.Context) error {
			var nestedErr error
			_, err := other.Mutate(context.Background(), func(o *txReg) error {
				o.Active++
				_, nestedErr = reg.Mutate(ctx, func(r *txReg) error { r.Active = 50; return nil })
				return nil
			})
			return errors.Join(err, nestedErr)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var innerErr error
			err := tc.outer(func() error {
				ctx, cancel := context.WithCancel(context.Background())
				go func() { waitQueued(t, tc.waits, 1); cancel() }()
				innerErr = tc.inner(ctx)
				return nil
			})
			if err != nil {
				t.Fatalf("outer call: %v", err)
			}
			if !errors.Is(innerErr, context.Canceled) {
				t.Fatalf("nested call returned %v, want it to wait until its ctx ended", innerErr)
			}
			ctx := context.Background()
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

// So does a nested call through another spelling of the path (a linked
// directory).
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
