package migration_test

// The examples of this file migrate status code as the agent services write
// it today. Those packages already have variables named fs and status and
// import their framework as core, so the module's packages are imported
// under other names, as MIGRATION.md recommends.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	agentcore "github.com/agentstate/core/core"
	corefs "github.com/agentstate/core/fs"
	statefile "github.com/agentstate/core/status"
)

// Section 1a: ReadStatusResult + workspaceStatusValue + change +
// writeStatusResult becomes one Mutate.
func Example_resultHelpers() {
	path, cleanup := newWorkspace()
	defer cleanup()
	ctx := context.Background()
	if _, err := statefile.Create(ctx, path, statefile.Status{State: statefile.Running, Task: "fix-42", PID: 4242}); err != nil {
		log.Fatal(err)
	}

	// The completion handler: read, decide, change and write under the
	// document's lock, in one call.
	st, err := statefile.Mutate(ctx, path, func(s *statefile.Status) error {
		s.PID = 0
		return s.Transition(statefile.Completed, statefile.Running)
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.State, st.PID)

	// Code that only reads keeps a lock-free read.
	st, err = statefile.Load(ctx, path)
	fmt.Println(st.Task, st.State, err)
	// Output:
	// completed 0
	// fix-42 completed <nil>
}

// Section 1b: a read-modify-write through map[string]any becomes a Store
// of map[string]any.
func Example_mapDocument() {
	path, cleanup := newWorkspace()
	defer cleanup()
	ctx := context.Background()
	if _, err := statefile.Create(ctx, path, statefile.Status{State: statefile.Running, PID: 4242, Runs: 2}); err != nil {
		log.Fatal(err)
	}

	m, err := statefile.NewStore[map[string]any](path).Mutate(ctx, func(m *map[string]any) error {
		if (*m)["status"] != "running" {
			return errMovedOn
		}
		(*m)["status"] = "failed"
		delete(*m, "pid")
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(m["status"], m["pid"], m["runs"]) // JSON numbers are float64

	st, _ := statefile.Load(ctx, path)
	fmt.Println(st.State, st.PID, st.Runs)
	// Output:
	// failed <nil> 2
	// failed 0 2
}

// Section 1c: "create if it does not exist" becomes Create.
func Example_create() {
	path, cleanup := newWorkspace()
	defer cleanup()
	ctx := context.Background()

	st, err := statefile.Create(ctx, path, statefile.Status{State: statefile.Queued, Repo: "api", Task: "fix-42"})
	fmt.Println(st.State, err)

	// A second creator (another server, a retry) is told, and changes
	// nothing.
	_, err = statefile.Create(ctx, path, statefile.Status{State: statefile.Queued, Task: "other"})
	fmt.Println(errors.Is(err, os.ErrExist))

	st, _ = statefile.Load(ctx, path)
	fmt.Println(st.Task)
	// Output:
	// queued <nil>
	// true
	// fix-42
}

// Section 2a: read, sleep, spawn, write back becomes claim, spawn, and -
// when the spawn fails - give the claim back.
func Example_spawnFails() {
	path, cleanup := newWorkspace()
	defer cleanup()
	ctx := context.Background()
	if _, err := statefile.Create(ctx, path, statefile.Status{State: statefile.Queued, Task: "fix-42"}); err != nil {
		log.Fatal(err)
	}

	// 1. Claim, with an id of this run that later steps check.
	runID := "run-1"
	claimed, err := statefile.Mutate(ctx, path, func(s *statefile.Status) error {
		if err := s.Transition(statefile.Running, statefile.Queued); err != nil {
			return err
		}
		s.ProcessID = runID
		s.Runs++
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}

	// 2. Sleep and spawn outside the lock. Here the spawn fails.
	err = exec.Command(filepath.Join(os.TempDir(), "no-such-agent"), "--task", claimed.Task).Start()
	fmt.Println("spawn failed:", err != nil)

	// 3. Give the claim back, if it is still this run's.
	_, err = statefile.Mutate(ctx, path, func(s *statefile.Status) error {
		if s.ProcessID != runID {
			return errMovedOn
		}
		s.ProcessID = ""
		return s.Transition(statefile.Queued, statefile.Running)
	})
	st, _ := statefile.Load(ctx, path)
	fmt.Println(st.State, st.Runs, err)
	// Output:
	// spawn failed: true
	// queued 1 <nil>
}

// runnerStatus is a second service's own view of the document: 5 of its
// 16 fields. Its Stamp method keeps updated_at current.
type runnerStatus struct {
	Status    string    `json:"status"`
	Repo      string    `json:"repo"`
	Task      string    `json:"task"`
	Runs      int       `json:"runs"`
	UpdatedAt time.Time `json:"updated_at"`
}

func (s *runnerStatus) Stamp(now time.Time) { s.UpdatedAt = now }

// Section 3a: the second service keeps its narrower struct, through a
// Store of it.
func Example_ownType() {
	path, cleanup := newWorkspace()
	defer cleanup()
	ctx := context.Background()
	created, err := statefile.Create(ctx, path, statefile.Status{State: statefile.Queued, Agent: "codex", Repo: "api", Task: "fix-42"})
	if err != nil {
		log.Fatal(err)
	}

	st, err := statefile.NewStore[runnerStatus](path).Mutate(ctx, func(s *runnerStatus) error {
		if s.Status != "queued" {
			return errMovedOn
		}
		s.Status = "running"
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.Status, st.UpdatedAt.After(created.UpdatedAt))

	// runnerStatus's fields come first, in its order; then the fields it
	// does not declare, by name, with their values unchanged.
	fmt.Println(topLevelKeys(path))
	// Output:
	// running true
	// [status repo task runs updated_at agent started_at]
}

// topLevelKeys returns the names of the members of the JSON object in the
// file at path, in file order.
func topLevelKeys(path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	var keys []string
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // {
		log.Fatal(err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			log.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			log.Fatal(err)
		}
	}
	return keys
}

// workspaceStatus is the service's own struct: the state is its field Status.
type workspaceStatus struct {
	Status   string `json:"status"`
	Repo     string `json:"repo"`
	Task     string `json:"task"`
	Question string `json:"question,omitempty"`
}

// Section 3b: the service's Status field is State in status.Status; the JSON
// is the same.
func Example_convertStatus() {
	ws := workspaceStatus{Status: "blocked", Repo: "api", Task: "fix-42", Question: "which base branch?"}

	st := statefile.Status{State: statefile.State(ws.Status), Repo: ws.Repo, Task: ws.Task, Question: ws.Question}
	back := workspaceStatus{Status: string(st.State), Repo: st.Repo, Task: st.Task, Question: st.Question}
	fmt.Println(st.State, st.State == statefile.Blocked, back == ws)

	a, _ := json.Marshal(ws)
	var fromJSON statefile.Status
	_ = json.Unmarshal(a, &fromJSON)
	fmt.Println(fromJSON.State, fromJSON.Question)
	// Output:
	// blocked true true
	// blocked which base branch?
}

// Section 4a: the framework's WriteAtomic created missing directories;
// fs.WriteAtomic (and Mutate) refuse them.
func Example_missingParent() {
	root, err := os.MkdirTemp("", "migration")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	path := filepath.Join(root, "acme", "api", "fix-42", "status.json")

	err = corefs.WriteAtomic(path, []byte(`{"status":"queued"}`), 0o644)
	fmt.Println(errors.Is(err, os.ErrNotExist))

	// The one-line replacement: create the directories first.
	if err := corefs.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		log.Fatal(err)
	}
	err = corefs.WriteAtomic(path, []byte(`{"status":"queued"}`), 0o644)
	fmt.Println(err)
	// Output:
	// true
	// <nil>
}

// Section 8a: a task's last write during shutdown needs a context that
// Shutdown does not cancel.
func Example_finalWrite() {
	root, err := os.MkdirTemp("", "migration")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	c, err := agentcore.New(root)
	if err != nil {
		log.Fatal(err)
	}
	path, err := c.StatusPath("acme", "api", "fix-42")
	if err != nil {
		log.Fatal(err)
	}
	if err := corefs.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		log.Fatal(err)
	}
	if _, err := statefile.Create(context.Background(), path, statefile.Status{State: statefile.Running}); err != nil {
		log.Fatal(err)
	}

	started := make(chan struct{})
	requeue := statefile.Transition(statefile.Queued, statefile.Running)
	if err := c.Go("agent fix-42", func(ctx context.Context) {
		close(started)
		<-ctx.Done() // Shutdown: the agent is stopped, its task must be requeued

		// The task's context is cancelled: Mutate fails at once.
		_, err := statefile.Mutate(ctx, path, requeue)
		fmt.Println("with ctx:", errors.Is(err, context.Canceled))

		// Keep ctx's values, drop its cancellation, bound the wait.
		final, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_, err = statefile.Mutate(final, path, requeue)
		fmt.Println("detached:", err)
	}); err != nil {
		log.Fatal(err)
	}
	<-started
	if err := c.Shutdown(context.Background()); err != nil {
		log.Fatal(err)
	}
	st, _ := statefile.Load(context.Background(), path)
	fmt.Println(st.State)
	// Output:
	// with ctx: true
	// detached: <nil>
	// queued
}
