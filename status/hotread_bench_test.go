//go:build unix

package status

import (
	"context"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// BenchmarkHotReaders is scenarios e and f of the peer benchmark in one
// process: 64 goroutines increment one document while 4 goroutines read it
// (Read) in a tight loop (spin) or pausing 1 ms between reads (pause1ms).
// It reports the calls per write, the mean time of a write and the reads
// per second.
func BenchmarkHotReaders(b *testing.B) {
	b.Run("spin", func(b *testing.B) { hotReaders(b, 0) })
	b.Run("pause1ms", func(b *testing.B) { hotReaders(b, time.Millisecond) })
}

func hotReaders(b *testing.B, pause time.Duration) {
	path := benchPath(b)
	reportWrites := timeWrites(b)
	stop := make(chan struct{})
	var readers sync.WaitGroup
	var reads atomic.Int64
	for range 4 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := Load(context.Background(), path); err != nil {
					b.Error(err)
					return
				}
				reads.Add(1)
				if pause > 0 {
					time.Sleep(pause)
				}
			}
		})
	}
	run64(b, func() error { return mutateIncrement(path) })
	b.StopTimer()
	close(stop)
	readers.Wait()
	reportWrites()
	b.ReportMetric(float64(reads.Load())/b.Elapsed().Seconds(), "reads/s")
	checkRuns(b, path)
}

// BenchmarkOwnDocs64Interleaved is scenario c of the peer benchmark in
// one process: 64 goroutines, each incrementing a document of its own, in
// alternating bursts of the per-call baseline and of Mutate (one
// iteration: 8 calls per goroutine of each), so that drift of the shared
// disk hits both alike. It reports both throughputs, their ratio and each
// one's CPU time (user + system) per call.
func BenchmarkOwnDocs64Interleaved(b *testing.B) {
	const n, perG = 64, 8
	var bpaths, mpaths [n]string
	for i := range n {
		bpaths[i], mpaths[i] = benchPath(b), benchPath(b)
	}
	var locks sync.Map
	var tBase, tMutate, cBase, cMutate time.Duration
	each := func(op func(g int) error) (wall, cpu time.Duration) {
		c0, t0 := cpuTime(), time.Now()
		var wg sync.WaitGroup
		for g := range n {
			wg.Go(func() {
				for range perG {
					if err := op(g); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		return time.Since(t0), cpuTime() - c0
	}
	rounds := 0
	for b.Loop() {
		w, c := each(func(g int) error { return baselineIncrement(&locks, bpaths[g]) })
		tBase, cBase = tBase+w, cBase+c
		w, c = each(func(g int) error { return mutateIncrement(mpaths[g]) })
		tMutate, cMutate = tMutate+w, cMutate+c
		rounds++
	}
	calls := float64(rounds * n * perG)
	b.ReportMetric(calls/tBase.Seconds(), "baseline-ops/s")
	b.ReportMetric(calls/tMutate.Seconds(), "mutate-ops/s")
	b.ReportMetric(tBase.Seconds()/tMutate.Seconds(), "ratio")
	b.ReportMetric(float64(cBase.Microseconds())/calls, "baseline-cpu-µs/op")
	b.ReportMetric(float64(cMutate.Microseconds())/calls, "mutate-cpu-µs/op")
}

// cpuTime is the process's user + system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
