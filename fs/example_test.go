package fs_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentstate/core/fs"
)

func ExampleWriteAtomic() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "status.json")

	// Readers see the old content or the new one, never a torn file; when
	// WriteAtomic returns nil the new content survives a power loss.
	if err := fs.WriteAtomic(path, []byte(`{"status":"running"}`), 0o644); err != nil {
		log.Fatal(err)
	}
	if err := fs.WriteAtomic(path, []byte(`{"status":"completed"}`), 0o644); err != nil {
		log.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	fmt.Println(string(b))
	// Output: {"status":"completed"}
}

func ExampleWriteAtomic_durabilityUnknown() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)

	err := fs.WriteAtomic(filepath.Join(dir, "status.json"), []byte("{}"), 0o644)
	switch {
	case errors.Is(err, fs.ErrDurabilityUnknown):
		// The new content is in place, but the directory fsync failed: it
		// may not survive a power loss. Do not retry the fsync; rewrite if
		// it matters.
		fmt.Println("written, durability unknown:", err)
	case err != nil:
		// Nothing changed: the old file (if any) is intact.
		fmt.Println("not written:", err)
	default:
		fmt.Println("written and durable")
	}
	// Output: written and durable
}

func ExampleFs_WriteAtomic() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)

	fsys, err := fs.New(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer fsys.Close()

	if err := fsys.MkdirAll("acme/api/task-42", 0o755); err != nil {
		log.Fatal(err)
	}
	if err := fsys.WriteAtomic("acme/api/task-42/status.json", []byte(`{"status":"queued"}`), 0o644); err != nil {
		log.Fatal(err)
	}
	b, _ := fsys.ReadFile("acme/api/task-42/status.json")
	fmt.Println(string(b))

	// Names are confined to the root.
	err = fsys.WriteAtomic("../escape.json", []byte("{}"), 0o644)
	fmt.Println(errors.Is(err, fs.ErrOutsideRoot))
	fmt.Println(err)
	// Output:
	// {"status":"queued"}
	// true
	// fs: write atomic ../escape.json: name is outside the root
}

func ExampleFs_WriteAtomicFrom() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	fsys, err := fs.New(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer fsys.Close()

	// Streams through a fixed buffer: memory does not grow with the size.
	// Cancelling ctx between chunks leaves the old file in place.
	src := strings.NewReader(strings.Repeat("line\n", 100000))
	n, err := fsys.WriteAtomicFrom(context.Background(), "run.log", src, 0o600)
	if err != nil {
		log.Fatal(err)
	}
	fi, _ := fsys.Stat("run.log")
	fmt.Println(n, fi.Size())
	// Output: 500000 500000
}

func ExampleFs_SweepTemp() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	fsys, err := fs.New(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer fsys.Close()

	// What a writer killed mid-write leaves behind, an hour ago:
	stale := filepath.Join(dir, ".status.json.6f1c0d2e9ab34c57.tmp")
	os.WriteFile(stale, []byte("half a fi"), 0o644)
	hourAgo := time.Now().Add(-time.Hour)
	os.Chtimes(stale, hourAgo, hourAgo)
	// A user's file with a similar name is never touched.
	os.WriteFile(filepath.Join(dir, "notes.tmp"), []byte("mine"), 0o644)

	removed, err := fsys.SweepTemp(".", 10*time.Minute)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(removed)
	ok, _ := fsys.Exists("notes.tmp")
	fmt.Println(ok)
	// Output:
	// [.status.json.6f1c0d2e9ab34c57.tmp]
	// true
}

func ExampleMkdirAll() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)

	// Unlike os.MkdirAll, the new directories are fsynced: a file written
	// into them cannot disappear with them after a crash.
	task := filepath.Join(dir, "acme", "api", "task-7")
	if err := fs.MkdirAll(task, 0o755); err != nil {
		log.Fatal(err)
	}
	err := fs.WriteAtomic(filepath.Join(task, "status.json"), []byte("{}"), 0o644)
	fmt.Println(err)
	// Output: <nil>
}
