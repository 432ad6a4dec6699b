package core

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentstate/core/internal/deepdiff"
)

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// expired returns a context whose deadline has already passed.
func expired() (context.Context, context.CancelFunc) {
	return context.WithDeadline(context.Background(), time.Unix(0, 0))
}

func TestShutdownCancelsAndWaits(t *testing.T) {
	g := newTaskGroup(discard())
	const n = 10
	var started sync.WaitGroup
	var finished atomic.Int32
	started.Add(n)
	for range n {
		if err := g.start("worker", func(ctx context.Context) {
			started.Done()
			<-ctx.Done()
			finished.Add(1)
		}); err != nil {
			t.Fatal(err)
		}
	}
	started.Wait()
	if err := g.shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	// Shutdown returned: every task must have returned before it did.
	if got := finished.Load(); got != n {
		t.Fatalf("%d of %d tasks had returned when shutdown returned", got, n)
	}
	if r := g.running(); len(r) != 0 {
		t.Fatalf("running after shutdown: %v", r)
	}
}

// TestShutdownWaitsForTaskStartedJustBefore: a task registered by Go is
// waited for even if its goroutine has not been scheduled yet.
func TestShutdownWaitsForTaskStartedJustBefore(t *testing.T) {
	for range 100 {
		g := newTaskGroup(discard())
		var ran atomic.Bool
		if err := g.start("late", func(context.Context) { ran.Store(true) }); err != nil {
			t.Fatal(err)
		}
		if err := g.shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !ran.Load() {
			t.Fatal("shutdown returned before a started task ran")
		}
	}
}

func TestShutdownDeadlineNamesStuckTasks(t *testing.T) {
	g := newTaskGroup(discard())
	release := make(chan struct{})
	var started sync.WaitGroup
	started.Add(2)
	stuck := func(context.Context) { started.Done(); <-release } // ignores ctx
	for _, name := range []string{"stuck-b", "stuck-a"} {
		if err := g.start(name, stuck); err != nil {
			t.Fatal(err)
		}
	}
	started.Wait()

	ctx, cancel := expired()
	defer cancel()
	err := g.shutdown(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("shutdown error %v does not wrap context.DeadlineExceeded", err)
	}
	var serr *ShutdownError
	if !errors.As(err, &serr) {
		t.Fatalf("shutdown error %T is not a *ShutdownError", err)
	}
	if diff := deepdiff.Diff([]string{"stuck-a", "stuck-b"}, serr.Running); diff != "" {
		t.Errorf("ShutdownError.Running (-want +got):\n%s", diff)
	}
	if msg := err.Error(); !strings.Contains(msg, "stuck-a, stuck-b") {
		t.Errorf("error message %q does not name the stuck tasks", msg)
	}

	// Shutdown can be retried: once the tasks return it succeeds.
	close(release)
	if err := g.shutdown(context.Background()); err != nil {
		t.Fatalf("second shutdown: %v", err)
	}
}

func TestGoAfterShutdown(t *testing.T) {
	g := newTaskGroup(discard())
	if err := g.shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	var ran atomic.Bool
	err := g.start("too-late", func(context.Context) { ran.Store(true) })
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("go after shutdown: err = %v, want ErrClosed", err)
	}
	if !strings.Contains(err.Error(), `"too-late"`) {
		t.Errorf("error %q does not name the task", err)
	}
	if err := g.shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ran.Load() {
		t.Fatal("a task started after shutdown ran")
	}
}

func TestGoNilFunc(t *testing.T) {
	g := newTaskGroup(discard())
	if err := g.start("nil", nil); err == nil {
		t.Fatal("nil func accepted")
	}
	if err := g.shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestTaskPanicIsRecoveredLoggedAndReported(t *testing.T) {
	var logs bytes.Buffer
	var logMu sync.Mutex
	log := slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logs}, nil))
	g := newTaskGroup(log)

	boom := errors.New("boom")
	if err := g.start("bad", func(context.Context) { panic(boom) }); err != nil {
		t.Fatal(err)
	}
	healthy := make(chan struct{})
	if err := g.start("good", func(ctx context.Context) { <-ctx.Done(); close(healthy) }); err != nil {
		t.Fatal(err)
	}

	err := g.shutdown(context.Background())
	<-healthy // the other task kept running until shutdown cancelled it
	var perr *PanicError
	if !errors.As(err, &perr) {
		t.Fatalf("shutdown error %v does not carry a *PanicError", err)
	}
	if perr.Task != "bad" || !errors.Is(err, boom) {
		t.Errorf("PanicError = {Task: %q, Value: %v}, want task \"bad\" wrapping boom", perr.Task, perr.Value)
	}
	if !bytes.Contains(perr.Stack, []byte("TestTaskPanicIsRecoveredLoggedAndReported")) {
		t.Errorf("stack does not show the panicking function:\n%s", perr.Stack)
	}
	logMu.Lock()
	out := logs.String()
	logMu.Unlock()
	if !strings.Contains(out, "level=ERROR") || !strings.Contains(out, "task=bad") {
		t.Errorf("panic not logged at error level with the task name:\n%s", out)
	}
}

// panickyHandler is a faulty handler: Handle panics.
type panickyHandler struct{ slog.Handler }

func (panickyHandler) Enabled(context.Context, slog.Level) bool  { return true }
func (panickyHandler) Handle(context.Context, slog.Record) error { panic("handler broke") }

// A handler that panics while the task panic is logged must not turn the
// recovered panic into a crash: the task's panic is still reported.
func TestTaskPanicWithPanickingLogHandler(t *testing.T) {
	g := newTaskGroup(slog.New(panickyHandler{slog.DiscardHandler}))
	if err := g.start("bad", func(context.Context) { panic("boom") }); err != nil {
		t.Fatal(err)
	}
	var perr *PanicError
	if err := g.shutdown(context.Background()); !errors.As(err, &perr) || perr.Value != "boom" {
		t.Fatalf("shutdown: %v, want the task's *PanicError", err)
	}
}

func TestTaskGoexitIsNotAPanic(t *testing.T) {
	g := newTaskGroup(discard())
	if err := g.start("exit", func(context.Context) { runtime.Goexit() }); err != nil {
		t.Fatal(err)
	}
	if err := g.shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown after Goexit: %v", err)
	}
}

func TestConcurrentShutdownCallersAllWait(t *testing.T) {
	g := newTaskGroup(discard())
	release := make(chan struct{})
	var returned atomic.Bool
	if err := g.start("slow", func(context.Context) { <-release; returned.Store(true) }); err != nil {
		t.Fatal(err)
	}
	const callers = 4
	errs := make(chan error, callers)
	var returnedEarly atomic.Bool
	for range callers {
		go func() {
			err := g.shutdown(context.Background())
			if !returned.Load() {
				returnedEarly.Store(true)
			}
			errs <- err
		}()
	}
	close(release)
	for range callers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if returnedEarly.Load() {
		t.Fatal("a Shutdown call returned before the task did")
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
