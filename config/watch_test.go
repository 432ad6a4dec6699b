package config

import (
	"context"
	"errors"
	"iter"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentstate/core/fs"
)

func withPoll(d time.Duration) WatchOption { return func(o *watchOptions) { o.poll = d } }

// watchModes runs a test with inotify (Linux) and with polling.
func watchModes(t *testing.T, test func(t *testing.T, opts ...WatchOption)) {
	t.Run("native", func(t *testing.T) {
		if runtime.GOOS != "linux" {
			t.Skip("the native watch polls on " + runtime.GOOS)
		}
		test(t)
	})
	t.Run("poll", func(t *testing.T) { test(t, withPoll(time.Millisecond)) })
}

// reloader runs WatchFile in its goroutine, as a service does, and
// records the changes its OnChange sees and the errors it yields.
type reloader struct {
	t       *testing.T
	changes chan Change
	errs    chan error
	stop    func()
}

func startReloader(t *testing.T, c *Config, path string, keys []string, opts ...WatchOption) *reloader {
	r := &reloader{t: t, changes: make(chan Change, 64), errs: make(chan error, 64)}
	cancelSub := c.OnChange(func(ch Change) { r.changes <- ch }, keys...)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := c.WatchFile(ctx, path, func(err error) { r.errs <- err }, opts...); !errors.Is(err, context.Canceled) {
			t.Errorf("WatchFile returned %v, want context.Canceled once stopped", err)
		}
	})
	r.stop = func() { cancel(); wg.Wait(); cancelSub() }
	t.Cleanup(r.stop)
	return r
}

// next returns the next change; a watch that stays silent fails the test
// when the bound passes (a failure, not a timing assertion).
func (r *reloader) next() Change {
	r.t.Helper()
	return r.nextChange(func(error) bool { return false })
}

// nextSkippingLoadErrors is next for a file written in place: failed
// loads of a truncated file are skipped, any other error fails the test.
func (r *reloader) nextSkippingLoadErrors() Change {
	r.t.Helper()
	return r.nextChange(func(err error) bool {
		var ce *Error
		return errors.As(err, &ce) && ce.Op == "load"
	})
}

// nextChange returns the next change, skipping the errors skip accepts.
func (r *reloader) nextChange(skip func(error) bool) Change {
	r.t.Helper()
	for {
		select {
		case ch := <-r.changes:
			return ch
		case err := <-r.errs:
			if !skip(err) {
				r.t.Fatalf("reload failed: %v", err)
				return Change{}
			}
		case <-time.After(30 * time.Second):
			r.t.Fatal("no change seen")
			return Change{}
		}
	}
}

func (r *reloader) nextErr() error {
	r.t.Helper()
	select {
	case ch := <-r.changes:
		r.t.Fatalf("change %v, want an error", ch.Keys)
	case err := <-r.errs:
		return err
	case <-time.After(30 * time.Second):
		r.t.Fatal("no error seen")
	}
	return nil
}

