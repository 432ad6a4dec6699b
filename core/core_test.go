package core

import (
	"bytes"
	"context"
	"errors"
	iofs "io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentstate/core/config"
	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/internal/deepdiff"
	"github.com/agentstate/core/status"
)

func newCore(t *testing.T, opts ...Option) *Core {
	t.Helper()
	return newCoreAt(t, t.TempDir(), opts...)
}

func newCoreAt(t *testing.T, root string, opts ...Option) *Core {
	t.Helper()
	c, err := New(root, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Shutdown(context.Background()); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return c
}

func TestNewRequiresRoot(t *testing.T) {
	if _, err := New(""); !errors.Is(err, os.ErrInvalid) || !strings.Contains(err.Error(), "root") {
		t.Fatalf(`New(""): err = %v, want os.ErrInvalid naming the root`, err)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	_, err := New(missing)
	if !errors.Is(err, iofs.ErrNotExist) || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("New(missing root): err = %v, want ErrNotExist naming the path", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, iofs.ErrNotExist) {
		t.Fatalf("New(missing root) created it: %v", err)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(file); err == nil || !strings.Contains(err.Error(), file) {
		t.Fatalf("New(a file as root): err = %v, want an error naming the path", err)
	}
}

func TestNewDefaults(t *testing.T) {
	c := newCore(t, WithLogger(nil), WithConfig(nil))
	if c.Log() == nil || c.Config() == nil || c.Fs() == nil {
		t.Fatal("nil accessor")
	}
	if !filepath.IsAbs(c.Root()) {
		t.Errorf("Root() = %q, want absolute", c.Root())
	}
}

func TestNewRelativeRootIsMadeAbsolute(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.Mkdir("ws", 0o755); err != nil {
		t.Fatal(err)
	}
	c := newCoreAt(t, "ws")
	want, _ := filepath.Abs("ws")
	if c.Root() != want {
		t.Fatalf("Root() = %q, want %q", c.Root(), want)
	}
}

// The zero slog.Logger has no handler: every call on it panics, and the
// first task panic Core recovers and logs would then crash the process
// from the recovering goroutine. New refuses it.
func TestNewRefusesLoggerWithoutHandler(t *testing.T) {
	c, err := New(t.TempDir(), WithLogger(new(slog.Logger)))
	if err == nil || !strings.Contains(err.Error(), "handler") {
		if c != nil {
			c.Shutdown(context.Background())
		}
		t.Fatalf("New(WithLogger(&slog.Logger{})): err = %v, want an error naming the missing handler", err)
	}
}

// A nil Option (an optional setting left unset) is skipped, not called.
func TestNewSkipsNilOption(t *testing.T) {
	var unset Option
	newCore(t, unset)
}

func TestNewOptions(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	cfg := config.New()
	c := newCore(t, WithLogger(log), WithConfig(cfg))
	if c.Log() != log || c.Config() != cfg {
		t.Fatal("options not applied")
	}
}

func TestShutdownClosesFs(t *testing.T) {
	c, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Fs().WriteAtomic("a.json", []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Fs().ReadFile("a.json"); err == nil {
		t.Fatal("Fs still usable after Shutdown")
	}
	// A second Shutdown is harmless.
	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatalf("second shutdown: %v", err)
	}
}

func TestShutdownTimeoutKeepsFsOpenForStuckTasks(t *testing.T) {
	c := newCore(t)
	release := make(chan struct{})
	started := make(chan struct{})
	if err := c.Go("writer", func(context.Context) { close(started); <-release }); err != nil {
		t.Fatal(err)
	}
	<-started
	ctx, cancel := expired()
	defer cancel()
	err := c.Shutdown(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "writer") {
		t.Fatalf("shutdown: %v", err)
	}
	if err := c.Fs().WriteAtomic("still-open.json", []byte("{}"), 0o644); err != nil {
		t.Fatalf("Fs closed under a running task: %v", err)
	}
	close(release) // newCore's cleanup shuts down again and must succeed
}

func TestCoreLockFirstCallers(t *testing.T) {
	c := newCore(t)
	if n := firstCallerSplits(c.Lock, lockCallers, 200, false); n != 0 {
		t.Fatalf("%d rounds handed out two mutexes", n)
	}
}

func TestCorePanicGoesToLogger(t *testing.T) {
	var buf bytes.Buffer
	mu := new(sync.Mutex)
	c, err := New(t.TempDir(), WithLogger(slog.New(slog.NewTextHandler(lockedWriter{mu, &buf}, nil))))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Go("boom", func(context.Context) { panic("boom") }); err != nil {
		t.Fatal(err)
	}
	err = c.Shutdown(context.Background())
	var perr *PanicError
	if !errors.As(err, &perr) || perr.Task != "boom" {
		t.Fatalf("shutdown: %v, want a *PanicError for task boom", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(buf.String(), "task=boom") {
		t.Fatalf("panic not logged on the Core's logger:\n%s", buf.String())
	}
}

func TestStatusPath(t *testing.T) {
	c := newCore(t)
	p, err := c.StatusPath("acme", "api", "fix-42")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(c.Root(), "acme", "api", "fix-42", "status.json"); p != want {
		t.Fatalf("StatusPath = %q, want %q", p, want)
	}

	bad := []struct {
		org, repo, task string
		want            error
	}{
		{"", "api", "t", fs.ErrInvalidName},
		{"acme", "", "t", fs.ErrInvalidName},
		{"acme", "api", "", fs.ErrInvalidName},
		{".", "api", "t", fs.ErrInvalidName},
		{"acme", "..", "t", fs.ErrOutsideRoot},
		{"..", "..", "etc", fs.ErrOutsideRoot},
		{"acme", "a/b", "t", fs.ErrInvalidName},
		{"acme", "api", `t\u`, fs.ErrInvalidName},
		{"acme", "api", "/etc", fs.ErrInvalidName},
		{"acme", "api", "t\x00", fs.ErrInvalidName},
	}
	for _, b := range bad {
		p, err := c.StatusPath(b.org, b.repo, b.task)
		if !errors.Is(err, b.want) {
			t.Errorf("StatusPath(%q, %q, %q) = %q, %v; want error matching %v", b.org, b.repo, b.task, p, err, b.want)
		}
	}
}

func TestStatusPathRefusesLinkOutOfRoot(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	c := newCore(t)
	outside := t.TempDir()
	if err := os.Mkdir(filepath.Join(c.Root(), "acme"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(c.Root(), "acme", "api")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(outside, "t"), 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := c.StatusPath("acme", "api", "t")
	if !errors.Is(err, fs.ErrOutsideRoot) {
		t.Fatalf("StatusPath through a link out of the root = %q, %v; want ErrOutsideRoot", p, err)
	}
}

func TestWorkspaces(t *testing.T) {
	c := newCore(t)
	mk := func(name string, withStatus bool) {
		t.Helper()
		if err := c.Fs().MkdirAll(name, 0o755); err != nil {
			t.Fatal(err)
		}
		if withStatus {
			if err := c.Fs().WriteAtomic(name+"/status.json", []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk("acme/api/fix-42", true)
	mk("acme/api/fix-7", true)
	mk("acme/web/t1", true)
	mk("beta/cli/t", true)
	mk("acme/api/no-status", false)  // no document: not a workspace
	mk("acme/api/deep/er", true)     // too deep: deep has no status.json
	mk("acme/api/dir-status", false) // status.json is a directory
	mk("acme/api/dir-status/status.json", false)
	if err := c.Fs().WriteAtomic("stray.json", []byte("{}"), 0o644); err != nil { // a file at org level
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		if err := os.Symlink(filepath.Join(c.Root(), "acme"), filepath.Join(c.Root(), "link")); err != nil {
			t.Fatal(err)
		}
	}

	got, err := c.Workspaces(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []Workspace{{"acme", "api", "fix-42"}, {"acme", "api", "fix-7"}, {"acme", "web", "t1"}, {"beta", "cli", "t"}}
	if diff := deepdiff.Diff(want, got); diff != "" {
		t.Fatalf("Workspaces (-want +got):\n%s", diff)
	}
	// Every listed workspace has a StatusPath that exists.
	for _, w := range got {
		p, err := c.StatusPath(w.Org, w.Repo, w.Task)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", w, err)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Workspaces(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Workspaces(cancelled) err = %v", err)
	}
}

func TestWorkspacesEmptyRoot(t *testing.T) {
	c := newCore(t)
	got, err := c.Workspaces(context.Background())
	if err != nil || len(got) != 0 {
		t.Fatalf("Workspaces on an empty root = %v, %v", got, err)
	}
}

func TestStatusStore(t *testing.T) {
	c := newCore(t)
	if err := c.Fs().MkdirAll("acme/api/fix-42", 0o755); err != nil {
		t.Fatal(err)
	}
	ws, err := c.Status("acme", "api", "fix-42")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := c.StatusPath("acme", "api", "fix-42")
	if ws.Name() != p {
		t.Fatalf("store name = %q, want the StatusPath %q", ws.Name(), p)
	}
	st, err := ws.Mutate(context.Background(), status.Transition(status.Queued))
	if err != nil {
		t.Fatal(err)
	}
	if st.UpdatedAt.IsZero() {
		t.Errorf("a change through Core.Status left updated_at zero")
	}
	// The store and status.Load see the same file.
	if got, err := status.Load(context.Background(), p); err != nil || got.State != status.Queued {
		t.Fatalf("status.Load = %v, %v; want state queued", got.State, err)
	}
	if _, err := c.Status("acme", "..", "x"); !errors.Is(err, fs.ErrOutsideRoot) {
		t.Fatalf("Status with \"..\" = %v, want ErrOutsideRoot", err)
	}
}

// A task that decides the service must stop (a fatal error, a "kill"
// command) may call Shutdown itself. Shutdown waits for every task, the
// caller included, so it must be given the task's own context: that
// context is cancelled by the Shutdown, which then returns at once instead
// of waiting for its own caller, naming it as still running. The Fs stays
// open for the caller; the owner's Shutdown finishes the job.
func TestTaskCallingShutdownWithItsContextReturns(t *testing.T) {
	c, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	otherStopped := make(chan struct{})
	if err := c.Go("other", func(ctx context.Context) { <-ctx.Done(); close(otherStopped) }); err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		shutdownErr, goErr, writeErr error
	}
	done := make(chan outcome, 1)
	if err := c.Go("killer", func(ctx context.Context) {
		var o outcome
		o.shutdownErr = c.Shutdown(ctx)
		o.goErr = c.Go("late", func(context.Context) {})
		o.writeErr = c.Fs().WriteAtomic("after.json", []byte("{}"), 0o644)
		done <- o
	}); err != nil {
		t.Fatal(err)
	}
	o := <-done
	var serr *ShutdownError
	if !errors.As(o.shutdownErr, &serr) || !errors.Is(o.shutdownErr, context.Canceled) || !slices.Contains(serr.Running, "killer") {
		t.Errorf("Shutdown from a task = %v, want a *ShutdownError (context.Canceled) naming the task", o.shutdownErr)
	}
	if !errors.Is(o.goErr, ErrClosed) {
		t.Errorf("Go after a task's Shutdown = %v, want ErrClosed", o.goErr)
	}
	if o.writeErr != nil {
		t.Errorf("Fs closed under the task that called Shutdown: %v", o.writeErr)
	}
	<-otherStopped // the task's Shutdown cancelled the other tasks
	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatalf("owner's Shutdown after a task's: %v", err)
	}
	if _, err := c.Fs().ReadFile("after.json"); err == nil {
		t.Fatal("Fs still open after the owner's Shutdown")
	}
}
