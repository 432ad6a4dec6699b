package status

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentstate/core/fs"
)

// typicalStatus is a status document as the agent services write it
// (about 400 bytes).
func typicalStatus() Status {
	t0 := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	return Status{
		State: Running, Agent: "claude", Repo: "core", Org: "agentstate", Task: "fix-p4-9-status-lock",
		Branch: "agent/fix-p4-9-status-lock", Issue: 3, PID: 48211, ProcessID: "proc-7f3a",
		StartedAt: t0, UpdatedAt: t0.Add(time.Minute), Runs: 2,
		PRURL: "https://git.example.invalid/agentstate/core/pull/41", Note: "waiting on CI",
		Runtime: "docker",
	}
}

func benchPath(b *testing.B) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "status.json")
	st := typicalStatus()
	if _, err := Mutate(context.Background(), path, func(s *Status) error { *s = st; return nil }); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkOneGoroutine compares one Mutate (lock, read, decode, fn,
// encode, durable write) with the durable write alone.
func BenchmarkOneGoroutine(b *testing.B) {
	b.Run("WriteAtomic", func(b *testing.B) {
		path := benchPath(b)
		// The bytes Mutate writes: the document with runs and updated_at
		// changed, so that every write changes the file as Mutate's do.
		var docs [2][]byte
		for i := range docs {
			st := typicalStatus()
			st.Runs += i
			st.UpdatedAt = time.Now().UTC()
			data, _ := json.MarshalIndent(st, "", "  ")
			docs[i] = append(data, '\n')
		}
		b.SetBytes(int64(len(docs[0])))
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if err := fs.WriteAtomic(path, docs[i%2], 0o644); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("Mutate", func(b *testing.B) {
		path := benchPath(b)
		data, _ := os.ReadFile(path)
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		ctx := context.Background()
		for b.Loop() {
			if _, err := Mutate(ctx, path, func(s *Status) error { s.Runs++; return nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkOneGoroutineInterleaved alternates one Mutate and one
// WriteAtomic of the same document bytes in the same loop, so that drift in
// the disk's latency (other processes' fsyncs) hits both equally; it reports
// each one's mean latency and their ratio.
func BenchmarkOneGoroutineInterleaved(b *testing.B) {
	mpath, wpath := benchPath(b), benchPath(b)
	ctx := context.Background()
	var wa, mu time.Duration
	for b.Loop() {
		t0 := time.Now()
		_, err := Mutate(ctx, mpath, func(s *Status) error { s.Runs++; return nil })
		t1 := time.Now()
		if err != nil {
			b.Fatal(err)
		}
		data, _ := os.ReadFile(mpath) // the bytes Mutate wrote
		t2 := time.Now()
		if err := fs.WriteAtomic(wpath, data, 0o644); err != nil {
			b.Fatal(err)
		}
		wa += time.Since(t2)
		mu += t1.Sub(t0)
	}
	b.ReportMetric(float64(mu.Microseconds())/float64(b.N), "mutate-µs/op")
	b.ReportMetric(float64(wa.Microseconds())/float64(b.N), "writeatomic-µs/op")
	b.ReportMetric(float64(mu)/float64(wa), "ratio")
}

// run64 runs b.N calls of op spread over 64 goroutines and reports ops/s.
func run64(b *testing.B, op func() error) {
	b.Helper()
	runN(b, 64, op)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// baselineIncrement is what a careful caller writes without group commit:
// a per-path mutex, the sidecar flock, read, decode, change, encode and one
// WriteAtomic per call.
func baselineIncrement(locks *sync.Map, path string) error {
	mu, _ := locks.LoadOrStore(path, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	unlock, err := lockFile(context.Background(), path+LockSuffix, 0o644)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := Load(context.Background(), path)
	if err != nil {
		return err
	}
	st.Runs++
	st.UpdatedAt = time.Now().UTC()
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(path, append(data, '\n'), 0o644)
}

func mutateIncrement(path string) error {
	_, err := Mutate(context.Background(), path, func(s *Status) error { s.Runs++; return nil })
	return err
}

// burst runs n calls of op over 64 goroutines and returns the wall time.
func burst(b *testing.B, n int, op func() error) time.Duration {
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range 64 {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if err := op(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}

// BenchmarkContended64Interleaved alternates bursts of the baseline and of
// Mutate (64 goroutines each, one file each) so that disk-latency drift hits
// both equally. One iteration is one round: 64 baseline calls, then 1,024
// Mutate calls. It reports both throughputs and their ratio.
func BenchmarkContended64Interleaved(b *testing.B) {
	bpath, mpath := benchPath(b), benchPath(b)
	var locks sync.Map
	const nBase, nMutate = 64, 1024
	var tBase, tMutate time.Duration
	var mwrites atomic.Int64
	orig := writeFile
	setWriteFile(b, func(path string, data []byte, perm os.FileMode) error {
		if path == mpath {
			mwrites.Add(1)
		}
		return orig(path, data, perm)
	})
	rounds := 0
	for b.Loop() {
		tBase += burst(b, nBase, func() error { return baselineIncrement(&locks, bpath) })
		tMutate += burst(b, nMutate, func() error { return mutateIncrement(mpath) })
		rounds++
	}
	baseRate := float64(rounds*nBase) / tBase.Seconds()
	mutateRate := float64(rounds*nMutate) / tMutate.Seconds()
	b.ReportMetric(baseRate, "baseline-ops/s")
	b.ReportMetric(mutateRate, "mutate-ops/s")
	b.ReportMetric(mutateRate/baseRate, "ratio")
	b.ReportMetric(float64(rounds*nMutate)/float64(mwrites.Load()), "calls/write")
	for _, c := range []struct {
		path string
		want int
	}{{bpath, rounds * nBase}, {mpath, rounds * nMutate}} {
		if st, err := Load(context.Background(), c.path); err != nil || st.Runs != c.want+2 {
			b.Fatalf("%s: runs = %d (err %v), want %d: an update was lost", c.path, st.Runs, err, c.want+2)
		}
	}
}

// BenchmarkContended64 has 64 goroutines increment one document, with the
// baseline (baselineIncrement) and with Mutate. Both are durable per call;
// the final count is checked so that neither may drop an update.
func BenchmarkContended64(b *testing.B) {
	b.Run("Baseline", func(b *testing.B) {
		path := benchPath(b)
		var locks sync.Map // per-path mutexes
		run64(b, func() error { return baselineIncrement(&locks, path) })
		b.StopTimer()
		checkRuns(b, path)
	})
	b.Run("Mutate", func(b *testing.B) {
		path := benchPath(b)
		reportWrites := timeWrites(b)
		run64(b, func() error { return mutateIncrement(path) })
		b.StopTimer()
		reportWrites()
		checkRuns(b, path)
	})
}

// timeWrites counts the durable writes (writeFile) until the benchmark
// ends and times them; the function it returns reports the calls per write
// and the mean time of a write.
func timeWrites(b *testing.B) (report func()) {
	var writes, writeNanos atomic.Int64
	setWriteFile(b, func(path string, data []byte, perm os.FileMode) error {
		writes.Add(1)
		t0 := time.Now()
		defer func() { writeNanos.Add(int64(time.Since(t0))) }()
		return writeFile(path, data, perm)
	})
	return func() {
		b.ReportMetric(float64(b.N)/float64(writes.Load()), "calls/write")
		b.ReportMetric(float64(writeNanos.Load())/float64(writes.Load())/1e6, "ms/write")
	}
}

// checkRuns verifies that the benchmark lost no increment. Benchmarks run
// several times with growing b.N on fresh files, so the last run's count is
// b.N plus the seed's 2.
func checkRuns(b *testing.B, path string) {
	b.Helper()
	st, err := Load(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	if st.Runs != b.N+2 {
		b.Fatalf("runs = %d after %d increments", st.Runs, b.N)
	}
}