func save(t *testing.T, path, content string) {
	t.Helper()
	if err := fs.WriteAtomic(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Every real change fires OnChange once; a rewrite of the same content, a
// touch, a chmod or a change to another file fires nothing.
func TestWatchFileOncePerRealChange(t *testing.T) {
	watchModes(t, func(t *testing.T, opts ...WatchOption) {
		dir := t.TempDir()
		path := filepath.Join(dir, "agents.yaml")
		save(t, path, "db:\n  host: a\nworkers: 2\n")
		c := New()
		if err := c.LoadFile(path); err != nil {
			t.Fatal(err)
		}
		r := startReloader(t, c, path, nil, opts...)

		save(t, path, "db:\n  host: b\nworkers: 2\n")
		if ch := r.next(); !slices.Equal(ch.Keys, []string{"db.host"}) || c.Snapshot().String("db.host") != "b" {
			t.Fatalf("change %v, db.host=%q", ch.Keys, c.Snapshot().String("db.host"))
		}
		// A write in place is read when it is closed; a poll can come
		// between its truncation and its write, so with polling the test
		// writes by rename only.
		inPlace := save
		if len(opts) == 0 {
			inPlace = func(t *testing.T, path, content string) { os.WriteFile(path, []byte(content), 0o644) }
		}
		// Not changes: the same content again (by rename and in place), a
		// touch, a chmod, the same content reformatted, another file.
		save(t, path, "db:\n  host: b\nworkers: 2\n")
		inPlace(t, path, "db:\n  host: b\nworkers: 2\n")
		later := time.Now().Add(time.Hour)
		os.Chtimes(path, later, later)
		os.Chmod(path, 0o600)
		save(t, path, "workers: 2\ndb: {host: b}\n")
		save(t, filepath.Join(dir, "other.yaml"), "x: 1\n")
		// A real change: it must be the next one seen. A read for an
		// earlier event may catch an in-place write truncated (WatchFile's
		// doc): that load fails (an empty document does not parse) and is
		// skipped here; it is never a change.
		inPlace(t, path, "db:\n  host: b\nworkers: 3\n")
		if ch := r.nextSkippingLoadErrors(); !slices.Equal(ch.Keys, []string{"workers"}) || c.Snapshot().Int("workers") != 3 {
			t.Fatalf("change %v after no-op rewrites, want [workers] only", ch.Keys)
		}
	})
}

// A load that fails is an error and changes nothing; the repair is one
// change.
func TestWatchFileBadContent(t *testing.T) {
	watchModes(t, func(t *testing.T, opts ...WatchOption) {
		path := filepath.Join(t.TempDir(), "agents.json")
		save(t, path, `{"workers": 2}`)
		c := New()
		c.LoadFile(path)
		r := startReloader(t, c, path, nil, opts...)
		save(t, path, `{"workers": `)
		var ce *Error
		bad := r.nextErr()
		if !errors.As(bad, &ce) || ce.Op != "load" || ce.Key != path {
			t.Fatalf("got %v, want a load error naming %s", bad, path)
		}
		if c.Snapshot().Int("workers") != 2 {
			t.Fatal("a failed load changed the config")
		}
		os.Remove(path)
		// The watch's first load may run after the bad save and its
		// event: the same content fails to load twice.
		for err := r.nextErr(); !errors.Is(err, os.ErrNotExist); err = r.nextErr() {
			if err.Error() != bad.Error() {
				t.Fatalf("removed file: %v", err)
			}
		}
		save(t, path, `{"workers": 4}`)
		ch := r.nextChange(func(err error) bool { return errors.Is(err, os.ErrNotExist) })
		if !slices.Equal(ch.Keys, []string{"workers"}) || c.Snapshot().Int("workers") != 4 {
			t.Fatalf("repair: %v", ch.Keys)
		}
	})
}

// The first load happens once the watch is in place: a change between an
// earlier LoadFile and WatchFile is not missed, and a file that did not
// change is not a change.
func TestWatchFileFirstLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agents.json")
	save(t, path, `{"workers": 2}`)
	c := New()
	c.LoadFile(path)
	save(t, path, `{"workers": 5}`) // before the watch
	r := startReloader(t, c, path, nil)
	if ch := r.next(); !slices.Equal(ch.Keys, []string{"workers"}) {
		t.Fatalf("first load: %v", ch.Keys)
	}
}

// Kubernetes mounts a ConfigMap key as a link through "..data", a link to
// a timestamped directory that is swapped by rename.
func TestWatchFileConfigMapSwap(t *testing.T) {
	watchModes(t, func(t *testing.T, opts ...WatchOption) {
		dir := t.TempDir()
		version := func(name, content string) {
			os.Mkdir(filepath.Join(dir, name), 0o755)
			os.WriteFile(filepath.Join(dir, name, "agents.json"), []byte(content), 0o644)
			os.Symlink(name, filepath.Join(dir, "..data_tmp"))
			if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
				t.Fatal(err)
			}
		}
		version("..v1", `{"workers": 1}`)
		path := filepath.Join(dir, "agents.json")
		os.Symlink("..data/agents.json", path)
		c := New()
		c.LoadFile(path)
		r := startReloader(t, c, path, nil, opts...)
		version("..v2", `{"workers": 2}`)
		if ch := r.next(); !slices.Equal(ch.Keys, []string{"workers"}) || c.Snapshot().Int("workers") != 2 {
			t.Fatalf("after the swap: %v workers=%d", ch.Keys, c.Snapshot().Int("workers"))
		}
	})
}

