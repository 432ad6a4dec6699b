package migration_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/claim"
	"github.com/agentstate/core/status/slots"
)

// policy is what the fleet decides: at most 3 agents at once and 100 in
// all; an agent may spawn children, but not grandchildren.
var policy = slots.Registry{MaxConcurrent: 3, MaxTotal: 100, MaxDepth: 1}

// spawn starts the agent for task under key (a retried spawn finds the
// slot of the first), as a child of the agent of slot parent ("" for
// none). The slot is the agent's from the moment it runs; a start that
// fails gives the slot and the prompt back.
func spawn(ctx context.Context, reg *status.Store[slots.Registry], task *status.Store[status.Status], key, parent string) (*exec.Cmd, error) {
	me, err := claim.Self()
	if err != nil {
		return nil, err
	}
	prompt, err := writePrompt(task)
	if err != nil {
		return nil, err
	}
	s, err := slots.Reserve(ctx, reg, slots.Request{Key: key, Parent: parent, Owner: me,
		Resources: map[string]string{"prompt": prompt}}, slots.Transition(task, status.Running, status.Queued))
	if err != nil {
		os.Remove(prompt)
		return nil, err // slots.ErrExists: an earlier try started this agent
	}
	agent := agentCommand(s, task)
	if err := agent.Start(); err != nil {
		if _, err := slots.Abort(ctx, reg, s.ID, slots.Transition(task, status.Queued, status.Running)); err == nil {
			os.Remove(prompt) // its own file, not a path the registry may have been given since
		}
		return nil, err
	}
	to, err := claim.Of(agent.Process.Pid) // before Wait: the pid is the agent's
	if err == nil {
		_, err = slots.HandOver(ctx, reg, s.ID, to)
	}
	if err != nil {
		agent.Process.Kill() // slots.ErrReleased: the slot is gone
		return nil, err
	}
	return agent, nil
}

// work is the agent: it adopts its slot before it works, and releases it
// with its task when done.
func work(ctx context.Context, reg *status.Store[slots.Registry], task *status.Store[status.Status], id string, job func() error) error {
	me, err := claim.Self()
	if err != nil {
		return err
	}
	if _, err := slots.Adopt(ctx, reg, id, me); err != nil {
		return err // slots.ErrReleased: the slot was reaped; do not work
	}
	outcome := status.Completed
	if job() != nil {
		outcome = status.Failed
	}
	_, err = slots.Release(ctx, reg, id, slots.Transition(task, outcome, status.Running))
	return err
}

// reap frees the slots of dead agents, and of dispatchers that died before
// their agent took its slot over: their tasks fail, and their prompts are
// removed if they are this fleet's.
func reap(ctx context.Context, reg *status.Store[slots.Registry]) (slots.Reaped, error) {
	res, err := slots.Reap(ctx, reg, func(s slots.Slot) (slots.Edit, error) {
		if len(s.Docs) == 0 {
			return slots.Edit{}, nil // a slot without a task: the registry alone changes
		}
		p, err := slots.DocPath(reg, s.Docs[0])
		if err != nil {
			return slots.Edit{}, err
		}
		return slots.Transition(status.NewStore[status.Status](p), status.Failed, status.Running), nil
	})
	// Only prompts inside the fleet's own directory, removed through an
	// os.Root: no link planted there leads the removal out of it.
	if prompts, rerr := os.OpenRoot(promptDir(reg)); rerr == nil {
		for _, s := range res.Released {
			if rel, err := filepath.Rel(promptDir(reg), s.Resources["prompt"]); err == nil && filepath.IsLocal(rel) {
				prompts.Remove(rel)
			}
		}
		prompts.Close()
	}
	return res, err
}

// promptDir is where the fleet writes prompts, next to its registry.
func promptDir(reg *status.Store[slots.Registry]) string {
	return filepath.Join(filepath.Dir(reg.Name()), "prompts")
}

// writePrompt writes a task's prompt to a file of its own.
func writePrompt(task *status.Store[status.Status]) (string, error) {
	dir := filepath.Join(filepath.Dir(filepath.Dir(task.Name())), "prompts")
	f, err := os.CreateTemp(dir, filepath.Base(filepath.Dir(task.Name()))+"-*.md")
	if err != nil {
		return "", err
	}
	defer f.Close()
	_, err = f.WriteString("fix the bug\n")
	return f.Name(), err
}

// agentEnv makes this test binary run as the examples' agent program
// (agentMain).
const agentEnv = "MIGRATION_AGENT_REGISTRY"

// stdins are the write ends of the running agents' standard input: an
// agent works until it ends (finish).
var stdins sync.Map // *exec.Cmd -> *os.File

