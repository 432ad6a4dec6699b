package migration_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/claim"
)

// Registry is the dispatcher's AGENT_REGISTRY.json: the agents running,
// their counts and limits, and which agent spawned which.
type Registry struct {
	Agents        []Agent             `json:"agents"`
	ActiveCount   int                 `json:"active_count"`
	TotalSpawned  int                 `json:"total_spawned"`
	MaxConcurrent int                 `json:"max_concurrent"`
	MaxDepth      int                 `json:"max_depth"`
	Hierarchy     map[string][]string `json:"hierarchy"` // parent ID -> child IDs
}

// Agent is one running agent; Task names its task's status.json, and Owner
// the dispatcher process that runs it (claim.Self(), recorded at spawn).
type Agent struct {
	ID     string      `json:"id"`
	Type   string      `json:"type"`
	Parent string      `json:"parent,omitempty"`
	Depth  int         `json:"depth"`
	Task   string      `json:"task"`
	Owner  claim.Owner `json:"owner,omitzero"`
}

var (
	errAtCapacity = errors.New("at capacity")
	errTooDeep    = errors.New("too deep")
	errDuplicate  = errors.New("a child of this type already runs for this parent")
)

// spawn admits agent a for its task, in one transaction: the registry's
// limits are checked, the agent is registered and its task moves from
// queued to running, or nothing changes at all, even if the process dies
// half-way.
func spawn(ctx context.Context, reg *status.Store[Registry], task *status.Store[status.Status], a Agent) error {
	_, _, err := status.MutateAll2(ctx, reg, task, func(r *Registry, t *status.Status) error {
		if r.ActiveCount >= r.MaxConcurrent {
			return errAtCapacity
		}
		if a.Parent != "" {
			i := slices.IndexFunc(r.Agents, func(p Agent) bool { return p.ID == a.Parent })
			if i < 0 {
				return fmt.Errorf("parent %s is not running", a.Parent)
			}
			a.Depth = r.Agents[i].Depth + 1
			for _, id := range r.Hierarchy[a.Parent] {
				if slices.ContainsFunc(r.Agents, func(c Agent) bool { return c.ID == id && c.Type == a.Type }) {
					return errDuplicate
				}
			}
		}
		if a.Depth > r.MaxDepth {
			return errTooDeep
		}
		a.Task = task.Name()
		r.Agents = append(r.Agents, a)
		r.ActiveCount++
		r.TotalSpawned++
		if a.Parent != "" {
			if r.Hierarchy == nil {
				r.Hierarchy = map[string][]string{}
			}
			r.Hierarchy[a.Parent] = append(r.Hierarchy[a.Parent], a.ID)
		}
		return t.Transition(status.Running, status.Queued)
	})
	return err
}

// finish is the reverse: the agent leaves the registry and its task moves
// from running to outcome, together.
func finish(ctx context.Context, reg *status.Store[Registry], task *status.Store[status.Status], id string, outcome status.State) error {
	_, err := status.MutateAll(ctx, []status.AnyStore{task, reg}, func(tx *status.Tx) error {
		return unregister(tx, reg, id, outcome)
	})
	return err
}

