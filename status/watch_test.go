package status

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/internal/watch"
	"github.com/agentstate/core/status/internal/filestore"
)

// watchModes runs a test with the native watch (inotify on Linux) and with
// the polling fallback.
func watchModes(t *testing.T, test func(t *testing.T, opts ...Option)) {
	t.Run("native", func(t *testing.T) { test(t) })
	t.Run("poll", func(t *testing.T) {
		setWatchPoll(t, time.Millisecond)
		test(t)
	})
}

// bounded is the context of a watch in a test: a watch that never yields
// ends with it, and the test fails; no test waits on a clock otherwise.
func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// puller steps through a watch from the test's goroutine.
type puller[T any] struct {
	t    *testing.T
	next func() (Entry[T], error, bool)
}

func pull[T any](t *testing.T, seq iter.Seq2[Entry[T], error]) *puller[T] {
	next, stop := iter.Pull2(seq)
	t.Cleanup(stop)
	return &puller[T]{t: t, next: func() (Entry[T], error, bool) {
		e, err, ok := next()
		return e, err, ok
	}}
}

// value returns the next entry, failing on an error or the end.
func (p *puller[T]) value() Entry[T] {
	p.t.Helper()
	e, err, ok := p.next()
	if !ok {
		p.t.Fatal("the watch ended")
	}
	if err != nil {
		p.t.Fatalf("watch yielded an error: %v", err)
	}
	return e
}

// failure returns the next error, failing on a value or the end.
func (p *puller[T]) failure() error {
	p.t.Helper()
	e, err, ok := p.next()
	if !ok {
		p.t.Fatal("the watch ended")
	}
	if err == nil {
		p.t.Fatalf("watch yielded %+v, want an error", e)
	}
	return err
}

func setRuns(t *testing.T, path string, runs int) {
	t.Helper()
	if _, err := Mutate(context.Background(), path, func(s *Status) error { s.Runs = runs; return nil }); err != nil {
		t.Fatal(err)
	}
}