// agentCommand is the agent program, given its slot and task: this test
// binary again, as agentMain.
func agentCommand(s slots.Slot, task *status.Store[status.Status]) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$", s.ID, task.Name())
	cmd.Env = append(os.Environ(), agentEnv+"="+filepath.Join(filepath.Dir(filepath.Dir(task.Name())), "AGENT_REGISTRY.json"))
	cmd.Stderr = os.Stderr
	if r, w, err := os.Pipe(); err == nil {
		cmd.Stdin = r
		stdins.Store(cmd, w)
	}
	return cmd
}

// finish lets an agent end its work, and waits for it.
func finish(agent *exec.Cmd) error {
	if w, ok := stdins.LoadAndDelete(agent); ok {
		w.(*os.File).Close()
	}
	err := agent.Wait()
	if r, ok := agent.Stdin.(*os.File); ok {
		r.Close()
	}
	return err
}

// agentMain is the agent program: work, whose job lasts until its
// standard input ends.
func agentMain() int {
	args := os.Args[len(os.Args)-2:]
	reg := status.NewStore[slots.Registry](os.Getenv(agentEnv))
	err := work(context.Background(), reg, status.NewStore[status.Status](args[1]), args[0], func() error {
		_, err := io.Copy(io.Discard, os.Stdin)
		return err
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// newFleet creates a registry with the policy, and queued tasks, in a
// temporary directory.
func newFleet(tasks ...string) (*status.Store[slots.Registry], map[string]*status.Store[status.Status], func()) {
	root, err := os.MkdirTemp("", "fleet")
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	reg := status.NewStore[slots.Registry](filepath.Join(root, "AGENT_REGISTRY.json"))
	if _, err := reg.Create(ctx, policy); err != nil {
		log.Fatal(err)
	}
	if err := fs.MkdirAll(promptDir(reg), 0o755); err != nil {
		log.Fatal(err)
	}
	stores := map[string]*status.Store[status.Status]{}
	for _, name := range tasks {
		dir := filepath.Join(root, name)
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

// outcome names spawn's error by the refusal it matches.
func outcome(err error) string {
	for _, e := range []error{slots.ErrExists, slots.ErrFull, slots.ErrTotal, slots.ErrNoParent, slots.ErrTooDeep} {
		if errors.Is(err, e) {
			return e.Error()
		}
	}
	if err != nil {
		return err.Error()
	}
	return "started"
}

// slotOf returns the ID of the slot that holds key.
func slotOf(ctx context.Context, reg *status.Store[slots.Registry], key string) string {
	r, err := reg.Load(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range r.Agents {
		if s.Key == key {
			return s.ID
		}
	}
	return ""
}

// Pattern 10: the fleet's policy and its spawn command; the slots package
// admits, hands over, releases and counts.
func Example_slotsAdmission() {
	reg, tasks, cleanup := newFleet("plan", "review", "lint", "deep", "other")
	defer cleanup()
	ctx := context.Background()

	planner, err := spawn(ctx, reg, tasks["plan"], "plan", "")
	fmt.Println("plan:", outcome(err))
	reviewer, err := spawn(ctx, reg, tasks["review"], "plan/review", slotOf(ctx, reg, "plan"))
	fmt.Println("review:", outcome(err))
	_, err = spawn(ctx, reg, tasks["review"], "plan/review", slotOf(ctx, reg, "plan")) // a retry
	fmt.Println("review again:", outcome(err))
	_, err = spawn(ctx, reg, tasks["deep"], "plan/review/deep", slotOf(ctx, reg, "plan/review"))
	fmt.Println("deep:", outcome(err))
	linter, err := spawn(ctx, reg, tasks["lint"], "plan/lint", slotOf(ctx, reg, "plan"))
	fmt.Println("lint:", outcome(err))
	_, err = spawn(ctx, reg, tasks["other"], "other", "")
	fmt.Println("other:", outcome(err))

	fmt.Println(finish(reviewer), finish(linter)) // their work is done
	other, err := spawn(ctx, reg, tasks["other"], "other", "")
	fmt.Println("other:", outcome(err))
	fmt.Println(finish(other), finish(planner))

	r, err := reg.Load(ctx)
	if err != nil {
		log.Fatal(err)
	}
	var states []string
	for _, name := range []string{"plan", "review", "lint", "deep", "other"} {
		t, err := tasks[name].Load(ctx)
		if err != nil {
			log.Fatal(err)
		}
		states = append(states, name+" "+string(t.State))
	}
	fmt.Println(strings.Join(states, ", "))
	fmt.Println("active", r.ActiveCount, "spawned", r.TotalSpawned)
	// Output:
	// plan: started
	// review: started
	// review again: slot already active
	// deep: deeper than max_depth
	// lint: started
	// other: registry full
	// <nil> <nil>
	// other: started
	// <nil> <nil>
	// plan completed, review completed, lint completed, deep queued, other completed
	// active 0 spawned 4
}
