package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
)

// ErrClosed is returned (wrapped) by Go once Shutdown has been called.
var ErrClosed = errors.New("core: shut down")

// A ShutdownError is returned by Shutdown when its context ends before every
// task has returned. errors.Is(err, [context.DeadlineExceeded]) (or
// [context.Canceled]) holds for it.
type ShutdownError struct {
	// Running lists the names of the tasks still running, sorted, one
	// entry per task (a name started twice appears twice).
	Running []string
	// Err is the context's error.
	Err error
}

func (e *ShutdownError) Error() string {
	return fmt.Sprintf("core: shutdown: %v: %d task(s) still running: %s",
		e.Err, len(e.Running), strings.Join(e.Running, ", "))
}

func (e *ShutdownError) Unwrap() error { return e.Err }

// A PanicError records a panic recovered from a task started by Go. Shutdown
// returns it (joined with any others) once every task has returned.
type PanicError struct {
	Task  string // the name given to Go
	Value any    // the value passed to panic
	Stack []byte // the panicking goroutine's stack
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("core: task %q panicked: %v", e.Task, e.Value)
}

// Unwrap returns the panic value if it is an error, so that [errors.Is] sees
// through a panic(err).
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// Go runs fn in a new goroutine that c tracks under name. fn's context is
// cancelled when Shutdown is called; fn should return soon after.
//
// Once Shutdown has been called, Go starts nothing and returns an error
// wrapping [ErrClosed]. A nil fn is an error too. Names need not be unique;
// they only identify tasks in logs and in a [ShutdownError].
//
// If fn panics, the panic is recovered, logged at level Error with its stack
// on c.Log(), and returned as a *PanicError by Shutdown: one failed
// background task does not take the whole service down, and the failure is
// not lost either.
func (c *Core) Go(name string, fn func(ctx context.Context)) error {
	return c.tasks.start(name, fn)
}

// Running returns the names of the tasks started by Go that have not
// returned yet, sorted.
func (c *Core) Running() []string {
	return c.tasks.running()
}

// taskGroup tracks the goroutines started by [Core.Go].
type taskGroup struct {
	ctx    context.Context // every task's context
	cancel context.CancelFunc
	log    *slog.Logger

	mu      sync.Mutex
	closed  bool              // Shutdown was called: start nothing more
	nextID  uint64            // id of the next task
	live    map[uint64]string // running tasks: id -> name
	panics  []error           // *PanicError of tasks that panicked
	idle    chan struct{}     // closed once closed && len(live) == 0
	idleSet bool              // idle has been closed
}

func newTaskGroup(log *slog.Logger) *taskGroup {
	ctx, cancel := context.WithCancel(context.Background())
	return &taskGroup{
		ctx:    ctx,
		cancel: cancel,
		log:    log,
		live:   make(map[uint64]string),
		idle:   make(chan struct{}),
	}
}

func (g *taskGroup) start(name string, fn func(context.Context)) error {
	if fn == nil {
		return fmt.Errorf("core: go %q: nil func", name)
	}
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return fmt.Errorf("core: go %q: %w", name, ErrClosed)
	}
	id := g.nextID
	g.nextID++
	// Registered before the goroutine exists, so a Shutdown that starts
	// right after Go returns always waits for this task.
	g.live[id] = name
	g.mu.Unlock()

	go g.run(id, name, fn)
	return nil
}

func (g *taskGroup) run(id uint64, name string, fn func(context.Context)) {
	var perr *PanicError
	// Deferred so that a task ending in runtime.Goexit deregisters too.
	defer func() { g.finish(id, perr) }()
	perr = g.call(name, fn)
}

func (g *taskGroup) finish(id uint64, perr *PanicError) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.live, id)
	if perr != nil {
		g.panics = append(g.panics, perr)
	}
	g.maybeIdle()
}

// call runs fn and turns a panic into a *PanicError.
func (g *taskGroup) call(name string, fn func(context.Context)) (perr *PanicError) {
	defer func() {
		if v := recover(); v != nil {
			perr = &PanicError{Task: name, Value: v, Stack: debug.Stack()}
			g.logPanic(perr)
		}
	}()
	fn(g.ctx)
	return nil
}

// logPanic logs a recovered task panic. A panic of the caller's log
// handler is dropped: it must not turn the recovery into a crash, and
// Shutdown still reports the task's panic.
func (g *taskGroup) logPanic(perr *PanicError) {
	defer func() { _ = recover() }()
	g.log.Error("core: task panicked", "task", perr.Task, "panic", perr.Value, "stack", string(perr.Stack))
}

// maybeIdle closes idle when nothing runs and nothing more may start.
// g.mu must be held.
func (g *taskGroup) maybeIdle() {
	if g.closed && len(g.live) == 0 && !g.idleSet {
		g.idleSet = true
		close(g.idle)
	}
}

func (g *taskGroup) running() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.runningLocked()
}

func (g *taskGroup) runningLocked() []string {
	names := make([]string, 0, len(g.live))
	for _, n := range g.live {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// stop stops new tasks, cancels the running ones and waits for them until
// ctx ends; it reports whether every task has returned. It may be called
// again (e.g. with a longer deadline) after it timed out.
func (g *taskGroup) stop(ctx context.Context) (allDone bool, err error) {
	g.mu.Lock()
	if !g.closed {
		g.closed = true
		g.cancel()
		g.maybeIdle()
	}
	g.mu.Unlock()

	select {
	case <-g.idle:
	case <-ctx.Done():
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.idleSet { // also when the last task returned just as ctx ended
		return true, errors.Join(g.panics...)
	}
	serr := &ShutdownError{Running: g.runningLocked(), Err: ctx.Err()}
	if len(g.panics) == 0 {
		return false, serr // keep the concrete type for callers that assert it
	}
	return false, errors.Join(append([]error{serr}, g.panics...)...)
}
