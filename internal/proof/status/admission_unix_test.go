//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package status_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentstate/core/status"
)

// Admission control across processes: a registry caps the running tasks
// at max_concurrent = 5; 8 processes of 8 goroutines, and a Python agent
// following the documented protocol, spawn tasks (queued -> running,
// registered, one transaction, refused at the cap) and finish them
// (running -> completed, unregistered). An observer in the test holds the
// registry's lock again and again and counts the running status files:
// never more than 5, and always exactly the registry's active_count. At
// the end every count matches the status files.

type registry struct {
	Agents        []string `json:"agents"`
	ActiveCount   int      `json:"active_count"`
	TotalSpawned  int      `json:"total_spawned"`
	MaxConcurrent int      `json:"max_concurrent"`
}

var errAtCapacity = errors.New("at capacity")

func spawnTask(ctx context.Context, reg *status.Store[registry], task *status.Store[status.Status]) error {
	_, _, err := status.MutateAll2(ctx, reg, task, func(r *registry, t *status.Status) error {
		if r.ActiveCount >= r.MaxConcurrent {
			return errAtCapacity
		}
		r.ActiveCount++
		r.TotalSpawned++
		r.Agents = append(r.Agents, t.Task)
		return t.Transition(status.Running, status.Queued)
	})
	return err
}

func finishTask(ctx context.Context, reg *status.Store[registry], task *status.Store[status.Status]) error {
	_, _, err := status.MutateAll2(ctx, task, reg, func(t *status.Status, r *registry) error {
		r.ActiveCount--
		r.Agents = slices.DeleteFunc(r.Agents, func(a string) bool { return a == t.Task })
		return t.Transition(status.Completed, status.Running)
	})
	return err
}

// spawnTwo and finishTwo are the CONTROL: the same changes as two Mutate
// calls, the registry's first.
func spawnTwo(ctx context.Context, reg *status.Store[registry], task *status.Store[status.Status]) error {
	name := filepath.Base(filepath.Dir(task.Name()))
	if _, err := reg.Mutate(ctx, func(r *registry) error {
		if r.ActiveCount >= r.MaxConcurrent {
			return errAtCapacity
		}
		r.ActiveCount++
		r.TotalSpawned++
		r.Agents = append(r.Agents, name)
		return nil
	}); err != nil {
		return err
	}
	_, err := task.Mutate(ctx, status.Transition(status.Running, status.Queued))
	return err
}

func finishTwo(ctx context.Context, reg *status.Store[registry], task *status.Store[status.Status]) error {
	name := filepath.Base(filepath.Dir(task.Name()))
	if _, err := reg.Mutate(ctx, func(r *registry) error {
		r.ActiveCount--
		r.Agents = slices.DeleteFunc(r.Agents, func(a string) bool { return a == name })
		return nil
	}); err != nil {
		return err
	}
	_, err := task.Mutate(ctx, status.Transition(status.Completed, status.Running))
	return err
}

func taskStore(dir, name string) *status.Store[status.Status] {
	return status.NewStore[status.Status](filepath.Join(dir, "tasks", name, "status.json"))
}

func taskName(proc, g, k int) string { return fmt.Sprintf("p%d-g%d-k%d", proc, g, k) }

