package fs

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentstate/core/internal/payload"
)

// readersVsWriters runs 4 lock-free readers of path against 2 writers that
// each perform up to writes writes with write(seq). It returns how many
// reads saw something that is not a complete payload (empty, truncated,
// mixed). With stopOnInvalid it stops at the first one.
func readersVsWriters(t *testing.T, path string, writes int, stopOnInvalid bool, write func(seq int) error) (invalid, reads int64) {
	t.Helper()
	var bad, total atomic.Int64
	var stop atomic.Bool
	var firstBad atomic.Value
	var readers, writers sync.WaitGroup
	for range 4 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for !stop.Load() {
				b, err := os.ReadFile(path)
				total.Add(1)
				if err == nil {
					_, err = payload.Check(b)
				}
				if err != nil {
					bad.Add(1)
					firstBad.CompareAndSwap(nil, err.Error())
					if stopOnInvalid {
						stop.Store(true)
					}
				}
			}
		}()
	}
	errs := make(chan error, 2)
	for w := range 2 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := 0; i < writes && !stop.Load(); i++ {
				if err := write(2*i + w); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	writers.Wait()
	stop.Store(true)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if v := firstBad.Load(); v != nil {
		t.Logf("first invalid read: %v", v)
	}
	return bad.Load(), total.Load()
}

func TestConcurrentReadersSeeWholeFiles(t *testing.T) {
	writes := 60
	if os.Getenv("SOAK") != "" {
		writes = 5000
	}
	fsys, dir := newFs(t)
	path := filepath.Join(dir, "status.json")
	if err := WriteAtomic(path, payload.Make(0, 10), 0o644); err != nil {
		t.Fatal(err)
	}
	invalid, reads := readersVsWriters(t, path, writes, false, func(seq int) error {
		if seq%2 == 0 {
			return fsys.WriteAtomic("status.json", payload.Make(seq, payload.Size(seq)), 0o644)
		}
		return WriteAtomic(path, payload.Make(seq, payload.Size(seq)), 0o644)
	})
	t.Logf("WriteAtomic: %d reads, %d invalid", reads, invalid)
	if invalid != 0 {
		t.Fatalf("%d of %d lock-free reads saw an empty, partial or mixed file", invalid, reads)
	}
	assertNoTemp(t, dir)
}

// TestConcurrentReadersControl: the same harness with an in-place
// os.WriteFile must catch torn reads, or the harness proves nothing.
func TestConcurrentReadersControl(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	if err := os.WriteFile(path, payload.Make(0, 10), 0o644); err != nil {
		t.Fatal(err)
	}
	invalid, reads := readersVsWriters(t, path, 20000, true, func(seq int) error {
		return os.WriteFile(path, payload.Make(seq, payload.Size(seq)), 0o644)
	})
	t.Logf("CONTROL os.WriteFile: %d reads, %d invalid", reads, invalid)
	if invalid == 0 {
		t.Fatalf("CONTROL: in-place os.WriteFile produced no invalid read in %d reads: the harness cannot see torn writes", reads)
	}
}