// unregister is finish's change, inside a transaction that holds the
// registry and the agent's task: reap makes the same one.
func unregister(tx *status.Tx, reg *status.Store[Registry], id string, outcome status.State) error {
	r, err := reg.In(tx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(r.Agents, func(a Agent) bool { return a.ID == id })
	if i < 0 {
		return fmt.Errorf("agent %s is not registered", id)
	}
	a := r.Agents[i]
	r.Agents = slices.Delete(r.Agents, i, i+1)
	r.ActiveCount--
	if children := slices.DeleteFunc(r.Hierarchy[a.Parent], func(c string) bool { return c == id }); len(children) > 0 {
		r.Hierarchy[a.Parent] = children
	} else {
		delete(r.Hierarchy, a.Parent) // a no-op for a root agent
	}
	t, err := taskOf(a).In(tx) // an error if the agent's task is not the one locked
	if err != nil {
		return err
	}
	return t.Transition(outcome, status.Running)
}

// taskOf is the Store of an agent's task.
func taskOf(a Agent) *status.Store[status.Status] {
	return status.NewStore[status.Status](a.Task)
}

// reap releases the agents whose dispatcher died, each as finish would
// with the outcome failed, in one transaction with the registry that
// counts it and its task.
func reap(ctx context.Context, reg *status.Store[Registry]) (claim.Result, error) {
	return claim.Reap(ctx, reg, func(r *Registry) []claim.Claim {
		cs := make([]claim.Claim, 0, len(r.Agents))
		for _, a := range r.Agents {
			cs = append(cs, claim.Claim{ID: a.ID, Owner: a.Owner, Docs: []status.AnyStore{taskOf(a)}})
		}
		return cs
	}, func(tx *status.Tx, c claim.Claim) error {
		return unregister(tx, reg, c.ID, status.Failed)
	})
}

// newDispatcher creates a registry with the given limits and queued tasks
// named by the agents that will run them, in a temporary directory.
func newDispatcher(maxConcurrent, maxDepth int, tasks ...string) (*status.Store[Registry], map[string]*status.Store[status.Status], func()) {
	root, err := os.MkdirTemp("", "dispatcher")
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	reg := status.NewStore[Registry](filepath.Join(root, "AGENT_REGISTRY.json"))
	if _, err := reg.Create(ctx, Registry{MaxConcurrent: maxConcurrent, MaxDepth: maxDepth}); err != nil {
		log.Fatal(err)
	}
	stores := map[string]*status.Store[status.Status]{}
	for _, name := range tasks {
		dir := filepath.Join(root, "acme", "api", name)
		if err := fs.MkdirAll(dir, 0o755); err != nil {
			log.Fatal(err)
		}
		stores[name] = status.NewStore[status.Status](filepath.Join(dir, "status.json"))
		if _, err := stores[name].Create(ctx, status.Status{State: status.Queued, Task: name}); err != nil {
			log.Fatal(err)
		}
	}
	return reg, stores, func() { os.RemoveAll(root) }
}

// Pattern 10: a registry and its tasks' status files, changed in one
// transaction: admission control that cannot drift.
func Example_admissionControl() {
	reg, tasks, cleanup := newDispatcher(3, 1, "plan", "review", "review-2", "lint", "deep", "other")
	defer cleanup()
	ctx := context.Background()

	fmt.Println(spawn(ctx, reg, tasks["plan"], Agent{ID: "planner", Type: "planner"}))
	fmt.Println(spawn(ctx, reg, tasks["review"], Agent{ID: "rev-1", Type: "reviewer", Parent: "planner"}))
	fmt.Println(spawn(ctx, reg, tasks["deep"], Agent{ID: "lint-0", Type: "linter", Parent: "rev-1"}))
	fmt.Println(spawn(ctx, reg, tasks["review-2"], Agent{ID: "rev-2", Type: "reviewer", Parent: "planner"}))
	fmt.Println(spawn(ctx, reg, tasks["lint"], Agent{ID: "lint-1", Type: "linter", Parent: "planner"}))
	fmt.Println(spawn(ctx, reg, tasks["other"], Agent{ID: "planner-2", Type: "planner"}))
	fmt.Println(finish(ctx, reg, tasks["review"], "rev-1", status.Completed))
	fmt.Println(spawn(ctx, reg, tasks["review-2"], Agent{ID: "rev-2", Type: "reviewer", Parent: "planner"}))

	// Read together, under the locks: the count is the running status files.
	all := []status.AnyStore{reg}
	for _, name := range []string{"deep", "lint", "other", "plan", "review", "review-2"} {
		all = append(all, tasks[name])
	}
	tx, err := status.LoadAll(ctx, all...)
	if err != nil {
		log.Fatal(err)
	}
	running := 0
	for _, d := range all[1:] {
		t, err := d.(*status.Store[status.Status]).In(tx)
		if err != nil {
			log.Fatal(err)
		}
		if t.State == status.Running {
			running++
		}
	}
	r, err := reg.In(tx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("active", r.ActiveCount, "running", running, "spawned", r.TotalSpawned, "children of planner", r.Hierarchy["planner"])
	// Output:
	// <nil>
	// <nil>
	// too deep
	// a child of this type already runs for this parent
	// <nil>
	// at capacity
	// <nil>
	// <nil>
	// active 3 running 3 spawned 4 children of planner [lint-1 rev-2]
}
