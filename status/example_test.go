package status_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentstate/core/status"
)

func ExampleMutate() {
	dir, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "status.json")
	ctx := context.Background()

	// The spawner queues the task...
	status.Mutate(ctx, path, func(s *status.Status) error {
		s.State, s.Agent, s.Repo, s.Task = status.Queued, "claude", "core", "fix-p4-9"
		return nil
	})
	// ...and a worker claims it: the check and the change happen under the
	// lock, so two workers cannot both move it to running.
	st, err := status.Mutate(ctx, path, func(s *status.Status) error {
		if err := s.Transition(status.Running, status.Queued); err != nil {
			return err
		}
		s.Runs++
		s.PID = 4242
		return nil
	})
	fmt.Println(st.State, st.Runs, st.PID, err)
	// Output: running 1 4242 <nil>
}

func ExampleTransition() {
	dir, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "status.json")
	ctx := context.Background()

	status.Mutate(ctx, path, func(s *status.Status) error { s.State = status.Completed; return nil })

	// A stale handler tries to mark the finished task running again.
	_, err := status.Mutate(ctx, path, status.Transition(status.Running, status.Queued))
	fmt.Println(errors.Is(err, status.ErrConflict))
	fmt.Println(err)

	st, _ := status.Load(ctx, path)
	fmt.Println(st.State)
	// Output:
	// true
	// status: cannot move from "completed" to "running" (allowed from queued): state conflict
	// completed
}

func ExampleLoad() {
	dir, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "status.json")

	// A file written by another program, with a field Status does not know.
	os.WriteFile(path, []byte(`{"status":"blocked","question":"which branch?","hub_id":17}`), 0o644)

	st, err := status.Load(context.Background(), path)
	fmt.Println(st.State, st.Question, err)

	// Mutate keeps hub_id.
	status.Mutate(context.Background(), path, func(s *status.Status) error {
		s.Question = ""
		s.State = status.Running
		return nil
	})
	b, _ := os.ReadFile(path)
	var hub struct {
		HubID int `json:"hub_id"`
	}
	_ = json.Unmarshal(b, &hub)
	fmt.Println(hub.HubID)
	// Output:
	// blocked which branch? <nil>
	// 17
}

func ExampleNewStore() {
	dir, _ := os.MkdirTemp("", "registry")
	defer os.RemoveAll(dir)

	// Any JSON document works: here, a registry of agents.
	type registry struct {
		Agents map[string]int `json:"agents"`
	}
	agents := status.NewStore[registry](filepath.Join(dir, "agents.json"))
	for _, name := range []string{"claude", "codex", "claude"} {
		agents.Mutate(context.Background(), func(r *registry) error {
			if r.Agents == nil {
				r.Agents = map[string]int{}
			}
			r.Agents[name]++
			return nil
		})
	}
	r, _ := agents.Load(context.Background())
	fmt.Println(r.Agents)
	// Output: map[claude:2 codex:1]
}

func ExampleCorruptError() {
	dir, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "status.json")
	os.WriteFile(path, []byte(`{"status": "running", "runs": 3`), 0o644) // truncated by a crash

	_, err := status.Mutate(context.Background(), path, func(s *status.Status) error { s.Runs++; return nil })
	var ce *status.CorruptError
	if errors.As(err, &ce) {
		fmt.Println("corrupt at byte", ce.Offset, "- left untouched for repair")
	}
	// Output: corrupt at byte 31 - left untouched for repair
}

func ExampleMutateAll2() {
	dir, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	type Registry struct {
		Active int `json:"active_count"`
		Max    int `json:"max_concurrent"`
	}
	reg := status.NewStore[Registry](filepath.Join(dir, "registry.json"))
	task := status.NewStore[status.Status](filepath.Join(dir, "status.json"))
	reg.Mutate(ctx, func(r *Registry) error { r.Max = 1; return nil })
	status.Create(ctx, task.Name(), status.Status{State: status.Queued, Task: "t1"})

	errFull := errors.New("fleet full")
	claim := func(r *Registry, t *status.Status) error {
		if r.Active >= r.Max {
			return errFull // nothing is written
		}
		r.Active++
		return t.Transition(status.Running, status.Queued)
	}
	// The count and the task's state change together, or neither does.
	r, t, err := status.MutateAll2(ctx, reg, task, claim)
	fmt.Println(r.Active, t.State, err)
	_, _, err = status.MutateAll2(ctx, reg, task, claim)
	fmt.Println(errors.Is(err, errFull))
	// Output:
	// 1 running <nil>
	// true
}

// Over a list of documents known only at run time, Store.In gives each
// its value, and reports one that the list left out.
func ExampleMutateAll() {
	dir, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	var tasks []*status.Store[status.Status]
	var docs []status.AnyStore
	for _, name := range []string{"a", "b", "c"} {
		t := status.NewStore[status.Status](filepath.Join(dir, name+".json"))
		status.Create(ctx, t.Name(), status.Status{State: status.Running, Task: name})
		tasks, docs = append(tasks, t), append(docs, t)
	}
	// Fail every running task at once.
	_, err := status.MutateAll(ctx, docs, func(tx *status.Tx) error {
		for _, t := range tasks {
			s, err := t.In(tx)
			if err != nil {
				return err
			}
			if err := s.Transition(status.Failed, status.Running); err != nil {
				return err
			}
		}
		return nil
	})
	fmt.Println(err)

	// A Store left out of the list is an error where it is asked for.
	_, err = status.MutateAll(ctx, docs[:2], func(tx *status.Tx) error {
		_, err := tasks[2].In(tx)
		return err
	})
	fmt.Println(errors.Is(err, os.ErrInvalid))
	// Output:
	// <nil>
	// true
}