func writeRaw(t *testing.T, path, content string) {
	t.Helper()
	if err := fs.WriteAtomic(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestWatchCurrentStateThenChanges(t *testing.T) {
	watchModes(t, func(t *testing.T, opts ...Option) {
		path := filepath.Join(t.TempDir(), StatusFile)
		setRuns(t, path, 1)
		p := pull(t, NewStore[Status](path, opts...).Watch(bounded(t)))
		if e := p.value(); e.Value.Runs != 1 || e.Path != path || e.Removed {
			t.Fatalf("first entry %+v, want the current document", e)
		}
		setRuns(t, path, 2)
		if e := p.value(); e.Value.Runs != 2 {
			t.Fatalf("after a Mutate: %+v", e)
		}
		os.Remove(path)
		if e := p.value(); !e.Removed || e.Path != path {
			t.Fatalf("after a removal: %+v", e)
		}
		setRuns(t, path, 3)
		if e := p.value(); e.Value.Runs != 3 || e.Removed {
			t.Fatalf("after re-creation: %+v", e)
		}
	})
}

// A missing document yields nothing until it is created.
func TestWatchMissingDocument(t *testing.T) {
	watchModes(t, func(t *testing.T, opts ...Option) {
		path := filepath.Join(t.TempDir(), StatusFile)
		p := pull(t, NewStore[Status](path, opts...).Watch(bounded(t)))
		setRuns(t, path, 7)
		if e := p.value(); e.Value.Runs != 7 {
			t.Fatalf("first entry %+v, want the created document", e)
		}
	})
}

// Every committed state is followed by a yield of it or a later one, each
// yield a whole committed document, and no value twice in a row: a writer
// commits 1..n, the watch must see strictly increasing counts ending at n.
func TestWatchFollowsEveryCommit(t *testing.T) {
	watchModes(t, func(t *testing.T, opts ...Option) {
		const n = 200
		path := filepath.Join(t.TempDir(), StatusFile)
		setRuns(t, path, 0)
		ctx := bounded(t)
		done := make(chan error, 1)
		go func() {
			var err error
			for i := 1; i <= n && err == nil; i++ {
				_, err = Mutate(ctx, path, func(s *Status) error { s.Runs = i; return nil })
			}
			done <- err
		}()
		last, yields := -1, 0
		for e, err := range NewStore[Status](path, opts...).Watch(ctx) {
			if err != nil {
				t.Fatalf("after %d: %v (a torn read?)", last, err)
			}
			yields++
			if e.Value.Runs <= last {
				t.Fatalf("runs %d after %d: a value yielded twice or out of order", e.Value.Runs, last)
			}
			last = e.Value.Runs
			if last == n {
				break
			}
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if last != n {
			t.Fatalf("the watch ended at %d, want %d (the last commit was missed)", last, n)
		}
		t.Logf("%d commits, %d yields", n, yields)
	})
}

// CONTROL for TestWatchFollowsEveryCommit: a watcher that reads the
// document on every event in its directory, as a first inotify loop does,
// yields one commit several times (the temp file's and the lock file's
// events come with it). The test requires the duplicate.
func TestControlReadOnEveryEventDoubleCounts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, StatusFile)
	setRuns(t, path, 1)
	w := watch.New(0)
	defer w.Close()
	if err := w.Add(dir); err != nil {
		t.Fatal(err)
	}
	setRuns(t, path, 2)
	var yields []int
	ctx := bounded(t)
	for len(yields) == 0 || yields[len(yields)-1] != 2 {
		evs, err := w.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for range evs { // naive: one read per event
			st, err := Load(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			yields = append(yields, st.Runs)
		}
	}
	// Drain what the same commit queued after the document's own event.
	next, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if evs, err := w.Next(next); err == nil {
		for range evs {
			st, _ := Load(ctx, path)
			yields = append(yields, st.Runs)
		}
	}
	dup := false
	for i := 1; i < len(yields); i++ {
		dup = dup || yields[i] == yields[i-1]
	}
	if !dup {
		t.Fatalf("CONTROL: reading on every event yielded %v for one commit, want a duplicate: the harness cannot tell", yields)
	}
	t.Logf("CONTROL: one commit, naive reads yielded %v", yields)
}

// statPoller is the polling loop monitors write: it reads the document
// when its modification time or size changed since the last poll.
type statPoller struct {
	path  string
	mtime time.Time
	size  int64
}

// poll reports the document's runs if the poller thinks it changed.
func (p *statPoller) poll(t *testing.T) (int, bool) {
	fi, err := os.Stat(p.path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.ModTime().Equal(p.mtime) && fi.Size() == p.size {
		return 0, false
	}
	p.mtime, p.size = fi.ModTime(), fi.Size()
	st, err := Load(context.Background(), p.path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Runs, true
}

// sameTick sets path's times to those of before, as a replace within one
// timestamp tick leaves them: Linux stamps files from a clock that
// advances once per scheduler tick (1-10ms), and some file systems keep
// whole seconds.
func sameTick(t *testing.T, path string, before os.FileInfo) {
	t.Helper()
	if err := os.Chtimes(path, before.ModTime(), before.ModTime()); err != nil {
		t.Fatal(err)
	}
}

// A replace that keeps the size and lands in the same timestamp tick is
// still a change: the watch yields it.
func TestWatchSeesSameSizeSameTickReplace(t *testing.T) {
	watchModes(t, func(t *testing.T, opts ...Option) {
		path := filepath.Join(t.TempDir(), StatusFile)
		writeRaw(t, path, `{"runs": 1}`)
		p := pull(t, NewStore[Status](path, opts...).Watch(bounded(t)))
		p.value()
		before, _ := os.Stat(path)
		writeRaw(t, path, `{"runs": 2}`)
		sameTick(t, path, before)
		if e := p.value(); e.Value.Runs != 2 {
			t.Fatalf("got %+v, want runs 2", e)
		}
	})
}

// CONTROL for TestWatchSeesSameSizeSameTickReplace: the stat poller, in
// the same steps, never sees the change. The test requires the miss.
func TestControlStatPollerMissesSameTickReplace(t *testing.T) {
	path := filepath.Join(t.TempDir(), StatusFile)
	writeRaw(t, path, `{"runs": 1}`)
	p := &statPoller{path: path}
	if runs, ok := p.poll(t); !ok || runs != 1 {
		t.Fatalf("first poll: %d %v", runs, ok)
	}
	before, _ := os.Stat(path)
	writeRaw(t, path, `{"runs": 2}`)
	sameTick(t, path, before)
	if runs, ok := p.poll(t); ok {
		t.Fatalf("CONTROL: the stat poller saw runs=%d: the harness cannot tell", runs)
	}
	if st, _ := Load(context.Background(), path); st.Runs != 2 {
		t.Fatalf("the document holds %d", st.Runs)
	}
	t.Log("CONTROL: the stat poller missed the commit of runs=2, for good")
}

// Rewriting the same bytes, touching or chmod-ing the document is not a
// change: the next yield is the next real change.
func TestWatchNoDuplicates(t *testing.T) {
	watchModes(t, func(t *testing.T, opts ...Option) {
		path := filepath.Join(t.TempDir(), StatusFile)
		setRuns(t, path, 1)
		p := pull(t, NewStore[Status](path, opts...).Watch(bounded(t)))
		p.value()
		data, _ := os.ReadFile(path)
		writeRaw(t, path, string(data))
		later := time.Now().Add(time.Hour)
		os.Chtimes(path, later, later)
		os.Chmod(path, 0o600)
		setRuns(t, path, 2)
		if e := p.value(); e.Value.Runs != 2 {
			t.Fatalf("got %+v after same-content rewrites, want runs 2", e)
		}
	})
}

// CONTROL for TestWatchNoDuplicates: the stat poller reports the same
// document again after a rewrite of the same bytes. The test requires it.
func TestControlStatPollerDoubleCounts(t *testing.T) {
	path := filepath.Join(t.TempDir(), StatusFile)
	setRuns(t, path, 1)
	p := &statPoller{path: path}
	p.poll(t)
	data, _ := os.ReadFile(path)
	writeRaw(t, path, string(data))
	later := time.Now().Add(time.Hour)
	os.Chtimes(path, later, later)
	runs, ok := p.poll(t)
	if !ok {
		t.Fatal("CONTROL: the stat poller did not report the rewrite: the harness cannot tell")
	}
	t.Logf("CONTROL: the stat poller reported runs=%d a second time", runs)
}

// A corrupt document is an error, not the end of the watch: the same
// corrupt bytes are not reported again, and the repair is yielded.
func TestWatchCorruptThenRepaired(t *testing.T) {
	watchModes(t, func(t *testing.T, opts ...Option) {
		path := filepath.Join(t.TempDir(), StatusFile)
		writeRaw(t, path, `{"runs": 1,}`)
		p := pull(t, NewStore[Status](path, opts...).Watch(bounded(t)))
		err := p.failure()
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.Offset != 12 || ce.Path != path {
			t.Fatalf("got %v, want a *CorruptError at byte 12 of %s", err, path)
		}
		writeRaw(t, path, `{"runs": 1,}`) // the same bytes: nothing new
		writeRaw(t, path, `{"runs": 5}`)
		if e := p.value(); e.Value.Runs != 5 {
			t.Fatalf("after the repair: %+v", e)
		}
	})
}

// A link or pipe planted at the document's path is refused without being
// opened, and the watch goes on.
func TestWatchHostileFile(t *testing.T) {
	watchModes(t, func(t *testing.T, opts ...Option) {
		dir := t.TempDir()
		path := filepath.Join(dir, StatusFile)
		p := pull(t, NewStore[Status](path, opts...).Watch(bounded(t)))
		if err := os.Symlink("/dev/zero", filepath.Join(dir, "link")); err != nil {
			t.Fatal(err)
		}
		os.Rename(filepath.Join(dir, "link"), path)
		if err := p.failure(); !errors.Is(err, fs.ErrNotRegular) {
			t.Fatalf("got %v, want fs.ErrNotRegular", err)
		}
		os.Remove(path)
		setRuns(t, path, 1)
		if e := p.value(); e.Value.Runs != 1 {
			t.Fatalf("after the link went: %+v", e)
		}
	})
}

// When the document's directory goes, the document is reported removed and
// the watch ends with an error matching os.ErrNotExist.
func TestWatchDirectoryRemoved(t *testing.T) {
	watchModes(t, func(t *testing.T, opts ...Option) {
		dir := filepath.Join(t.TempDir(), "task")
		os.Mkdir(dir, 0o755)
		path := filepath.Join(dir, StatusFile)
		setRuns(t, path, 1)
		p := pull(t, NewStore[Status](path, opts...).Watch(bounded(t)))
		p.value()
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if e := p.value(); !e.Removed {
			t.Fatalf("got %+v, want Removed", e)
		}
		if err := p.failure(); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), path) {
			t.Fatalf("got %v, want os.ErrNotExist naming %s", err, path)
		}
		if _, _, ok := p.next(); ok {
			t.Fatal("the watch went on after its directory was removed")
		}
	})
}

func TestWatchErrors(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]struct {
		seq  iter.Seq2[Entry[Status], error]
		want error
	}{
		"missing directory": {Watch(context.Background(), filepath.Join(dir, "no", StatusFile)), os.ErrNotExist},
		"nil context":       {Watch(nil, filepath.Join(dir, StatusFile)), errNilContext}, //nolint:staticcheck // the test
		"other backend": {NewStore[Status]("k", WithBackend(func(string) Backend { return &memBackend{} })).Watch(context.Background()),
			errors.ErrUnsupported},
		"dir: missing root": {WatchDir(context.Background(), filepath.Join(dir, "no")), os.ErrNotExist},
		"dir: bad pattern":  {NewDir[Status](dir, "[").Watch(context.Background()), filepath.ErrBadPattern},
		"dir: nil context":  {WatchDir(nil, dir), errNilContext}, //nolint:staticcheck // the test
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			n := 0
			for _, err := range tc.seq {
				n++
				if !errors.Is(err, tc.want) {
					t.Errorf("got %v, want %v", err, tc.want)
				}
			}
			if n != 1 {
				t.Errorf("%d yields, want one error", n)
			}
		})
	}
}

