package migration_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status"
)

// newWorkspace creates <tmp>/acme/api/fix-42 and returns the path of its
// status.json and a function that removes everything again.
func newWorkspace() (path string, cleanup func()) {
	root, err := os.MkdirTemp("", "migration")
	if err != nil {
		log.Fatal(err)
	}
	dir := filepath.Join(root, "acme", "api", "fix-42")
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		log.Fatal(err)
	}
	return filepath.Join(dir, "status.json"), func() { os.RemoveAll(root) }
}

// Pattern 1: ReadStatus + change + writeStatus becomes one status.Mutate.
func Example_mutate() {
	path, cleanup := newWorkspace()
	defer cleanup()
	ctx := context.Background()

	// Create the document (a missing file is presented as the zero Status).
	_, err := status.Mutate(ctx, path, func(s *status.Status) error {
		s.State, s.Agent, s.Org, s.Repo, s.Task = status.Queued, "codex", "acme", "api", "fix-42"
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}

	// The read, the change and the write happen under the document's
	// lock: no other goroutine or process can slip an update in between.
	st, err := status.Mutate(ctx, path, func(s *status.Status) error {
		s.Runs++
		s.Question = "which base branch?"
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.State, st.Runs, st.Question)

	// Readers need no lock: they always see a complete document.
	st, err = status.Load(ctx, path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.Task, st.Runs)
	// Output:
	// queued 1 which base branch?
	// fix-42 1
}

// errMovedOn is what a guard returns when the document is no longer in the
// shape the caller expected: nothing is written.
var errMovedOn = errors.New("workspace moved on")

// Pattern 2: read, spawn (or sleep), write back a stale copy becomes:
// claim with a guarded transition, spawn, then record the result with a
// guard — the agent may have finished in between.
func Example_guardedTransition() {
	path, cleanup := newWorkspace()
	defer cleanup()
	ctx := context.Background()
	if _, err := status.Mutate(ctx, path, status.Transition(status.Queued)); err != nil {
		log.Fatal(err)
	}

	// 1. Claim: queued -> running, decided under the lock.
	st, err := status.Mutate(ctx, path, func(s *status.Status) error {
		if err := s.Transition(status.Running, status.Queued); err != nil {
			return err // someone else claimed it, or it is already done
		}
		s.Runs++
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("claimed:", st.State)

	// 2. Spawn the agent. Here it is fast: it completes before the
	// spawner gets to record its pid. Its completion is guarded too.
	pid := 4242
	st, err = status.Mutate(ctx, path, status.Transition(status.Completed, status.Running))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("agent finished:", st.State)

	// 3. Record the pid only if the run is still running. The old code
	// wrote back the copy it read in step 1 and reverted "completed".
	_, err = status.Mutate(ctx, path, func(s *status.Status) error {
		if s.State != status.Running {
			return errMovedOn
		}
		s.PID = pid
		return nil
	})
	fmt.Println("record pid:", err)

	// A claim or a late writer that tries to leave a final state gets a
	// conflict, never a silent overwrite.
	_, err = status.Mutate(ctx, path, status.Transition(status.Running, status.Queued))
	fmt.Println("claim again:", errors.Is(err, status.ErrConflict), err)

	st, _ = status.Load(ctx, path)
	fmt.Println("final:", st.State, st.PID)
	// Output:
	// claimed: running
	// agent finished: completed
	// record pid: workspace moved on
	// claim again: true status: cannot move from "completed" to "running" (allowed from queued): state conflict
	// final: completed 0
}

// serviceStatus is a second service's own, shorter copy of the document:
// it declares 4 of the 16 fields.
type serviceStatus struct {
	Status string `json:"status"`
	Repo   string `json:"repo"`
	Task   string `json:"task"`
	Note   string `json:"note,omitempty"`
}

// Pattern 3: a second struct that dropped the fields it did not know now
// keeps them: a Store of the service's own type preserves every other field.
func Example_unknownFields() {
	path, cleanup := newWorkspace()
	defer cleanup()
	ctx := context.Background()

	_, err := status.Mutate(ctx, path, func(s *status.Status) error {
		s.State, s.Repo, s.Task = status.Completed, "api", "fix-42"
		s.Runs, s.PRURL = 3, "https://github.com/acme/api/pull/7"
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}

	// The other service changes its own field with its own struct.
	store := status.NewStore[serviceStatus](path)
	if _, err := store.Mutate(ctx, func(s *serviceStatus) error {
		s.Note = "reviewed by QA"
		return nil
	}); err != nil {
		log.Fatal(err)
	}

	// runs and pr_url, unknown to serviceStatus, are still there.
	st, err := status.Load(ctx, path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.State, st.Runs, st.PRURL, st.Note)
	// Output:
	// completed 3 https://github.com/acme/api/pull/7 reviewed by QA
}