// With WithEnv, a reload publishes the file and its overrides in one
// write: a key pinned by the environment fires nothing when the file
// changes something else.
func TestWatchFileWithEnv(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agents.json")
	environ := []string{"AGENTS_DB__PORT=6543"}
	save(t, path, `{"db": {"port": 5432}, "workers": 2}`)
	c := New()
	c.LoadFile(path)
	c.FromEnv("AGENTS", environ)
	r := startReloader(t, c, path, []string{"db.port", "workers"}, WithEnv("AGENTS", environ))
	save(t, path, `{"db": {"port": 5432}, "workers": 3}`)
	if ch := r.next(); !slices.Equal(ch.Keys, []string{"workers"}) {
		t.Fatalf("change %v, want [workers] only", ch.Keys)
	}
	if c.Snapshot().Int64("db.port") != 6543 {
		t.Fatalf("db.port = %d: the override was dropped", c.Snapshot().Int64("db.port"))
	}
}

// WithEnv's options apply to every reload: strict, an override whose key
// the new file lacks fails the reload and publishes nothing.
func TestWatchFileWithStrictEnv(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agents.json")
	environ := []string{"AGENTS_DB__PORT=6543", "AGENTS_CONFIG=" + path}
	save(t, path, `{"db": {"port": 5432}, "workers": 2}`)
	c := New()
	r := startReloader(t, c, path, nil, WithEnv("AGENTS", environ, RejectUnknownKeys(), IgnoreEnv("AGENTS_CONFIG")))
	r.next()
	save(t, path, `{"database": {"port": 5432}, "workers": 3}`)
	if err := r.nextErr(); !errors.Is(err, ErrUnknownKey) || !strings.Contains(err.Error(), "AGENTS_DB__PORT") {
		t.Fatalf("reload of a file without db.port: %v, want ErrUnknownKey naming AGENTS_DB__PORT", err)
	}
	if s := c.Snapshot(); s.Int("workers") != 2 || s.Int("db.port") != 6543 || s.Has("config") {
		t.Fatalf("after a refused reload: %v", s.All())
	}
}

// CONTROL for TestWatchFileWithEnv: reloading as the package doc's
// start-up code does (LoadFile, then FromEnv: two writes) fires OnChange
// for the pinned key twice on a change that did not touch it, and lets
// readers see the file's value in between. The test requires it.
func TestControlReloadInTwoWritesDoubleFires(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agents.json")
	environ := []string{"AGENTS_DB__PORT=6543"}
	save(t, path, `{"db": {"port": 5432}, "workers": 2}`)
	c := New()
	c.LoadFile(path)
	c.FromEnv("AGENTS", environ)
	var fired []int64
	c.OnChange(func(ch Change) { fired = append(fired, ch.New.Int64("db.port")) }, "db.port")
	save(t, path, `{"db": {"port": 5432}, "workers": 3}`)
	c.LoadFile(path) // the naive reload
	c.FromEnv("AGENTS", environ)
	if len(fired) < 2 {
		t.Fatalf("CONTROL: db.port fired %v: the harness cannot tell", fired)
	}
	t.Logf("CONTROL: db.port fired %d times (%v) for a change to workers", len(fired), fired)
}

// Cancelling ctx ends the watch with ctx's error; removing the directory
// ends it with an error matching os.ErrNotExist. Nothing keeps running
// (goleak).
func TestWatchFileEnds(t *testing.T) {
	watchModes(t, func(t *testing.T, opts ...WatchOption) {
		dir := filepath.Join(t.TempDir(), "etc")
		os.Mkdir(dir, 0o755)
		path := filepath.Join(dir, "agents.json")
		save(t, path, `{}`)
		c := New()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		onError := func(err error) { t.Errorf("cancelled watch reported %v", err) }
		if err := c.WatchFile(ctx, path, onError, opts...); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled watch returned %v", err)
		}

		errs, end := make(chan error, 16), make(chan error, 1)
		go func() { end <- c.WatchFile(context.Background(), path, func(err error) { errs <- err }, opts...) }()
		// Wait until the watch has loaded once: a change is then seen.
		r := &reloader{t: t, changes: make(chan Change, 1), errs: errs}
		cancelSub := c.OnChange(func(ch Change) { r.changes <- ch })
		defer cancelSub()
		save(t, path, `{"a": 1}`)
		r.next()
		os.RemoveAll(dir)
		if err := <-end; !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "directory removed") {
			t.Fatalf("returned %v, want the directory's removal", err)
		}
	})
}

