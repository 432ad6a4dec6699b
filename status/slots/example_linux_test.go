package slots_test

import (
	"context"
	"fmt"
	"log"
	"os/exec"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/claim"
	"github.com/agentstate/core/status/slots"
)

// failTask is a reaper's edit: the released slot's task, found by the path
// the slot recorded, moves from running to failed.
func failTask(reg *status.Store[slots.Registry]) func(slots.Slot) (slots.Edit, error) {
	return func(s slots.Slot) (slots.Edit, error) {
		if len(s.Docs) == 0 {
			return slots.Edit{}, nil
		}
		p, err := slots.DocPath(reg, s.Docs[0])
		if err != nil {
			return slots.Edit{}, err
		}
		return slots.Transition(status.NewStore[status.Status](p), status.Failed, status.Running), nil
	}
}

// A dispatcher starts an agent and hands the slot over to it. When the
// agent is killed, its slot is reaped although the dispatcher lives on; a
// slot that was not handed over stays with its live dispatcher.
func ExampleHandOver() {
	reg, task, cleanup := newRegistry(slots.Registry{MaxConcurrent: 2})
	defer cleanup()
	ctx := context.Background()
	me, err := claim.Self()
	if err != nil {
		log.Fatal(err)
	}
	spawn := func(key string, handOver bool, edits ...slots.Edit) (*exec.Cmd, slots.Slot) {
		s, err := slots.Reserve(ctx, reg, slots.Request{Key: key, Owner: me}, edits...)
		if err != nil {
			log.Fatal(err)
		}
		agent := exec.Command("sleep", "60") // the agent, given s.ID
		if err := agent.Start(); err != nil {
			log.Fatal(err) // and Abort
		}
		if handOver {
			to, err := claim.Of(agent.Process.Pid) // before Wait: the pid is still the agent's
			if err != nil {
				log.Fatal(err)
			}
			if _, err := slots.HandOver(ctx, reg, s.ID, to); err != nil {
				log.Fatal(err) // ErrReleased: stop the agent
			}
		}
		return agent, s
	}
	a, _ := spawn("handed-over", true, slots.Transition(task, status.Running, status.Queued))
	b, _ := spawn("kept", false)
	for _, agent := range []*exec.Cmd{a, b} { // the OOM killer
		agent.Process.Kill()
		agent.Wait()
	}

	res, err := slots.Reap(ctx, reg, failTask(reg))
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range res.Released {
		fmt.Println("released", s.Key)
	}
	ls, err := slots.List(ctx, reg)
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range ls {
		fmt.Println("left", l.Slot.Key, "owner", l.Liveness)
	}
	t, err := task.Load(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("task", t.State)
	// Output:
	// released handed-over
	// left kept owner alive
	// task failed
}

// A dispatcher killed between Reserve and the hand-over leaves a slot
// owned by a dead process: Reap releases it and returns what its spawn
// created.
func ExampleReap() {
	reg, task, cleanup := newRegistry(slots.Registry{MaxConcurrent: 2})
	defer cleanup()
	ctx := context.Background()

	dispatcher := exec.Command("sleep", "60")
	if err := dispatcher.Start(); err != nil {
		log.Fatal(err)
	}
	owner, err := claim.Of(dispatcher.Process.Pid)
	if err != nil {
		log.Fatal(err)
	}
	_, err = slots.Reserve(ctx, reg, slots.Request{Key: "fix-42", Owner: owner,
		Resources: map[string]string{"log_dir": "/var/log/agents/fix-42", "session": "tmux:fix-42"}},
		slots.Transition(task, status.Running, status.Queued))
	if err != nil {
		log.Fatal(err)
	}
	dispatcher.Process.Kill() // before it started the agent
	dispatcher.Wait()

	res, err := slots.Reap(ctx, reg, failTask(reg))
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range res.Released {
		// The reaper decides what it trusts before removing anything.
		fmt.Println("released", s.Key, "to clean up:", s.Resources["log_dir"], s.Resources["session"])
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
	// released fix-42 to clean up: /var/log/agents/fix-42 tmux:fix-42
	// active 0 task failed
}
