//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package status_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/agentstate/core/status"
)

// The Python package's commit (python/, import agentstate, through
// testdata/txn_agent.py) SIGKILLed at every step, recovered by Go lockers
// of one document each, in either order: each completes or undoes its own
// document as the commit point says, and together they leave the fleet
// consistent and no file of the commit behind. (LoadAll as the recoverer:
// TestCrossprocTxPythonKilledAtEveryStep.) The CONTROL is the same change
// as two mutate calls, killed between them.

func TestCrossprocTxPythonKilledRecoveredByGoMutate(t *testing.T) {
	cpNeedPython(t)
	commit := slices.Index(txnSteps, "journal")
	for k, step := range txnSteps {
		for _, order := range []string{"task first", "registry first"} {
			t.Run(fmt.Sprintf("%s/%s", step, order), func(t *testing.T) {
				dir, f := cpMakeFleet(t, 1)
				c := cpStart(t, "txn_agent.py", cpTxAgent("toggle", f.reg.Name(), f.tasks[0].Name(), "--die-at", step), false)
				cpRelease(t, []*cpChild{c})
				c.expect(t, "dying")
				cpKilled(t, c, func(string) {})
				ctx := context.Background()
				lockers := []func() error{
					func() error { _, err := f.tasks[0].Mutate(ctx, func(*status.Status) error { return nil }); return err },
					func() error { _, err := f.reg.Mutate(ctx, func(*cpRegistry) error { return nil }); return err },
				}
				if order == "registry first" {
					slices.Reverse(lockers)
				}
				for _, lock := range lockers {
					if err := lock(); err != nil {
						t.Fatalf("Go locker after Python died at %q: %v", step, err)
					}
				}
				// Both recovered: lock-free reads now see the whole outcome.
				r, err := f.reg.Load(ctx)
				if err != nil {
					t.Fatal(err)
				}
				s, err := f.tasks[0].Load(ctx)
				if err != nil {
					t.Fatal(err)
				}
				want := min(k/commit, 1)
				running := 0
				if s.State == status.Running {
					running = 1
				}
				if r.Total != want || s.Runs != want || r.Active != running || len(r.Agents) != running {
					t.Fatalf("Python died at %q, Go recovered %s: registry %+v, task %s runs %d; want %d transactions, counted in both", step, order, r, s.State, s.Runs, want)
				}
				if l := cpTxLeftovers(t, dir); len(l) > 0 {
					t.Fatalf("left after recovery: %v", l)
				}
			})
		}
	}
}

// CONTROL: the same change as two mutate calls of the Python package,
// killed between them, breaks the invariant the tests above require.
func TestCrossprocTxPythonKilledControlTwoMutates(t *testing.T) {
	cpNeedPython(t)
	_, f := cpMakeFleet(t, 1)
	c := cpStart(t, "txn_agent.py", cpTxAgent("toggle", f.reg.Name(), f.tasks[0].Name(), "--two", "--die-at", "between"), false)
	cpRelease(t, []*cpChild{c})
	c.expect(t, "dying")
	cpKilled(t, c, func(string) {})
	if _, err := f.check(context.Background()); err == nil {
		t.Fatal("CONTROL: two mutate calls killed between them kept the invariant: the check cannot see a torn transaction")
	} else {
		t.Logf("two mutate calls killed between them: %v", err)
	}
}
