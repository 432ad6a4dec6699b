package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/agentstate/core/fs"
)

// modes runs a test with inotify (where the system has it) and with
// polling, which every system has.
func modes(t *testing.T, test func(t *testing.T, newWatcher func() *Watcher)) {
	t.Run("native", func(t *testing.T) {
		if runtime.GOOS == "linux" && newInotify() == nil {
			t.Fatal("inotify unavailable on Linux")
		}
		test(t, func() *Watcher { return New(0) })
	})
	t.Run("poll", func(t *testing.T) {
		test(t, func() *Watcher { return New(time.Millisecond) })
	})
}

// within bounds a wait that must end: a failure, not a timing assertion.
func within(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// until calls Next until an event for name satisfies ok, and returns every
// event seen on the way.
func until(t *testing.T, w *Watcher, dir, name string, ok func(Event) bool) []Event {
	t.Helper()
	ctx := within(t)
	var seen []Event
	for {
		evs, err := w.Next(ctx)
		if err != nil {
			t.Fatalf("Next: %v (seen %v)", err, seen)
		}
		seen = append(seen, evs...)
		for _, e := range evs {
			if e.Dir == dir && e.Name == name && ok(e) {
				return seen
			}
		}
	}
}

func has(op Op) func(Event) bool { return func(e Event) bool { return e.Op&op != 0 } }

func newDir(t *testing.T, w *Watcher) string {
	t.Helper()
	dir := t.TempDir()
	if err := w.Add(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestReplaceIsOneEventForTheName(t *testing.T) {
	modes(t, func(t *testing.T, newWatcher func() *Watcher) {
		w := newWatcher()
		defer w.Close()
		dir := newDir(t, w)
		path := filepath.Join(dir, "doc.json")
		if err := fs.WriteAtomic(path, []byte(`{"n":1}`), 0o644); err != nil {
			t.Fatal(err)
		}
		seen := until(t, w, dir, "doc.json", has(Write))
		n := 0
		for _, e := range seen {
			if e.Name == "doc.json" {
				n++
			}
		}
		if n != 1 {
			t.Errorf("one replace gave %d events for its name: %v", n, seen)
		}
	})
}

// A file created by open(2) is empty until written: it is reported when
// it is closed, never before, so that nobody reads it unfinished.
func TestCreatedFileReportedWhenClosed(t *testing.T) {
	modes(t, func(t *testing.T, newWatcher func() *Watcher) {
		w := newWatcher()
		defer w.Close()
		dir := newDir(t, w)
		f, err := os.Create(filepath.Join(dir, "new.json"))
		if err != nil {
			t.Fatal(err)
		}
		// A later replace of another name: its event comes after the
		// creation's, so a reported creation would show up by then.
		if err := fs.WriteAtomic(filepath.Join(dir, "marker"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		seen := until(t, w, dir, "marker", has(Write))
		native := w.polled == 0
		for _, e := range seen {
			if e.Name == "new.json" && native {
				t.Errorf("an empty file being created was reported: %v", e)
			}
		}
		f.WriteString(`{}`)
		f.Close()
		until(t, w, dir, "new.json", has(Write))
	})
}

func TestRemoveAndGone(t *testing.T) {
	modes(t, func(t *testing.T, newWatcher func() *Watcher) {
		w := newWatcher()
		defer w.Close()
		dir := newDir(t, w)
		sub := filepath.Join(dir, "sub")
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		until(t, w, dir, "sub", func(e Event) bool { return e.Op&Write != 0 && e.IsDir })
		if err := w.Add(sub); err != nil {
			t.Fatal(err)
		}
		doc := filepath.Join(sub, "doc")
		if err := fs.WriteAtomic(doc, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		until(t, w, sub, "doc", has(Write))
		os.Remove(doc)
		until(t, w, sub, "doc", has(Remove))
		os.Remove(sub)
		seen := until(t, w, dir, "sub", has(Remove))
		gone := false
		for _, e := range seen {
			gone = gone || e.Dir == sub && e.Op == Gone
		}
		if !gone {
			until(t, w, sub, "", has(Gone))
		}
		if w.Watching(sub) {
			t.Error("a removed directory is still watched")
		}
		os.Remove(dir)
		until(t, w, dir, "", has(Gone))
		if _, err := w.Next(within(t)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Next with nothing left to watch: %v, want os.ErrNotExist", err)
		}
	})
}

// A watched directory that is renamed is no longer watched under its old
// name: it is reported Gone (its events would name the wrong path).
func TestMovedDirectoryIsGone(t *testing.T) {
	modes(t, func(t *testing.T, newWatcher func() *Watcher) {
		w := newWatcher()
		defer w.Close()
		parent := t.TempDir()
		dir := filepath.Join(parent, "a")
		os.Mkdir(dir, 0o755)
		if err := w.Add(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(dir, filepath.Join(parent, "b")); err != nil {
			t.Fatal(err)
		}
		until(t, w, dir, "", has(Gone))
		if w.Watching(dir) {
			t.Error("a moved directory is still watched")
		}
	})
}

func TestAddErrors(t *testing.T) {
	modes(t, func(t *testing.T, newWatcher func() *Watcher) {
		w := newWatcher()
		defer w.Close()
		dir := t.TempDir()
		if err := w.Add(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Add of a missing directory: %v", err)
		}
		file := filepath.Join(dir, "file")
		os.WriteFile(file, nil, 0o644)
		if err := w.Add(file); err == nil {
			t.Error("Add of a file: no error")
		}
		if err := w.Add(dir); err != nil {
			t.Fatal(err)
		}
		if err := w.Add(dir); err != nil {
			t.Errorf("second Add: %v", err)
		}
		w.Close()
		if err := w.Add(dir); !errors.Is(err, os.ErrClosed) {
			t.Errorf("Add after Close: %v", err)
		}
		if _, err := w.Next(context.Background()); !errors.Is(err, os.ErrClosed) {
			t.Errorf("Next after Close: %v", err)
		}
	})
}

// Next honours its context, whether it ended before or during the wait.
func TestNextHonoursContext(t *testing.T) {
	modes(t, func(t *testing.T, newWatcher func() *Watcher) {
		w := newWatcher()
		defer w.Close()
		newDir(t, w)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := w.Next(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled: %v", err)
		}
		ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		if _, err := w.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("deadline: %v", err)
		}
		ctx, cancel = context.WithCancel(context.Background())
		go cancel()
		if _, err := w.Next(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled while waiting: %v", err)
		}
	})
}

// A directory that cannot have an inotify watch is polled next to the
// watched ones, and both report.
func TestPolledNextToWatched(t *testing.T) {
	w := New(0)
	defer w.Close()
	if w.in == nil {
		t.Skip("no inotify on " + runtime.GOOS)
	}
	watched := newDir(t, w)
	polled := t.TempDir()
	w.poll = time.Millisecond
	if err := w.addPolled(polled); err != nil {
		t.Fatal(err)
	}
	fs.WriteAtomic(filepath.Join(polled, "p"), nil, 0o644)
	until(t, w, polled, "p", has(Write))
	fs.WriteAtomic(filepath.Join(watched, "w"), nil, 0o644)
	until(t, w, watched, "w", has(Write))
}

// When the kernel's queue overflows, Next says so: the caller must look at
// everything again.
func TestOverflow(t *testing.T) {
	data, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		t.Skip("no inotify on " + runtime.GOOS)
	}
	var max int
	fmt.Sscan(string(data), &max)
	if max > 1<<16 {
		t.Skipf("max_queued_events is %d: too many files to write", max)
	}
	w := New(0)
	defer w.Close()
	dir := newDir(t, w)
	for i := range max/2 + 10 { // two events each: create (dropped), close
		f, err := os.Create(filepath.Join(dir, fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	evs, err := w.Next(within(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Op == Overflow {
			return
		}
	}
	t.Errorf("no Overflow among %d events", len(evs))
}

func TestMerge(t *testing.T) {
	got := merge([]Event{
		{Dir: "d", Name: "a", Op: Remove},
		{Dir: "d", Name: "b", Op: Write},
		{Dir: "d", Name: "a", Op: Write, IsDir: true},
		{Op: Overflow},
		{Dir: "d/x", Op: Gone},
		{Op: Overflow},
	})
	want := []Event{{Op: Overflow}, {Dir: "d/x", Op: Gone}, {Dir: "d", Name: "a", Op: Remove | Write, IsDir: true}, {Dir: "d", Name: "b", Op: Write}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("merge = %v, want %v", got, want)
	}
}

// BenchmarkPollTree measures one poll of a workspace tree of 1,000 task
// directories (1,084 directories), the fallback's cost per interval.
func BenchmarkPollTree(b *testing.B) {
	root := b.TempDir()
	w := New(time.Hour)
	defer w.Close()
	for i := range 1000 {
		dir := filepath.Join(root, fmt.Sprintf("org%d", i%4), fmt.Sprintf("repo%d", i%16), fmt.Sprintf("task%d", i))
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "status.json"), []byte("{}"), 0o644)
		os.WriteFile(filepath.Join(dir, "status.json.lock"), nil, 0o644)
	}
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if d.IsDir() {
			w.Add(p)
		}
		return nil
	})
	b.ReportAllocs()
	for b.Loop() {
		w.pollAll()
		if len(w.queue) != 0 {
			b.Fatal(w.queue)
		}
	}
}

// WaitFor returns on a change of a matching name, not of others, and
// reports a directory gone.
func TestWaitFor(t *testing.T) {
	modes(t, func(t *testing.T, newWatcher func() *Watcher) {
		w := newWatcher()
		defer w.Close()
		dir := newDir(t, w)
		fs.WriteAtomic(filepath.Join(dir, "other"), nil, 0o644)
		fs.WriteAtomic(filepath.Join(dir, "doc"), nil, 0o644)
		isDoc := func(n string) bool { return n == "doc" }
		gone, err := w.WaitFor(within(t), isDoc)
		if gone || err != nil {
			t.Fatalf("after a change of doc: gone %v, %v", gone, err)
		}
		os.RemoveAll(dir)
		for !gone && err == nil { // doc's removal may come first
			gone, err = w.WaitFor(within(t), isDoc)
		}
		if !gone || err != nil {
			t.Fatalf("after the directory's removal: gone %v, %v", gone, err)
		}
	})
}

// One directory added under two names (a link here; a bind mount alike):
// the kernel has one watch for it, so the second name is polled, and both
// names report.
func TestSameDirectoryTwice(t *testing.T) {
	w := New(0)
	defer w.Close()
	if w.in == nil {
		t.Skip("no inotify on " + runtime.GOOS)
	}
	dir := newDir(t, w)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	if err := w.Add(link); err != nil {
		t.Fatal(err)
	}
	if w.polled != 1 || !w.Watching(dir) || !w.Watching(link) {
		t.Fatalf("polled %d, watching %v %v", w.polled, w.Watching(dir), w.Watching(link))
	}
	w.poll = time.Millisecond
	fs.WriteAtomic(filepath.Join(dir, "doc"), nil, 0o644)
	got := map[string]bool{}
	ctx := within(t)
	for !got[dir] || !got[link] {
		evs, err := w.Next(ctx)
		if err != nil {
			t.Fatalf("Next: %v (seen %v)", err, got)
		}
		for _, e := range evs {
			if e.Op&Gone != 0 {
				t.Fatalf("%v: a name lost its watch", e)
			}
			got[e.Dir] = got[e.Dir] || e.Name == "doc"
		}
	}
}
