package syncshare

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// A SyncPoint over files in two directories: on a file system that shares
// syncs, one syncfs covers the step, however many files; elsewhere none
// runs (each file and directory is fsynced). The files are as written, and
// the directories are closed after Sync.
func TestSyncPointOneSyncPerStep(t *testing.T) {
	root := t.TempDir()
	var rounds atomic.Int64
	setSyncFS(t, func(fd int, syncfs func(int) error) error { rounds.Add(1); return syncfs(fd) })
	dirs := []string{filepath.Join(root, "a"), filepath.Join(root, "b")}
	for _, d := range dirs {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p, err := BeginSync(dirs[0], dirs[1], dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(p.dirs) != 2 {
		t.Fatalf("%d directories opened, want 2 (a repeated name once)", len(p.dirs))
	}
	var files []*os.File
	for i, d := range append(dirs, dirs...) {
		f, err := os.Create(filepath.Join(d, string(rune('w'+i))))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString("payload"); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if err := os.Rename(filepath.Join(dirs[0], "w"), filepath.Join(dirs[0], "renamed")); err != nil {
		t.Fatal(err)
	}
	if err := p.Sync(files...); err != nil {
		t.Fatal(err)
	}
	if p.dirs != nil {
		t.Fatal("Sync left its directories open")
	}
	if err := p.Close(); err != nil {
		t.Fatalf("Close after Sync: %v", err)
	}
	d, _ := os.Open(root)
	_, shareable := sharedSyncKey(d)
	d.Close()
	want := int64(0)
	if shareable {
		want = 1
	}
	if rounds.Load() != want {
		t.Fatalf("%d syncfs calls for one step of 4 files and 2 directories (shares syncs: %v), want %d", rounds.Load(), shareable, want)
	}
	if b, err := os.ReadFile(filepath.Join(dirs[0], "renamed")); err != nil || string(b) != "payload" {
		t.Fatalf("%q, %v", b, err)
	}
}

// SyncPoints running at once share rounds (the rounds themselves, and that
// each covers its members, are tested with Share.Sync in share_linux_test.go).
func TestSyncPointsShareRounds(t *testing.T) {
	dir := t.TempDir()
	f, _ := os.Open(dir)
	_, shareable := sharedSyncKey(f)
	f.Close()
	var rounds atomic.Int64
	setSyncFS(t, func(fd int, syncfs func(int) error) error { rounds.Add(1); return syncfs(fd) })
	const workers, steps = 8, 10
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for s := range steps {
				p, err := BeginSync(dir)
				if err != nil {
					t.Error(err)
					return
				}
				name := filepath.Join(dir, string(rune('a'+w))+string(rune('a'+s)))
				f, err := os.Create(name)
				if err == nil {
					_, err = f.WriteString("x")
				}
				if err == nil {
					err = p.Sync(f)
				}
				f.Close()
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d steps, %d syncfs calls (shares syncs: %v)", workers*steps, rounds.Load(), shareable)
	if shareable && (rounds.Load() == 0 || rounds.Load() > workers*steps) {
		t.Fatalf("%d syncfs calls for %d steps", rounds.Load(), workers*steps)
	}
}

func TestBeginSyncMissingDirectory(t *testing.T) {
	dir := t.TempDir()
	_, err := BeginSync(dir, filepath.Join(dir, "missing"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("BeginSync of a missing directory: %v", err)
	}
	shares.mu.Lock()
	n := len(shares.m)
	shares.mu.Unlock()
	if n != 0 {
		t.Fatalf("a failed BeginSync left %d shares registered", n)
	}
}
