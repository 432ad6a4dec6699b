package core_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/agentstate/core/core"
	"github.com/agentstate/core/status"
)

func Example() {
	root, _ := os.MkdirTemp("", "agents")
	defer os.RemoveAll(root)

	c, err := core.New(root)
	if err != nil {
		log.Fatal(err)
	}

	// Create a workspace and mark it running, under the status lock.
	ws := core.Workspace{Org: "acme", Repo: "api", Task: "fix-42"}
	if err := c.Fs().MkdirAll(ws.String(), 0o755); err != nil {
		log.Fatal(err)
	}
	p, err := c.StatusPath(ws.Org, ws.Repo, ws.Task)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if _, err := status.Mutate(ctx, p, func(s *status.Status) error {
		s.Repo, s.Task = ws.Repo, ws.Task
		return s.Transition(status.Running)
	}); err != nil {
		log.Fatal(err)
	}

	// A tracked background task: Shutdown cancels it and waits for it.
	done := make(chan struct{})
	if err := c.Go("completion-handler", func(ctx context.Context) {
		defer close(done)
		_, err := status.Mutate(ctx, p, func(s *status.Status) error {
			return s.Transition(status.Completed, status.Running)
		})
		if err != nil {
			c.Log().Error("complete", "workspace", ws, "err", err)
		}
	}); err != nil {
		log.Fatal(err)
	}
	<-done

	list, _ := c.Workspaces(ctx)
	st, _ := status.Load(ctx, p)
	fmt.Println(list, st.State)

	if err := c.Shutdown(ctx); err != nil {
		log.Fatal(err)
	}
	// Output: [acme/api/fix-42] completed
}

func ExampleCore_Lock() {
	root, _ := os.MkdirTemp("", "agents")
	defer os.RemoveAll(root)
	c, _ := core.New(root)
	defer c.Shutdown(context.Background())

	// Every caller gets the same mutex for a name, even the first ones.
	fmt.Println(c.Lock("acme/api/fix-42") == c.Lock("acme/api/fix-42"))

	mu := c.Lock("acme/api/fix-42")
	mu.Lock()
	// ... work that only one goroutine of this process may do at a time ...
	mu.Unlock()
	// Output: true
}

func ExampleCore_Shutdown() {
	root, _ := os.MkdirTemp("", "agents")
	defer os.RemoveAll(root)
	c, _ := core.New(root)

	release := make(chan struct{})
	started := make(chan struct{})
	c.Go("stubborn", func(ctx context.Context) { // ignores ctx
		close(started)
		<-release
	})
	<-started

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	err := c.Shutdown(ctx)
	var serr *core.ShutdownError
	if errors.As(err, &serr) {
		fmt.Println(errors.Is(err, context.DeadlineExceeded), serr.Running)
	}

	// Shutdown may be called again; it succeeds once the task returns.
	close(release)
	fmt.Println(c.Shutdown(context.Background()))

	// Go after Shutdown starts nothing.
	err = c.Go("late", func(context.Context) {})
	fmt.Println(errors.Is(err, core.ErrClosed))
	// Output:
	// true [stubborn]
	// <nil>
	// true
}

func ExampleCore_Status() {
	root, _ := os.MkdirTemp("", "agents")
	defer os.RemoveAll(root)
	c, err := core.New(root)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Shutdown(context.Background())
	if err := c.Fs().MkdirAll("acme/api/fix-42", 0o755); err != nil {
		log.Fatal(err)
	}

	ws, err := c.Status("acme", "api", "fix-42")
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	ws.Mutate(ctx, status.Transition(status.Queued))
	// Claim the task only if it is still queued: of two racing spawners,
	// one gets the task and the other a conflict.
	_, err = ws.Mutate(ctx, status.Transition(status.Running, status.Queued))
	fmt.Println("first claim:", err)
	_, err = ws.Mutate(ctx, status.Transition(status.Running, status.Queued))
	fmt.Println("second claim is a conflict:", errors.Is(err, status.ErrConflict))
	// Output:
	// first claim: <nil>
	// second claim is a conflict: true
}
