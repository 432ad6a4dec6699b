package migration_test

import (
	"context"
	"fmt"
	"log"
	"os/exec"

	"github.com/agentstate/core/status/claim"
)

// killedDispatcher returns the owner that a dispatcher recorded in its
// agents before it was killed with SIGKILL.
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

// Pattern 10, continued: the agents of a dispatcher that was killed are
// released by the reaper, with the count and their tasks, and their slots
// are free again.
func Example_reapDeadDispatcher() {
	reg, tasks, cleanup := newDispatcher(2, 1, "plan", "review", "other")
	defer cleanup()
	ctx := context.Background()
	me, err := claim.Self()
	if err != nil {
		log.Fatal(err)
	}

	fmt.Println(spawn(ctx, reg, tasks["plan"], Agent{ID: "planner", Type: "planner", Owner: killedDispatcher()}))
	fmt.Println(spawn(ctx, reg, tasks["review"], Agent{ID: "rev-1", Type: "reviewer", Owner: me}))
	fmt.Println(spawn(ctx, reg, tasks["other"], Agent{ID: "planner-2", Type: "planner", Owner: me}))

	res, err := reap(ctx, reg) // at start-up, on a timer, before admitting work
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range res.Released {
		fmt.Println("released", c.ID)
	}
	fmt.Println(spawn(ctx, reg, tasks["other"], Agent{ID: "planner-2", Type: "planner", Owner: me}))

	plan, err := tasks["plan"].Load(ctx)
	if err != nil {
		log.Fatal(err)
	}
	r, err := reg.Load(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("plan", plan.State, "active", r.ActiveCount, "spawned", r.TotalSpawned)
	// Output:
	// <nil>
	// <nil>
	// at capacity
	// released planner
	// <nil>
	// plan failed active 2 spawned 3
}
