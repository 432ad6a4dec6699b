package racetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// tasks runs a server's loops as tracked background work: Go starts a
// named task with a context that Shutdown cancels; Shutdown waits for every
// task, or reports those still running when its ctx ends.
//
// It is the shape of core's Go/Shutdown; the suite uses its own until the
// core package offers them.
type tasks struct {
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	closed  bool
	running map[int]string
	next    int
	idle    chan struct{} // closed when running is empty after close
}

func newTasks(parent context.Context) *tasks {
	ctx, cancel := context.WithCancel(parent)
	return &tasks{ctx: ctx, cancel: cancel, running: map[int]string{}, idle: make(chan struct{})}
}

func (t *tasks) Go(name string, fn func(context.Context)) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return errors.New("tasks: shut down")
	}
	id := t.next
	t.next++
	t.running[id] = name
	go func() {
		defer t.finish(id)
		fn(t.ctx)
	}()
	return nil
}

func (t *tasks) finish(id int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.running, id)
	if t.closed && len(t.running) == 0 {
		close(t.idle)
	}
}

func (t *tasks) Shutdown(ctx context.Context) error {
	t.mu.Lock()
	if !t.closed {
		t.closed = true
		if len(t.running) == 0 {
			close(t.idle)
		}
	}
	t.mu.Unlock()
	t.cancel()
	select {
	case <-t.idle:
		return nil
	case <-ctx.Done():
		t.mu.Lock()
		defer t.mu.Unlock()
		return fmt.Errorf("shutdown: %w: %d task(s) still running", ctx.Err(), len(t.running))
	}
}