// memBackend is a Backend that is not the file backend.
type memBackend struct{ doc []byte }

func (b *memBackend) Load(context.Context) ([]byte, error) { return b.doc, nil }
func (b *memBackend) Name() string                         { return "mem" }
func (b *memBackend) Update(_ context.Context, apply func([]byte) ([]byte, error)) error {
	out, err := apply(b.doc)
	if err == nil {
		b.doc = out
	}
	return err
}

// Breaking out of the loop, or cancelling ctx, ends the watch at once and
// leaves nothing running (goleak checks the package).
func TestWatchEnds(t *testing.T) {
	watchModes(t, func(t *testing.T, opts ...Option) {
		path := filepath.Join(t.TempDir(), StatusFile)
		setRuns(t, path, 1)
		for range NewStore[Status](path, opts...).Watch(context.Background()) {
			break
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		n := 0
		for _, err := range NewStore[Status](path, opts...).Watch(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			n++
			cancel()
		}
		if n != 1 {
			t.Fatalf("%d yields after cancel, want 1", n)
		}
	})
}

// layout writes documents in several layouts under root and returns their
// paths in List order.
func layout(t *testing.T, root string) []string {
	t.Helper()
	docs := []string{
		StatusFile,
		"acme/core/fix-1/status.json",
		"acme/core/fix-2/status.json",
		"deep/a/b/c/d/status.json",
		"solo/status.json",
	}
	for i, d := range docs {
		p := filepath.Join(root, d)
		os.MkdirAll(filepath.Dir(p), 0o755)
		setRuns(t, p, i+1) // leaves a lock file next to each
	}
	// Not documents: hidden directories, other names, temp and lock files.
	os.MkdirAll(filepath.Join(root, ".git", "x"), 0o755)
	writeRaw(t, filepath.Join(root, ".git", "x", StatusFile), `{}`)
	writeRaw(t, filepath.Join(root, "acme", "notes.json"), `{}`)
	writeRaw(t, filepath.Join(root, "acme", ".status.json.0123456789abcdef.tmp"), `{`)
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = filepath.Join(root, d)
	}
	return out
}