func TestWatchFileErrors(t *testing.T) {
	c := New()
	for name, tc := range map[string]struct {
		ctx  context.Context
		path string
		want string
	}{
		"nil context":       {nil, "x.json", "config: watch x.json: nil context"},
		"missing directory": {context.Background(), "/nonexistent/x.json", "config: watch /nonexistent/x.json: directory /nonexistent: no such file"},
	} {
		t.Run(name, func(t *testing.T) {
			onError := func(err error) { t.Errorf("reported %v, want it returned", err) }
			if err := c.WatchFile(tc.ctx, tc.path, onError); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("returned %v, want an error starting %q", err, tc.want)
			}
		})
	}
}

// A service that handles a failed load the way it handles other errors
// (it returns) keeps reloading: onError cannot end the watch, so the
// repair after a bad write is loaded.
func TestWatchFileReloadsAfterTheCallerSawAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agents.json")
	save(t, path, `{"workers": 2}`)
	c := New()
	c.LoadFile(path)
	repaired := make(chan Change, 1)
	defer c.OnChange(func(ch Change) { repaired <- ch }, "workers")()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	first := make(chan error, 1)
	wg.Go(func() {
		c.WatchFile(ctx, path, func(err error) {
			select {
			case first <- err: // the service logs it and returns
			default:
			}
		})
	})
	save(t, path, `{"workers": `)
	<-first
	save(t, path, `{"workers": 4}`)
	select {
	case <-repaired:
	case <-time.After(30 * time.Second):
		t.Fatal("the repair was not loaded after a failed load")
	}
	if c.Snapshot().Int("workers") != 4 {
		t.Fatalf("workers = %d after the repair", c.Snapshot().Int("workers"))
	}
}

// CONTROL for TestWatchFileReloadsAfterTheCallerSawAnError: a watch
// shaped as a sequence of load errors (reloading only while ranged over)
// stops for good when the loop body returns on the first error, as a
// service's error handling does; the repair is never loaded. The test
// requires it.
func TestControlWatchAsSequenceStopsAtTheFirstError(t *testing.T) {
	asSequence := func(c *Config, ctx context.Context, path string) iter.Seq[error] {
		return func(yield func(error) bool) {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			stopped := false
			c.WatchFile(ctx, path, func(err error) {
				if !stopped && !yield(err) {
					stopped = true
					cancel()
				}
			})
		}
	}
	path := filepath.Join(t.TempDir(), "agents.json")
	save(t, path, `{"workers": 2}`)
	c := New()
	c.LoadFile(path)
	loaded := make(chan struct{})
	defer c.OnChange(func(Change) { close(loaded) }, "workers")()
	watch := func() error {
		for err := range asSequence(c, context.Background(), path) {
			return err // the service logs it and returns
		}
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- watch() }()
	// Wait until the watch is in place and has loaded: then a bad write is
	// seen, and the loop returns on it.
	save(t, path, `{"workers": 3}`)
	<-loaded
	save(t, path, `{"workers": `)
	if err := <-done; err == nil {
		t.Fatal("CONTROL: the loop ended without an error")
	}
	save(t, path, `{"workers": 4}`) // the watch has ended: nothing loads it
	if c.Snapshot().Int("workers") == 4 {
		t.Fatal("CONTROL: the repair was loaded: the harness cannot tell")
	}
	t.Logf("CONTROL: workers = %d after the repair: the watch stopped at the first error", c.Snapshot().Int("workers"))
}

