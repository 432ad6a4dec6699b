package fs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentstate/core/internal/payload"
	"github.com/agentstate/core/internal/syncshare"
)

func init() { helpers["strace-shared"] = straceSharedMain }

const straceSharedWriters, straceSharedWrites = 8, 3

// straceSharedMain has straceSharedWriters goroutines each replace
// FS_ROOT/task<g>/status.json straceSharedWrites times, at once.
func straceSharedMain() {
	root := os.Getenv("FS_ROOT")
	var wg sync.WaitGroup
	for g := range straceSharedWriters {
		wg.Go(func() {
			for i := range straceSharedWrites {
				target := filepath.Join(root, fmt.Sprint("task", g), "status.json")
				if err := WriteAtomic(target, payload.Make(i, 300), 0o644); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
			}
		})
	}
	wg.Wait()
}

// TestSharedSyscallOrder proves the shared sequence from an strace of
// concurrent replaces: for every rename of a temp file onto its target,
// (1) after the temp's last write and before the rename, either fsync of
// the temp returned or a syncfs began and returned; (2) after the rename,
// either fsync of the directory or a syncfs began and returned. A syncfs
// counts only if it began after the event it must cover.
func TestSharedSyscallOrder(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	shareable := syncshare.Shared(f)
	f.Close()
	if !shareable {
		t.Skip("skipped: the temp directory's file system does not share syncs (not ext4/xfs/btrfs, or Linux < 5.8)")
	}
	events, _ := runStraceIn(t, "strace-shared", func(root string) {
		for g := range straceSharedWriters {
			sub := filepath.Join(root, fmt.Sprint("task", g))
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			mustWrite(t, filepath.Join(sub, "status.json"), "{}", 0o644)
		}
	})
	syncfsCalls := 0
	for _, ev := range events {
		if ev.Call == "syncfs" && ev.Ret == 0 {
			syncfsCalls++
		}
	}
	// covered reports whether, strictly between after and before, an
	// fsync of path returned or a syncfs began and returned.
	covered := func(after, before int, path string) bool {
		for i := after + 1; i < before; i++ {
			ev := events[i]
			if ev.Ret != 0 {
				continue
			}
			if (ev.Call == "fsync" || ev.Call == "fdatasync") && ev.Path == path && ev.Start > after {
				return true
			}
			if ev.Call == "syncfs" && ev.Start > after {
				return true
			}
		}
		return false
	}
	renames := 0
	for r, ev := range events {
		if !strings.HasPrefix(ev.Call, "rename") || ev.Ret != 0 || filepath.Base(ev.NewPath) != "status.json" {
			continue
		}
		renames++
		lastWrite := -1
		for i := range r {
			if events[i].Call == "write" && events[i].Path == ev.Path {
				lastWrite = i
			}
		}
		if lastWrite < 0 {
			t.Fatalf("rename of %s: no write of it in the trace", ev.Path)
		}
		if !covered(lastWrite, r, ev.Path) {
			t.Errorf("%s renamed onto %s without a sync after its last write", ev.Path, ev.NewPath)
		}
		if !covered(r, len(events), filepath.Dir(ev.NewPath)) {
			t.Errorf("rename onto %s not followed by a sync of its directory", ev.NewPath)
		}
	}
	if renames != straceSharedWriters*straceSharedWrites {
		t.Fatalf("%d renames in the trace, want %d", renames, straceSharedWriters*straceSharedWrites)
	}
	t.Logf("%d renames, %d syncfs rounds", renames, syncfsCalls)
	if syncfsCalls == 0 {
		t.Fatal("no syncfs in the trace: the concurrent replaces never shared a sync, so this test proved nothing")
	}
}