func TestList(t *testing.T) {
	root := t.TempDir()
	want := layout(t, root)
	var got []string
	for e, err := range List(root) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e.Path)
		if e.Value.Runs != len(got) {
			t.Errorf("%s: runs %d, want %d", e.Path, e.Value.Runs, len(got))
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("List = %q\nwant   %q", got, want)
	}
}

// A corrupt or hostile document is reported with its error and the walk
// goes on; so does it past a directory it cannot read.
func TestListReportsAndContinues(t *testing.T) {
	root := t.TempDir()
	want := layout(t, root)
	writeRaw(t, want[1], "{\n  \"runs\": x\n}\n")
	os.Remove(want[2])
	os.Symlink("/dev/zero", want[2])
	unreadable := filepath.Join(root, "deep", "a")
	noDir := os.Geteuid() != 0 && os.Chmod(unreadable, 0) == nil
	defer os.Chmod(unreadable, 0o755)
	var paths []string
	var errs []error
	for e, err := range List(root) {
		paths = append(paths, e.Path)
		errs = append(errs, err)
	}
	var ce *CorruptError
	if len(errs) < 3 || !errors.As(errs[1], &ce) || ce.Offset != 13 || ce.Path != want[1] {
		t.Fatalf("entry 1: %v, want a *CorruptError at byte 13 of %s (all: %q %v)", errs[1], want[1], paths, errs)
	}
	if !errors.Is(errs[2], fs.ErrNotRegular) || paths[2] != want[2] {
		t.Errorf("entry 2: %s %v, want fs.ErrNotRegular", paths[2], errs[2])
	}
	if noDir {
		if !errors.Is(errs[3], os.ErrPermission) || paths[3] != unreadable {
			t.Errorf("entry 3: %s %v, want a permission error for %s", paths[3], errs[3], unreadable)
		}
	}
	if last := paths[len(paths)-1]; last != want[4] || errs[len(errs)-1] != nil {
		t.Errorf("the walk did not go on to %s: %q %v", want[4], paths, errs)
	}
}

