//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package status_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentstate/core/status"
)

// Transactions against what they replace, in one run: a two-document
// MutateAll, two sequential Mutate calls (the same change without
// atomicity), and one Mutate (the floor), each counting in both documents
// (one Mutate: in one). With 1 and 16 goroutines of this process on the
// same two documents, and across processes. Run under strace -c to count
// the syncs per operation (see docs/BENCHMARKS.md).

type benchKind struct {
	name string
	op   func(ctx context.Context, a, b *status.Store[status.Status]) error
}

var benchKinds = []benchKind{
	{"one-mutate", func(ctx context.Context, a, _ *status.Store[status.Status]) error {
		_, err := a.Mutate(ctx, func(s *status.Status) error { s.Runs++; return nil })
		return err
	}},
	{"two-mutates", func(ctx context.Context, a, b *status.Store[status.Status]) error {
		if _, err := a.Mutate(ctx, func(s *status.Status) error { s.Runs++; return nil }); err != nil {
			return err
		}
		_, err := b.Mutate(ctx, func(s *status.Status) error { s.Runs++; return nil })
		return err
	}},
	{"tx", func(ctx context.Context, a, b *status.Store[status.Status]) error {
		_, _, err := status.MutateAll2(ctx, a, b, func(da, db *status.Status) error {
			da.Runs++
			db.Runs++
			return nil
		})
		return err
	}},
}

func benchPair(dir string) (*status.Store[status.Status], *status.Store[status.Status]) {
	return status.NewStore[status.Status](filepath.Join(dir, "registry.json")), status.NewStore[status.Status](filepath.Join(dir, "status.json"))
}

func BenchmarkTx(b *testing.B) {
	for _, g := range []int{1, 16} {
		for _, k := range benchKinds {
			b.Run(fmt.Sprintf("g=%d/%s", g, k.name), func(b *testing.B) {
				a, c := benchPair(b.TempDir())
				ctx := context.Background()
				if err := k.op(ctx, a, c); err != nil { // files exist before the timer
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				var wg sync.WaitGroup
				for w := range g {
					n := b.N / g
					if w < b.N%g {
						n++
					}
					wg.Go(func() {
						for range n {
							if err := k.op(ctx, a, c); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
			})
		}
	}
}

// The txbench child runs a.Iterations operations of kind a.Writer over the
// pair in a.Path, spread over a.Goroutines goroutines.
var _ = cpRegister("txbench", func(a cpArgs, w *cpReporter) error {
	var op func(ctx context.Context, x, y *status.Store[status.Status]) error
	for _, k := range benchKinds {
		if k.name == a.Writer {
			op = k.op
		}
	}
	x, y := benchPair(a.Path)
	if err := cpGate(w); err != nil {
		return err
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, a.Goroutines)
	for g := range a.Goroutines {
		n := a.Iterations / a.Goroutines
		if g < a.Iterations%a.Goroutines {
			n++
		}
		wg.Go(func() {
			for range n {
				if err := op(context.Background(), x, y); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	return w.json("result", cpBenchResult{Elapsed: time.Since(start)})
})

// BenchmarkCrossprocTx runs b.N operations over one pair of documents from
// 4 processes of 1 and of 4 goroutines (re-executed test binaries,
// started before the timer and released together); ns/op is wall time per
// operation across the fleet.
func BenchmarkCrossprocTx(b *testing.B) {
	for _, g := range []int{1, 4} {
		for _, k := range benchKinds {
			b.Run(fmt.Sprintf("4x%d/%s", g, k.name), func(b *testing.B) {
				dir := b.TempDir()
				x, y := benchPair(dir)
				if err := k.op(context.Background(), x, y); err != nil {
					b.Fatal(err)
				}
				var children []*cpChild
				for p := range 4 {
					n := b.N / 4
					if p < b.N%4 {
						n++
					}
					children = append(children, cpStartGo(b, fmt.Sprintf("txbench %d", p), "txbench",
						cpArgs{Path: dir, Writer: k.name, Goroutines: g, Iterations: n}))
				}
				for _, c := range children {
					c.expect(b, "ready")
				}
				b.ResetTimer()
				for _, c := range children {
					if _, err := io.WriteString(c.stdin, "go\n"); err != nil {
						b.Fatal(err)
					}
				}
				for _, c := range children {
					var res cpBenchResult
					c.expectJSON(b, "result", &res)
				}
				b.StopTimer()
				for _, c := range children {
					c.mustExit(b)
				}
				if s, err := x.Load(context.Background()); err != nil || s.Runs != b.N+1 {
					b.Fatalf("runs %d (%v), want %d", s.Runs, err, b.N+1)
				}
			})
		}
	}
}
