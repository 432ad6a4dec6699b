package claim_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/claim"
)

// An owner names a process so that its end can be told, even after its pid
// is reused.
func ExampleLocal() {
	ctx := context.Background()
	me, err := claim.Self()
	if err != nil {
		log.Fatal(err)
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	child, err := claim.Of(cmd.Process.Pid)
	if err != nil {
		log.Fatal(err)
	}
	running, _ := claim.Local(ctx, child)
	cmd.Process.Kill()
	cmd.Wait()
	ended, _ := claim.Local(ctx, child)
	self, _ := claim.Local(ctx, me)
	nobody, _ := claim.Local(ctx, claim.Owner{})
	fmt.Println("this process:", self)
	fmt.Println("child:", running, "then", ended)
	fmt.Println("nobody:", nobody)
	// Output:
	// this process: alive
	// child: alive then dead
	// nobody: unknown
}

// A pool whose slots are claimed by processes: the slot of a process that
// was killed is released, with the count, by Reap.
func ExampleReap() {
	type Slot struct {
		Name  string      `json:"name"`
		Owner claim.Owner `json:"owner"`
	}
	type Pool struct {
		Slots []Slot `json:"slots"`
		Used  int    `json:"used"`
	}
	dir, err := os.MkdirTemp("", "pool")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	pool := status.NewStore[Pool](filepath.Join(dir, "pool.json"))

	// A worker claims a slot, and is killed.
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	worker, err := claim.Of(cmd.Process.Pid)
	if err != nil {
		log.Fatal(err)
	}
	me, err := claim.Self()
	if err != nil {
		log.Fatal(err)
	}
	if _, err := pool.Mutate(ctx, func(p *Pool) error {
		p.Slots = append(p.Slots, Slot{"gpu-0", worker}, Slot{"gpu-1", me})
		p.Used = 2
		return nil
	}); err != nil {
		log.Fatal(err)
	}
	cmd.Process.Kill()
	cmd.Wait()

	res, err := claim.Reap(ctx, pool, func(p *Pool) []claim.Claim {
		var cs []claim.Claim
		for _, s := range p.Slots {
			cs = append(cs, claim.Claim{ID: s.Name, Owner: s.Owner})
		}
		return cs
	}, func(tx *status.Tx, c claim.Claim) error {
		p, err := pool.In(tx)
		if err != nil {
			return err
		}
		p.Slots = slices.DeleteFunc(p.Slots, func(s Slot) bool { return s.Name == c.ID })
		p.Used--
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	p, err := pool.Load(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("released", res.Released[0].ID, "used", p.Used, "left", p.Slots[0].Name)
	// Output:
	// released gpu-0 used 1 left gpu-1
}
