package status

import (
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkHotReaders is scenario e of the peer benchmark in one process:
// 64 goroutines increment one document while 4 goroutines read it in a
// tight loop (lock-free Read). It reports the calls per write and the
// leader's time per batch, from taking the lead to handing it on.
func BenchmarkHotReaders(b *testing.B) {
	path := benchPath(b)
	var writes, writeNanos atomic.Int64
	orig := writeFile
	writeFile = func(path string, data []byte, perm os.FileMode) error {
		writes.Add(1)
		t0 := time.Now()
		defer func() { writeNanos.Add(int64(time.Since(t0))) }()
		return orig(path, data, perm)
	}
	defer func() { writeFile = orig }()
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
				if _, err := Read(path); err != nil {
					b.Error(err)
					return
				}
				reads.Add(1)
			}
		})
	}
	run64(b, func() error { return mutateIncrement(path) })
	b.StopTimer()
	close(stop)
	readers.Wait()
	b.ReportMetric(float64(b.N)/float64(writes.Load()), "calls/write")
	b.ReportMetric(float64(writeNanos.Load())/float64(writes.Load())/1e6, "ms/write")
	b.ReportMetric(float64(reads.Load())/b.Elapsed().Seconds(), "reads/s")
	checkRuns(b, path)
}
