package status

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// runN runs b.N calls of op spread over n goroutines.
func runN(b *testing.B, n int, op func() error) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	for range n {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if err := op(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkEngine measures Mutate on one document from 1 and 16 goroutines,
// and MutateAll of two documents (a registry and a task, as the services
// lay them out) from 1 and 16 goroutines, next to MutateAll2 of the same
// documents.
func BenchmarkEngine(b *testing.B) {
	for _, g := range []int{1, 16} {
		b.Run("Mutate/g="+itoa(g), func(b *testing.B) {
			path := benchPath(b)
			runN(b, g, func() error { return mutateIncrement(path) })
		})
	}
	for _, g := range []int{1, 16} {
		b.Run("MutateAll/g="+itoa(g), func(b *testing.B) {
			dir := b.TempDir()
			reg := NewStore[txReg](filepath.Join(dir, "registry.json"))
			task := NewStore[Status](filepath.Join(dir, "status.json"))
			ctx := context.Background()
			runN(b, g, func() error {
				_, err := MutateAll(ctx, []AnyStore{reg, task}, func(tx *Tx) error {
					r, err := reg.In(tx)
					if err != nil {
						return err
					}
					t, err := task.In(tx)
					if err != nil {
						return err
					}
					r.Active++
					t.Runs++
					return nil
				})
				return err
			})
		})
		b.Run("MutateAll2/g="+itoa(g), func(b *testing.B) {
			dir := b.TempDir()
			reg := NewStore[txReg](filepath.Join(dir, "registry.json"))
			task := NewStore[Status](filepath.Join(dir, "status.json"))
			ctx := context.Background()
			runN(b, g, func() error {
				_, _, err := MutateAll2(ctx, reg, task, func(r *txReg, t *Status) error {
					r.Active++
					t.Runs++
					return nil
				})
				return err
			})
		})
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// BenchmarkJoin is BenchmarkEngine with and without the joining of
// transactions queued behind a transaction's turns (see joins), alternated.
func BenchmarkJoin(b *testing.B) {
	for _, on := range []bool{true, false} {
		b.Run("join="+map[bool]string{true: "on", false: "off"}[on], func(b *testing.B) {
			old := joinTxs
			joinTxs = on
			defer func() { joinTxs = old }()
			BenchmarkEngine(b)
		})
	}
}
