package status_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentstate/core/status"
)

// A monitor follows a task instead of polling it: the current state
// first, then every change as it is committed.
func ExampleWatch() {
	dir, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "status.json")
	status.Create(context.Background(), path, status.Status{State: status.Queued})

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	next := map[status.State]status.State{status.Queued: status.Running, status.Running: status.Completed}
	for e, err := range status.Watch(ctx, path) {
		if err != nil {
			fmt.Println(err) // e.g. a corrupt document; the watch goes on
			continue
		}
		fmt.Println(e.Value.State)
		if e.Value.State.Final() {
			break
		}
		// Elsewhere (here, for the example), a worker moves the task on.
		status.Mutate(ctx, path, status.Transition(next[e.Value.State]))
	}
	// Output:
	// queued
	// running
	// completed
}

// List finds every status document under a root, whatever the layout. A
// corrupt one is reported with its offset, and the walk goes on.
func ExampleList() {
	root, _ := os.MkdirTemp("", "workspaces")
	defer os.RemoveAll(root)
	for _, task := range []string{"acme/core/fix-1", "acme/web/fix-2", "solo"} {
		path := filepath.Join(root, task, "status.json")
		os.MkdirAll(filepath.Dir(path), 0o755)
		status.Create(context.Background(), path, status.Status{State: status.Queued, Task: filepath.Base(task)})
	}
	os.WriteFile(filepath.Join(root, "acme/web/fix-2/status.json"), []byte(`{"status": "queued",}`), 0o644)

	for e, err := range status.List(root) {
		rel, _ := filepath.Rel(root, e.Path)
		if err != nil {
			var ce *status.CorruptError
			errors.As(err, &ce)
			fmt.Printf("%s: corrupt at byte %d\n", rel, ce.Offset)
			continue
		}
		fmt.Printf("%s: %s %s\n", rel, e.Value.Task, e.Value.State)
	}
	// Output:
	// acme/core/fix-1/status.json: fix-1 queued
	// acme/web/fix-2/status.json: corrupt at byte 21
	// solo/status.json: solo queued
}

// Mutate refuses a corrupt document for ever, so that nothing is lost;
// Quarantine moves it aside, keeping its bytes, and work resumes.
func ExampleQuarantine() {
	dir, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "status.json")
	os.WriteFile(path, []byte(`{"status": "runn`), 0o644) // a crashed in-place writer

	ctx := context.Background()
	_, err := status.Mutate(ctx, path, status.Transition(status.Queued))
	fmt.Println(errors.Is(err, status.ErrCorrupt))

	moved, err := status.Quarantine(ctx, path)
	fmt.Println(strings.HasPrefix(filepath.Base(moved), "status.json"+status.QuarantineSuffix), err)
	kept, _ := os.ReadFile(moved)
	fmt.Printf("%s\n", kept)

	st, err := status.Mutate(ctx, path, status.Transition(status.Queued))
	fmt.Println(st.State, err)
	// Output:
	// true
	// true <nil>
	// {"status": "runn
	// queued <nil>
}

// A dashboard follows every task under a root: the tasks there first, then
// each change, new task directories included.
func ExampleWatchDir() {
	root, _ := os.MkdirTemp("", "workspaces")
	defer os.RemoveAll(root)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	create := func(task string, st status.State) {
		path := filepath.Join(root, "acme", task, "status.json")
		os.MkdirAll(filepath.Dir(path), 0o755)
		status.Mutate(ctx, path, func(s *status.Status) error { s.Task, s.State = task, st; return nil })
	}
	create("fix-1", status.Running)

	seen := 0
	for e, err := range status.WatchDir(ctx, root) {
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(e.Value.Task, e.Value.State)
		seen++
		switch seen {
		case 1:
			create("fix-2", status.Queued) // a new task directory
		case 2:
			create("fix-1", status.Completed)
		}
		if seen == 3 {
			break
		}
	}
	// Output:
	// fix-1 running
	// fix-2 queued
	// fix-1 completed
}
