package core

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/agentstate/core/logger"
)

// nilCtx is a nil context.Context that vet does not flag at the call site.
var nilCtx context.Context

// The control: the task group itself dereferences its context, so a
// Shutdown that passed a nil one on would panic.
func TestTaskGroupStopNilContextPanicsControl(t *testing.T) {
	g := newTaskGroup(slog.New(slog.DiscardHandler))
	defer g.stop(context.Background())
	defer func() {
		if recover() == nil {
			t.Fatal("control: stop(nil) did not panic; the Shutdown test below proves nothing")
		}
	}()
	g.stop(nilCtx)
}

func TestShutdownNilContextIsAnErrorAndStopsNothing(t *testing.T) {
	c := newCore(t)
	err := c.Shutdown(nilCtx)
	if !errors.Is(err, os.ErrInvalid) || !strings.HasPrefix(err.Error(), "core: shutdown:") {
		t.Fatalf("Shutdown(nil) = %v, want a core: shutdown error matching os.ErrInvalid", err)
	}
	done := make(chan struct{})
	if err := c.Go("after", func(context.Context) { close(done) }); err != nil {
		t.Fatalf("Go after Shutdown(nil): %v (Shutdown(nil) must stop nothing)", err)
	}
	<-done
	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestWorkspacesNilContext(t *testing.T) {
	c := newCore(t)
	if _, err := c.Workspaces(nilCtx); !errors.Is(err, os.ErrInvalid) {
		t.Fatalf("Workspaces(nil) = %v, want an error matching os.ErrInvalid", err)
	}
}

// A typed-nil handler compiles and makes every call on the logger panic,
// including the one that would log a recovered task panic.
func TestNewRefusesLoggerWithNilHandler(t *testing.T) {
	for _, l := range []*slog.Logger{
		slog.New((*slog.TextHandler)(nil)),
		slog.New((*slog.JSONHandler)(nil)),
	} {
		c, err := New(t.TempDir(), WithLogger(l))
		if c != nil {
			c.Shutdown(context.Background())
		}
		if !errors.Is(err, logger.ErrNilLogger) || !strings.Contains(err.Error(), "handler") ||
			!strings.HasPrefix(err.Error(), "core: new:") {
			t.Fatalf("New(WithLogger(%T handler)) = %v, want a core: new error matching logger.ErrNilLogger", l.Handler(), err)
		}
	}
}