var _ = cpRegister("txadmit", func(a cpArgs, out *cpReporter) error {
	reg := status.NewStore[registry](filepath.Join(a.Path, "registry.json"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a hang fails; nothing is timed
	defer cancel()
	if err := cpGate(out); err != nil {
		return err
	}
	var wg sync.WaitGroup
	errc := make(chan error, a.Goroutines)
	for g := range a.Goroutines {
		wg.Go(func() {
			for k := range a.Iterations {
				task := taskStore(a.Path, taskName(a.Client, g, k))
				backoff := time.Millisecond
				spawn, finish := spawnTask, finishTask
				if a.Writer == "two" {
					spawn, finish = spawnTwo, finishTwo
				}
				for {
					err := spawn(ctx, reg, task)
					if err == nil {
						break
					}
					if !errors.Is(err, errAtCapacity) {
						errc <- err
						return
					}
					// Wait for room: a backoff, not a synchronisation.
					time.Sleep(backoff/2 + rand.N(backoff/2+1))
					backoff = min(2*backoff, 20*time.Millisecond)
				}
				if err := finish(ctx, reg, task); err != nil {
					errc <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return err
	}
	return out.line("done")
})

func TestAdmissionControlAcrossProcesses(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 not found in PATH: this test needs it (make test installs it with make deps)")
	}
	if err := admission(t, "tx", 8, 8, 2, 6); err != nil {
		t.Fatal(err)
	}
}

// CONTROL: spawning and finishing as two Mutate calls, in the same
// harness: the observer catches a registry that does not match the status
// files.
func TestAdmissionControlControlTwoMutates(t *testing.T) {
	err := admission(t, "two", 4, 4, 2, 0)
	if err == nil {
		t.Fatal("CONTROL: two Mutate calls per step kept the registry and the status files in step: the observer cannot see drift")
	}
	t.Logf("two Mutate calls per step: %v", err)
}

// admission runs the workload (procs processes of goroutines goroutines,
// perGoroutine tasks each, and a Python agent with pyTasks tasks if
// pyTasks > 0) with the given variant and returns the first violation.
func admission(t *testing.T, variant string, procs, goroutines, perGoroutine, pyTasks int) error {
	const maxConcurrent = 5
	dir := t.TempDir()
	ctx := context.Background()
	reg := status.NewStore[registry](filepath.Join(dir, "registry.json"))
	if _, err := reg.Create(ctx, registry{MaxConcurrent: maxConcurrent}); err != nil {
		t.Fatal(err)
	}
	var tasks []*status.Store[status.Status]
	create := func(name string) string {
		task := taskStore(dir, name)
		os.MkdirAll(filepath.Dir(task.Name()), 0o755)
		if _, err := task.Create(ctx, status.Status{State: status.Queued, Task: name}); err != nil {
			t.Fatal(err)
		}
		tasks = append(tasks, task)
		return task.Name()
	}
	for p := range procs {
		for g := range goroutines {
			for k := range perGoroutine {
				create(taskName(p, g, k))
			}
		}
	}
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	var cs []*cpChild
	for p := range procs {
		cs = append(cs, cpStartGo(t, fmt.Sprintf("txadmit %d", p), "txadmit", cpArgs{Path: dir, Writer: variant, Client: p, Goroutines: goroutines, Iterations: perGoroutine, Seed: seed}))
	}
	if pyTasks > 0 {
		pyArgs := []string{filepath.Join("testdata", "txn_agent.py"), "spawn", reg.Name()}
		for k := range pyTasks {
			pyArgs = append(pyArgs, create(fmt.Sprintf("py-%d", k)))
		}
		cs = append(cs, cpStart(t, "txn_agent.py", exec.Command("python3", pyArgs...), false))
	}

	// The observer: under the registry's lock, no transaction is half-way
	// (each holds the registry's lock for its whole commit), so the status
	// files, read without their locks, are the committed ones.
	stop := make(chan struct{})
	type observation struct{ running, active int }
	var seen []observation
	var obsErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			_, err := reg.Mutate(ctx, func(r *registry) error {
				running := 0
				for _, task := range tasks {
					s, err := task.Load(ctx)
					if err != nil {
						return err
					}
					if s.State == status.Running {
						running++
					}
				}
				seen = append(seen, observation{running, r.ActiveCount})
				return nil // no change: nothing written
			})
			if err != nil {
				obsErr = err
				return
			}
		}
	})
	cpRelease(t, cs)
	for _, c := range cs {
		for {
			l, ok := c.next()
			if !ok || l == "done" || strings.HasPrefix(l, "result") {
				break
			}
		}
		c.mustExit(t)
	}
	close(stop)
	wg.Wait()
	if obsErr != nil {
		t.Fatal(obsErr)
	}
	peak := 0
	for i, o := range seen {
		if o.running > maxConcurrent || o.running != o.active {
			return fmt.Errorf("observation %d of %d: %d tasks running, registry active_count %d (max_concurrent %d)", i, len(seen), o.running, o.active, maxConcurrent)
		}
		peak = max(peak, o.running)
	}
	tx, err := status.LoadAll(ctx, append([]status.AnyStore{reg}, docsOfTasks(tasks)...)...)
	if err != nil {
		t.Fatal(err)
	}
	r := inTx(reg, tx)
	completed := 0
	for _, task := range tasks {
		if inTx(task, tx).State == status.Completed {
			completed++
		}
	}
	t.Logf("%d observations under the registry's lock, at most %d running; %d tasks spawned and finished", len(seen), peak, r.TotalSpawned)
	if r.ActiveCount != 0 || len(r.Agents) != 0 || r.TotalSpawned != len(tasks) || completed != len(tasks) {
		return fmt.Errorf("at the end: registry %+v, %d of %d status files completed", *r, completed, len(tasks))
	}
	return nil
}

func docsOfTasks(ts []*status.Store[status.Status]) []status.AnyStore {
	ds := make([]status.AnyStore, len(ts))
	for i, s := range ts {
		ds[i] = s
	}
	return ds
}