func TestListErrors(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "file")
	writeRaw(t, file, "")
	for _, tc := range []struct {
		dir     *Dir[Status]
		want    error
		wantMsg string
	}{
		{NewDir[Status](filepath.Join(root, "missing"), StatusFile), os.ErrNotExist, "status: list " + filepath.Join(root, "missing") + ": no such file"},
		{NewDir[Status](file, StatusFile), nil, "not a directory"},
		{NewDir[Status](root, "["), filepath.ErrBadPattern, "status: list " + root + ": pattern"},
		{NewDir[Status](root, "a/status.json"), fs.ErrInvalidName, "must match a file name"},
		{NewDir[Status](root, ""), fs.ErrInvalidName, "must match a file name"},
	} {
		n := 0
		for _, err := range tc.dir.All() {
			n++
			if err == nil || tc.want != nil && !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("%s %q: %v, want %v containing %q", tc.dir.root, tc.dir.pattern, err, tc.want, tc.wantMsg)
			}
		}
		if n != 1 {
			t.Errorf("%s %q: %d yields, want 1", tc.dir.root, tc.dir.pattern, n)
		}
	}
}

func TestListStopsWhenTheLoopDoes(t *testing.T) {
	root := t.TempDir()
	layout(t, root)
	n := 0
	for range List(root) {
		n++
		if n == 2 {
			break
		}
	}
	if n != 2 {
		t.Fatal(n)
	}
}

