package slots_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/claim"
	"github.com/agentstate/core/status/slots"
)

// newRegistry writes a registry with the policy given, and a queued task,
// in a new directory.
func newRegistry(policy slots.Registry) (reg *status.Store[slots.Registry], task *status.Store[status.Status], cleanup func()) {
	dir, err := os.MkdirTemp("", "fleet")
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	reg = status.NewStore[slots.Registry](filepath.Join(dir, "AGENT_REGISTRY.json"))
	if _, err := reg.Create(ctx, policy); err != nil {
		log.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "fix-42"), 0o755); err != nil {
		log.Fatal(err)
	}
	task = status.NewStore[status.Status](filepath.Join(dir, "fix-42", "status.json"))
	if _, err := task.Create(ctx, status.Status{State: status.Queued}); err != nil {
		log.Fatal(err)
	}
	return reg, task, func() { os.RemoveAll(dir) }
}

// A slot's life: the dispatcher reserves it (a retry gets the same slot
// back), the agent adopts it before it works and releases it when it is
// done, its task following in the same transactions.
func Example() {
	reg, task, cleanup := newRegistry(slots.Registry{MaxConcurrent: 2, MaxDepth: 1})
	defer cleanup()
	ctx := context.Background()
	me, err := claim.Self() // the dispatcher; the agent, below, is this process too
	if err != nil {
		log.Fatal(err)
	}

	req := slots.Request{Key: "acme/api/fix-42", Owner: me}
	s, err := slots.Reserve(ctx, reg, req, slots.Transition(task, status.Running, status.Queued))
	if err != nil {
		log.Fatal(err)
	}
	again, err := slots.Reserve(ctx, reg, req, slots.Transition(task, status.Running, status.Queued))
	fmt.Println("retry:", errors.Is(err, slots.ErrExists), again.ID == s.ID)

	// The agent, started with s.ID:
	if _, err := slots.Adopt(ctx, reg, s.ID, me); err != nil {
		log.Fatal(err) // ErrReleased: the slot is gone; do not work
	}
	if _, err := slots.Release(ctx, reg, s.ID, slots.Transition(task, status.Completed, status.Running)); err != nil {
		log.Fatal(err)
	}

	r, err := reg.Load(ctx)
	if err != nil {
		log.Fatal(err)
	}
	t, err := task.Load(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("active", r.ActiveCount, "spawned", r.TotalSpawned, "task", t.State)
	// Output:
	// retry: true true
	// active 0 spawned 1 task completed
}

// The policy refuses with errors to match; nothing is written.
func ExampleReserve() {
	reg, _, cleanup := newRegistry(slots.Registry{MaxConcurrent: 2, MaxTotal: 3, MaxDepth: 1})
	defer cleanup()
	ctx := context.Background()
	me, err := claim.Self()
	if err != nil {
		log.Fatal(err)
	}
	reserve := func(id, parent string) {
		_, err := slots.Reserve(ctx, reg, slots.Request{ID: id, Parent: parent, Owner: me})
		switch {
		case err == nil:
			fmt.Println(id, "reserved")
		case errors.Is(err, slots.ErrFull), errors.Is(err, slots.ErrTotal):
			fmt.Println(id, "waits: full or total reached")
		case errors.Is(err, slots.ErrNoParent):
			fmt.Println(id, "refused: no parent")
		case errors.Is(err, slots.ErrTooDeep):
			fmt.Println(id, "refused: too deep")
		default:
			log.Fatal(err)
		}
	}
	reserve("planner", "")
	reserve("reviewer", "planner")
	reserve("linter", "reviewer")
	reserve("other", "")
	reserve("orphan", "gone")
	if _, err := slots.Release(ctx, reg, "reviewer"); err != nil {
		log.Fatal(err)
	}
	reserve("second", "planner")
	if _, err := slots.Release(ctx, reg, "second"); err != nil {
		log.Fatal(err)
	}
	reserve("third", "planner")
	// Output:
	// planner reserved
	// reviewer reserved
	// linter refused: too deep
	// other waits: full or total reached
	// orphan refused: no parent
	// second reserved
	// third waits: full or total reached
}

// A spawn that fails after Reserve aborts its slot and removes what it
// created, from the resources the slot recorded.
func ExampleAbort() {
	reg, task, cleanup := newRegistry(slots.Registry{MaxConcurrent: 2})
	defer cleanup()
	ctx := context.Background()
	me, err := claim.Self()
	if err != nil {
		log.Fatal(err)
	}
	prompt := filepath.Join(filepath.Dir(task.Name()), "prompt.md")
	if err := os.WriteFile(prompt, []byte("fix the bug"), 0o644); err != nil {
		log.Fatal(err)
	}
	s, err := slots.Reserve(ctx, reg, slots.Request{Owner: me, Resources: map[string]string{"prompt": prompt}},
		slots.Transition(task, status.Running, status.Queued))
	if err != nil {
		log.Fatal(err)
	}
	if err := exec.Command("no-such-agent", s.ID).Start(); err != nil {
		s, err := slots.Abort(ctx, reg, s.ID, slots.Transition(task, status.Queued, status.Running))
		if err != nil {
			log.Fatal(err)
		}
		// The slot returns what the spawn recorded; this dispatcher removes
		// the file it wrote itself, not a path that whoever can write the
		// registry may have put there since.
		if s.Resources["prompt"] == prompt {
			fmt.Println("removing", filepath.Base(prompt), os.Remove(prompt))
		}
	}
	r, err := reg.Load(ctx)
	if err != nil {
		log.Fatal(err)
	}
	t, err := task.Load(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("active", r.ActiveCount, "task", t.State)
	// Output:
	// removing prompt.md <nil>
	// active 0 task queued
}
