package fs

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentstate/core/internal/payload"
	"github.com/agentstate/core/internal/syncshare"
)

// TestConcurrentReplacesShareSyncs writes many files at once from many
// goroutines, with a reader per file: every read is a whole payload, every
// file ends with its last payload, no temp file is left, and (on a file
// system that shares syncs) rounds were used.
func TestConcurrentReplacesShareSyncs(t *testing.T) {
	dir := t.TempDir()
	const files, writes = 16, 15
	var rounds atomic.Int64
	setSyncFS(t, func(fd int, syncfs func(int) error) error { rounds.Add(1); return syncfs(fd) })
	var wg sync.WaitGroup
	for i := range files {
		sub := filepath.Join(dir, fmt.Sprint("task", i))
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(sub, "status.json")
		if err := WriteAtomic(target, payload.Make(0, 300), 0o644); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		wg.Go(func() {
			defer close(done)
			for seq := 1; seq <= writes; seq++ {
				if err := WriteAtomic(target, payload.Make(seq, 300+seq*7), 0o644); err != nil {
					t.Error(err)
					return
				}
			}
		})
		wg.Go(func() {
			last := 0
			for {
				select {
				case <-done:
					return
				default:
				}
				b, err := os.ReadFile(target)
				if err != nil {
					t.Error(err)
					return
				}
				seq, err := payload.Check(b)
				if err != nil || seq < last {
					t.Errorf("%s: read seq %d after %d (%v)", target, seq, last, err)
					return
				}
				last = seq
			}
		})
	}
	wg.Wait()
	for i := range files {
		sub := filepath.Join(dir, fmt.Sprint("task", i))
		b, err := os.ReadFile(filepath.Join(sub, "status.json"))
		if err != nil {
			t.Fatal(err)
		}
		if seq, err := payload.Check(b); err != nil || seq != writes {
			t.Errorf("%s: seq %d (%v), want %d", sub, seq, err, writes)
		}
		assertNoTemp(t, sub)
	}
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	shareable := syncshare.Shared(f)
	f.Close()
	t.Logf("%d writes, %d shared rounds (file system shares syncs: %v)", files*writes, rounds.Load(), shareable)
	if shareable && rounds.Load() == 0 {
		t.Error("concurrent replaces on a file system that shares syncs never shared one")
	}
}
