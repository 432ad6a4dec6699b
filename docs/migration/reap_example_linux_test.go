package migration_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/claim"
	"github.com/agentstate/core/status/slots"
)

// killedDispatcher returns the owner of a dispatcher that was killed with
// SIGKILL.
func killedDispatcher() claim.Owner {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	o, err := claim.Of(cmd.Process.Pid)
	if err != nil {
		log.Fatal(err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	return o
}

// Pattern 10, continued: an agent killed while its dispatcher lives, and a
// dispatcher killed before it started its agent, leave slots that reap
// frees, with their tasks and prompts; a live agent keeps its slot.
func Example_slotsReap() {
	reg, tasks, cleanup := newFleet("plan", "review", "other")
	defer cleanup()
	ctx := context.Background()

	planner, err := spawn(ctx, reg, tasks["plan"], "plan", "")
	fmt.Println("plan:", outcome(err))
	reviewer, err := spawn(ctx, reg, tasks["review"], "review", "")
	fmt.Println("review:", outcome(err))
	prompt, err := writePrompt(tasks["other"])
	if err != nil {
		log.Fatal(err)
	}
	_, err = slots.Reserve(ctx, reg, slots.Request{Key: "other", Owner: killedDispatcher(),
		Resources: map[string]string{"prompt": prompt}}, slots.Transition(tasks["other"], status.Running, status.Queued))
	fmt.Println("other:", outcome(err))
	reviewer.Process.Kill() // the OOM killer
	finish(reviewer)

	res, err := reap(ctx, reg) // at start-up, on a timer, before admitting work
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range res.Released {
		fmt.Println("released", s.Key)
	}
	fmt.Println(finish(planner))
	r, err := reg.Load(ctx)
	if err != nil {
		log.Fatal(err)
	}
	var states []string
	for _, name := range []string{"plan", "review", "other"} {
		t, err := tasks[name].Load(ctx)
		if err != nil {
			log.Fatal(err)
		}
		states = append(states, name+" "+string(t.State))
	}
	prompts, _ := os.ReadDir(promptDir(reg))
	fmt.Println(strings.Join(states, ", "))
	fmt.Println("active", r.ActiveCount, "spawned", r.TotalSpawned, "prompts left", len(prompts))
	// Output:
	// plan: started
	// review: started
	// other: started
	// released review
	// released other
	// <nil>
	// plan completed, review failed, other failed
	// active 0 spawned 3 prompts left 1
}

// TestReapOfStrangeSlots: the reaper of pattern 10 on a registry that other
// programs share: a dead slot that records no document (reserved by
// corestate slot reserve without a DOC, or by a program of its own) is
// released, and a dead slot whose prompt a member named through a link
// planted in the prompt directory, to a file outside it, is released while
// that file stays.
func TestReapOfStrangeSlots(t *testing.T) {
	reg, _, cleanup := newFleet()
	defer cleanup()
	ctx := context.Background()
	outside := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(outside, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(promptDir(reg), "evil")); err != nil {
		t.Fatal(err)
	}
	for _, r := range []slots.Request{
		{Key: "no-docs", Owner: killedDispatcher()},
		{Key: "planted", Owner: killedDispatcher(), Resources: map[string]string{"prompt": filepath.Join(promptDir(reg), "evil", "precious")}},
	} {
		if _, err := slots.Reserve(ctx, reg, r); err != nil {
			t.Fatal(err)
		}
	}
	res, err := reap(ctx, reg)
	if err != nil || len(res.Released) != 2 {
		t.Fatalf("reap: released %d, %v; want 2", len(res.Released), err)
	}
	if b, err := os.ReadFile(outside); err != nil || string(b) != "keep" {
		t.Errorf("the file outside the prompt directory: %q, %v; want it kept", b, err)
	}
}