// Any type and any name: the documents of a Dir are the files named like
// its pattern.
func TestDirOfOtherDocuments(t *testing.T) {
	root := t.TempDir()
	type registry struct {
		Active int `json:"active"`
	}
	for i, p := range []string{"a/registry.json", "b/c/registry.json"} {
		p = filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		NewStore[registry](p).Mutate(context.Background(), func(r *registry) error { r.Active = i + 1; return nil })
	}
	writeRaw(t, filepath.Join(root, "a", StatusFile), `{}`)
	var got []string
	for e, err := range NewDir[registry](root, "*.json").All() {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s=%d", strings.TrimPrefix(e.Path, root), e.Value.Active))
	}
	want := []string{"/a/registry.json=1", "/a/status.json=0", "/b/c/registry.json=2"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// gather reads entries from a Dir watch until cond holds for the entries
// so far, and returns them as "path=runs" or "path removed" or "path: err".
func gather(t *testing.T, p *puller[Status], root string, cond func([]string) bool) []string {
	t.Helper()
	var got []string
	for !cond(got) {
		e, err, ok := p.next()
		if !ok {
			t.Fatalf("the watch ended; got %q", got)
		}
		rel, _ := filepath.Rel(root, e.Path)
		switch {
		case err != nil:
			got = append(got, rel+": error")
		case e.Removed:
			got = append(got, rel+" removed")
		default:
			got = append(got, fmt.Sprintf("%s=%d", rel, e.Value.Runs))
		}
	}
	return got
}

func contains(want ...string) func([]string) bool {
	return func(got []string) bool {
		for _, w := range want {
			if !slices.Contains(got, w) {
				return false
			}
		}
		return true
	}
}

func TestWatchDir(t *testing.T) {
	watchModes(t, func(t *testing.T, opts ...Option) {
		root := t.TempDir()
		layout(t, root)
		p := pull(t, NewDir[Status](root, StatusFile, opts...).Watch(bounded(t)))
		got := gather(t, p, root, func(g []string) bool { return len(g) == 5 })
		want := []string{"status.json=1", "acme/core/fix-1/status.json=2", "acme/core/fix-2/status.json=3", "deep/a/b/c/d/status.json=4", "solo/status.json=5"}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("initial state %q, want %q", got, want)
		}

		// A change deep down.
		setRuns(t, filepath.Join(root, "deep/a/b/c/d/status.json"), 40)
		gather(t, p, root, contains("deep/a/b/c/d/status.json=40"))

		// A new directory tree: watched once seen, its document reported.
		os.MkdirAll(filepath.Join(root, "acme/web/fix-9"), 0o755)
		setRuns(t, filepath.Join(root, "acme/web/fix-9", StatusFile), 9)
		gather(t, p, root, contains("acme/web/fix-9/status.json=9"))
		setRuns(t, filepath.Join(root, "acme/web/fix-9", StatusFile), 10)
		gather(t, p, root, contains("acme/web/fix-9/status.json=10"))

		// A directory removed: its documents are reported removed.
		os.RemoveAll(filepath.Join(root, "acme/core"))
		gather(t, p, root, contains("acme/core/fix-1/status.json removed", "acme/core/fix-2/status.json removed"))

		// A tree moved in from outside: its documents are news.
		outside := filepath.Join(t.TempDir(), "moved")
		os.MkdirAll(filepath.Join(outside, "t"), 0o755)
		setRuns(t, filepath.Join(outside, "t", StatusFile), 77)
		if err := os.Rename(outside, filepath.Join(root, "moved")); err != nil {
			t.Fatal(err)
		}
		gather(t, p, root, contains("moved/t/status.json=77"))

		// A tree moved out: removed.
		if err := os.Rename(filepath.Join(root, "solo"), filepath.Join(t.TempDir(), "solo")); err != nil {
			t.Fatal(err)
		}
		gather(t, p, root, contains("solo/status.json removed"))

		// A corrupt document is an error and the watch goes on.
		writeRaw(t, filepath.Join(root, StatusFile), `nope`)
		gather(t, p, root, contains("status.json: error"))
		setRuns(t, filepath.Join(root, "moved/t", StatusFile), 78)
		gather(t, p, root, contains("moved/t/status.json=78"))

		// Hidden directories, other names, lock and temp files are not
		// documents.
		writeRaw(t, filepath.Join(root, ".git", "x", StatusFile), `{"runs": 1}`)
		writeRaw(t, filepath.Join(root, "notes.json"), `{"runs": 1}`)
		writeRaw(t, filepath.Join(root, "status.json.lock"), `{"runs": 1}`)

		// The root removed: everything removed, then the end.
		os.RemoveAll(root)
		got = gather(t, p, root, contains("status.json removed", "acme/web/fix-9/status.json removed", "deep/a/b/c/d/status.json removed", "moved/t/status.json removed"))
		for _, g := range got {
			if !strings.HasSuffix(g, " removed") {
				t.Errorf("unexpected entry %q: not a document", g)
			}
		}
		if err := p.failure(); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("got %v, want os.ErrNotExist", err)
		}
	})
}