// A link to a file in another directory is reloaded when that file is
// replaced by rename there, when the link is re-pointed to a third
// directory, and then when the new target changes; a chain of links and a
// relative target with ".." are followed the same way. (WatchFile used to
// watch only the link's own directory: the first replace was never seen.)
func TestWatchFileLinkTargetElsewhere(t *testing.T) {
	watchModes(t, func(t *testing.T, opts ...WatchOption) {
		root := t.TempDir()
		for _, d := range []string{"etc", "srv", "srv2", "chain"} {
			os.Mkdir(filepath.Join(root, d), 0o755)
		}
		target := filepath.Join(root, "srv", "agents.json")
		save(t, target, `{"workers": 1}`)
		// etc/agents.json -> chain/link.json -> ../srv/agents.json
		if err := os.Symlink("../srv/agents.json", filepath.Join(root, "chain", "link.json")); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(root, "etc", "agents.json")
		if err := os.Symlink(filepath.Join(root, "chain", "link.json"), path); err != nil {
			t.Fatal(err)
		}
		c := New()
		if err := c.LoadFile(path); err != nil {
			t.Fatal(err)
		}
		r := startReloader(t, c, path, nil, opts...)
		save(t, target, `{"workers": 2}`) // a replace by rename, in srv
		if ch := r.next(); !slices.Equal(ch.Keys, []string{"workers"}) || c.Snapshot().Int("workers") != 2 {
			t.Fatalf("after the target's replace: %v workers=%d", ch.Keys, c.Snapshot().Int("workers"))
		}
		os.WriteFile(target, []byte(`{"workers": 3}`), 0o644) // in place
		if r.nextSkippingLoadErrors(); c.Snapshot().Int("workers") != 3 {
			t.Fatalf("after an in-place write of the target: workers=%d", c.Snapshot().Int("workers"))
		}
		// Re-point the middle link, by rename, to srv2.
		other := filepath.Join(root, "srv2", "agents.json")
		save(t, other, `{"workers": 4}`)
		tmp := filepath.Join(root, "chain", "link.tmp")
		if err := os.Symlink(other, tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(root, "chain", "link.json")); err != nil {
			t.Fatal(err)
		}
		if r.next(); c.Snapshot().Int("workers") != 4 {
			t.Fatalf("after the link moved: workers=%d", c.Snapshot().Int("workers"))
		}
		save(t, other, `{"workers": 5}`)
		if r.next(); c.Snapshot().Int("workers") != 5 {
			t.Fatalf("after the new target's replace: workers=%d", c.Snapshot().Int("workers"))
		}
	})
}

// resolve lists the entries that decide what a path names: the path, each
// link on the way (in any directory), and the file at the end, as the
// kernel walks it (".." after a link leaves the link's target).
func TestResolveFollowsLinks(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"a", "b/deep", "vol/..v1"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	os.Symlink("b/deep", filepath.Join(root, "a", "l")) // dangling from a/: resolved against a/
	os.Symlink(filepath.Join(root, "b", "deep"), filepath.Join(root, "dl"))
	os.Symlink("..v1", filepath.Join(root, "vol", "..data"))
	os.Symlink("..data/x.json", filepath.Join(root, "vol", "x.json"))
	for _, tc := range []struct {
		path string
		want []entry
	}{
		{"vol/x.json", []entry{{"vol", "x.json"}, {"vol", "..data"}, {"vol/..v1", "x.json"}}},
		{"dl/../c.json", []entry{{".", "dl"}, {"b", "c.json"}}}, // .. of b/deep is b
		{"a/l/y.json", []entry{{"a", "l"}, {"a", "b"}}},         // a/b is missing: the walk stops there
		{"plain.json", []entry{{".", "plain.json"}}},
	} {
		got := resolve(root + string(filepath.Separator) + filepath.FromSlash(tc.path)) // not Join: it would clean ".."
		want := map[entry]bool{}
		for _, e := range tc.want {
			want[entry{filepath.Join(root, e.dir), e.name}] = true
		}
		if !maps.Equal(got, want) {
			t.Errorf("resolve(%s) = %v, want %v", tc.path, got, want)
		}
	}
}
