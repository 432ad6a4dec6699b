//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package status_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentstate/core/status"
)

// cpBaselineMu is the baseline's per-path mutex: a bench child has one path.
var cpBaselineMu sync.Mutex

// cpBaselineIncrement is the per-call baseline: in-process mutex, then an
// exclusive flock on the same sidecar status uses, then read, change and
// one fs.WriteAtomic — every call pays its own durable write (no group
// commit). It follows the same protocol, so it could run next to Mutate.
func cpBaselineIncrement(path string) error {
	cpBaselineMu.Lock()
	defer cpBaselineMu.Unlock()
	f, err := os.OpenFile(path+status.LockSuffix, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	return cpBareIncrement(path)
}

// The bench child runs a.Iterations increments spread over a.Goroutines
// goroutines, timing each call, and reports every latency.
var _ = cpRegister("bench", func(a cpArgs, w *cpReporter) error {
	inc := func() error { return cpIncrement("mutate", a.Path) }
	if a.Writer == "baseline" {
		inc = func() error { return cpBaselineIncrement(a.Path) }
	}
	lat := make([][]time.Duration, a.Goroutines)
	errs := make([]error, a.Goroutines)
	if err := cpGate(w); err != nil {
		return err
	}
	start := time.Now()
	var wg sync.WaitGroup
	for g := range a.Goroutines {
		n := a.Iterations / a.Goroutines
		if g < a.Iterations%a.Goroutines {
			n++
		}
		wg.Go(func() {
			lat[g] = make([]time.Duration, 0, n)
			for range n {
				start := time.Now()
				if err := inc(); err != nil {
					errs[g] = err
					return
				}
				lat[g] = append(lat[g], time.Since(start))
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return w.json("result", cpBenchResult{Lat: slices.Concat(lat...), Elapsed: time.Since(start)})
})

// cpBenchResult is a bench child's report.
type cpBenchResult struct {
	Lat     []time.Duration // one per call
	Elapsed time.Duration   // from the start gate to the child's last call
}

// BenchmarkCrossproc4x16 runs b.N increments of one document from 4
// processes × 16 goroutines (re-executed test binaries, started before the
// timer and released together). ns/op is wall time per increment across the
// whole fleet; ops/s is its inverse; p50-ms and p99-ms are percentiles of
// one call's latency; first/last-done divides the time the first process
// finished its share by the time the last one did (1 = perfectly fair). "mutate" is status.Mutate; "baseline" is the per-call
// mutex + flock + WriteAtomic pattern under the same load. Allocation
// figures count only the parent, not the children.
func BenchmarkCrossproc4x16(b *testing.B) {
	for _, writer := range []string{"mutate", "baseline"} {
		b.Run(writer, func(b *testing.B) { cpBench(b, writer, 4, 16) })
	}
}

func cpBench(b *testing.B, writer string, procs, goroutines int) {
	path := cpSeed(b)
	var children []*cpChild
	for p := range procs {
		n := b.N / procs
		if p < b.N%procs {
			n++
		}
		children = append(children, cpStartGo(b, fmt.Sprintf("bench child %d", p), "bench",
			cpArgs{Path: path, Writer: writer, Goroutines: goroutines, Iterations: n}))
	}
	for _, c := range children {
		c.expect(b, "ready")
	}
	b.ResetTimer()
	start := time.Now()
	for _, c := range children {
		if _, err := io.WriteString(c.stdin, "go\n"); err != nil {
			b.Fatal(err)
		}
	}
	var all []time.Duration
	var first, last time.Duration
	for i, c := range children {
		var res cpBenchResult
		c.expectJSON(b, "result", &res)
		all = append(all, res.Lat...)
		if i == 0 || res.Elapsed < first {
			first = res.Elapsed
		}
		last = max(last, res.Elapsed)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	for _, c := range children {
		c.mustExit(b)
	}
	s, err := status.Load(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	if s.Runs != b.N || len(all) != b.N {
		b.Fatalf("%s: runs %d, %d latencies, want %d", writer, s.Runs, len(all), b.N)
	}
	slices.Sort(all)
	ms := func(q int) float64 { return float64(all[len(all)*q/100]) / float64(time.Millisecond) }
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "ops/s")
	b.ReportMetric(ms(50), "p50-ms")
	b.ReportMetric(ms(99), "p99-ms")
	// Equal shares of work: with a fair lock every process finishes at
	// about the same time (spread ≈ 1); a process that keeps winning the
	// lock finishes early.
	b.ReportMetric(float64(first)/float64(last), "first/last-done")
}