// After events were lost (the kernel's queue overflowed), a rescan reports
// what changed meanwhile, removals included.
func TestWatchDirOverflowRescans(t *testing.T) {
	root := t.TempDir()
	docs := layout(t, root)
	w := watch.New(time.Hour) // never polls by itself
	defer w.Close()
	var got []string
	d := NewDir[Status](root, StatusFile)
	dw := &dirWatch[Status]{d: d, w: w, t: newTracker[Status](d.codec), root: root,
		yield: func(e Entry[Status], err error) bool {
			rel, _ := filepath.Rel(root, e.Path)
			switch {
			case err != nil:
				got = append(got, rel+": "+err.Error())
			case e.Removed:
				got = append(got, rel+" removed")
			default:
				got = append(got, fmt.Sprintf("%s=%d", rel, e.Value.Runs))
			}
			return true
		}}
	w.Add(root)
	dw.scan(root)
	got = nil
	setRuns(t, docs[1], 20)
	os.Remove(docs[4])
	os.MkdirAll(filepath.Join(root, "new"), 0o755)
	setRuns(t, filepath.Join(root, "new", StatusFile), 6)
	dw.apply(watch.Event{Op: watch.Overflow})
	want := []string{"acme/core/fix-1/status.json=20", "new/status.json=6", "solo/status.json removed"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after an overflow: %q, want %q", got, want)
	}
	if !w.Watching(filepath.Join(root, "new")) {
		t.Error("the rescan did not watch the new directory")
	}
}

// The tracker reports a document only when what a reader would get
// differs from what it last reported: a rewrite of the same bytes, a touch
// or the same corrupt bytes again are not news.
func TestTrackerReportsOnlyChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), StatusFile)
	tr := newTracker[Status](codecFor[Status]())
	step := func(what string, change func(), want string) {
		t.Helper()
		change()
		data, err := filestore.Read(path, path, DefaultMaxSize)
		e, err, changed := tr.report(path, data, err)
		got := "nothing"
		switch {
		case !changed:
		case err != nil:
			got = "error"
		case e.Removed:
			got = "removed"
		default:
			got = fmt.Sprint(e.Value.Runs)
		}
		if got != want {
			t.Errorf("%s: reported %s, want %s", what, got, want)
		}
	}
	none := func() {}
	later := time.Now().Add(time.Hour)
	step("missing", none, "nothing")
	step("created", func() { writeRaw(t, path, `{"runs": 1}`) }, "1")
	step("same bytes rewritten", func() { writeRaw(t, path, `{"runs": 1}`) }, "nothing")
	step("touched", func() { os.Chtimes(path, later, later) }, "nothing")
	step("changed", func() { writeRaw(t, path, `{"runs": 2}`) }, "2")
	step("corrupt", func() { writeRaw(t, path, `{"runs": 2`) }, "error")
	step("same corrupt bytes", func() { writeRaw(t, path, `{"runs": 2`) }, "nothing")
	step("other corrupt bytes", func() { writeRaw(t, path, `{"runs": 3`) }, "error")
	step("repaired", func() { writeRaw(t, path, `{"runs": 2}`) }, "2")
	step("removed", func() { os.Remove(path) }, "removed")
	step("still removed", none, "nothing")
	step("a link", func() { os.Symlink("/dev/zero", path) }, "error")
	step("the same link", none, "nothing")
}

// A directory moved out and another moved in at its name before the watch
// reads the events: the new one is watched (the old one's Gone event must
// not end its successor's watch).
func TestWatchDirReplacedDirectory(t *testing.T) {
	watchModes(t, func(t *testing.T, opts ...Option) {
		root, outside := t.TempDir(), t.TempDir()
		task := filepath.Join(root, "t")
		os.Mkdir(task, 0o755)
		setRuns(t, filepath.Join(task, StatusFile), 1)
		p := pull(t, NewDir[Status](root, StatusFile, opts...).Watch(bounded(t)))
		gather(t, p, root, contains("t/status.json=1"))

		os.Rename(task, filepath.Join(outside, "old"))
		staged := filepath.Join(outside, "new")
		os.Mkdir(staged, 0o755)
		setRuns(t, filepath.Join(staged, StatusFile), 2)
		os.Rename(staged, task)
		gather(t, p, root, contains("t/status.json=2"))

		setRuns(t, filepath.Join(task, StatusFile), 3)
		gather(t, p, root, contains("t/status.json=3"))
	})
}

// A watch whose ctx has ended yields nothing, not even the current state.
func TestWatchEndedContext(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, StatusFile)
	setRuns(t, path, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for e, err := range Watch(ctx, path) {
		t.Errorf("Watch yielded %+v, %v", e, err)
	}
	for e, err := range WatchDir(ctx, root) {
		t.Errorf("WatchDir yielded %+v, %v", e, err)
	}
}
