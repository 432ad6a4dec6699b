//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package status_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentstate/core/status"
)

// Crash atomicity across processes. A registry counts the tasks whose
// status is running and names them; every transaction toggles one task
// (queued -> running or back), counts itself in the registry's total and
// in the task's runs, all in one MutateAll. Child processes run such
// transactions and are SIGKILLed at random moments; the Python agent
// kills itself at every step of its commit. (Go children killed at every
// step of theirs, through the package's commit hook, are tested inside
// status/.) After each kill the parent, as the next locker (LoadAll),
// requires the invariant:
// active_count == the number of running tasks, agents == their names,
// total == the sum of the tasks' runs; and no acknowledged transaction may
// be lost. The CONTROL does the same change as two Mutate calls and is
// killed between them: the invariant breaks.

type cpRegistry struct {
	Active int      `json:"active_count"`
	Total  int      `json:"total_spawned"`
	Agents []string `json:"agents"`
}

type cpFleet struct {
	reg   *status.Store[cpRegistry]
	tasks []*status.Store[status.Status]
	docs  []status.AnyStore // registry first
}

func cpOpenFleet(dir string, n int) cpFleet {
	f := cpFleet{reg: status.NewStore[cpRegistry](filepath.Join(dir, "registry.json"))}
	f.docs = append(f.docs, f.reg)
	for i := range n {
		t := status.NewStore[status.Status](filepath.Join(dir, fmt.Sprintf("task%d", i), "status.json"))
		f.tasks = append(f.tasks, t)
		f.docs = append(f.docs, t)
	}
	return f
}

func cpMakeFleet(t *testing.T, n int) (string, cpFleet) {
	t.Helper()
	dir := t.TempDir()
	f := cpOpenFleet(dir, n)
	for i, task := range f.tasks {
		os.Mkdir(filepath.Dir(task.Name()), 0o755)
		if _, err := task.Create(context.Background(), status.Status{State: status.Queued, Task: strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
	}
	return dir, f
}

// toggle is one transaction on task i.
func (f cpFleet) toggle(ctx context.Context, i int) error {
	reg, task := f.reg, f.tasks[i]
	_, _, err := status.MutateAll2(ctx, task, reg, func(s *status.Status, r *cpRegistry) error {
		cpToggleRegistry(r, s.State, s.Task)
		s.Runs++
		if s.State == status.Running {
			s.State = status.Queued
		} else {
			s.State = status.Running
		}
		return nil
	})
	return err
}

// toggleTwo is the CONTROL's toggle: the task's state read without a lock,
// then the registry and the task changed in two Mutate calls.
func (f cpFleet) toggleTwo(ctx context.Context, i int) error {
	s, err := f.tasks[i].Load(ctx)
	if err != nil {
		return err
	}
	if _, err := f.reg.Mutate(ctx, func(r *cpRegistry) error { cpToggleRegistry(r, s.State, s.Task); return nil }); err != nil {
		return err
	}
	_, err = f.tasks[i].Mutate(ctx, func(t *status.Status) error {
		t.Runs++
		if s.State == status.Running {
			t.State = status.Queued
		} else {
			t.State = status.Running
		}
		return nil
	})
	return err
}

func cpToggleRegistry(r *cpRegistry, state status.State, name string) {
	r.Total++
	if state == status.Running {
		r.Active--
		r.Agents = slices.DeleteFunc(r.Agents, func(a string) bool { return a == name })
	} else {
		r.Active++
		r.Agents = append(r.Agents, name)
	}
}

// check reads the fleet as the next locker and returns the registry's
// total, or an error describing the broken invariant.
func (f cpFleet) check(ctx context.Context) (int, error) {
	tx, err := status.LoadAll(ctx, f.docs...)
	if err != nil {
		return 0, err
	}
	r := inTx(f.reg, tx)
	var running []string
	runs := 0
	for _, task := range f.tasks {
		s := inTx(task, tx)
		runs += s.Runs
		if s.State == status.Running {
			running = append(running, s.Task)
		}
	}
	agents := slices.Sorted(slices.Values(r.Agents))
	if r.Active != len(running) || !slices.Equal(agents, running) || r.Total != runs {
		return r.Total, fmt.Errorf("registry active %d agents %v total %d; running tasks %v, runs %d", r.Active, agents, r.Total, running, runs)
	}
	return r.Total, nil
}

// The txkillee child toggles random tasks in a.Goroutines goroutines until
// it is killed, reporting "call" before and "ack" after each transaction.
// Writer "two" is the CONTROL (each change as two Mutate calls, see
// toggleTwo), and "two-once" makes one such change with "between" reported
// (and the child blocked) between the calls.
var _ = cpRegister("txkillee", func(a cpArgs, w *cpReporter) error {
	ctx := context.Background()
	f := cpOpenFleet(a.Path, a.Iterations)
	if a.Writer == "two-once" {
		i := int(a.Seed) % a.Iterations
		s, err := f.tasks[i].Load(ctx)
		if err != nil {
			return err
		}
		if _, err := f.reg.Mutate(ctx, func(r *cpRegistry) error { cpToggleRegistry(r, s.State, s.Task); return nil }); err != nil {
			return err
		}
		w.line("between")
		select {} // the parent kills us here
	}
	var wg sync.WaitGroup
	errc := make(chan error, a.Goroutines)
	for g := range a.Goroutines {
		rng := rand.New(rand.NewPCG(a.Seed, uint64(g)))
		wg.Go(func() {
			for {
				if err := w.line("call"); err != nil {
					errc <- err
					return
				}
				toggle := f.toggle
				if a.Writer == "two" {
					toggle = f.toggleTwo
				}
				if err := toggle(ctx, rng.IntN(a.Iterations)); err != nil {
					errc <- err
					return
				}
				if err := w.line("ack"); err != nil {
					errc <- err
					return
				}
			}
		})
	}
	wg.Wait() // only on error: otherwise until killed
	return <-errc
})

// cpKilled reads the rest of a killed child's reports and checks that
// SIGKILL ended it.
func cpKilled(t *testing.T, c *cpChild, count func(string)) {
	t.Helper()
	for {
		l, ok := c.next()
		if !ok {
			break
		}
		count(l)
	}
	c.wait()
	ws, _ := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("%s did not die of SIGKILL: %v\n%s", c.name, c.err, c.stderr.String())
	}
}

func TestCrossprocTxSIGKILLRandom(t *testing.T) {
	dir, st, err := cpTxKillRounds(t, "tx")
	t.Logf("%d kills over %d transactions called, %d acknowledged, %d committed; %d kills after a commit point, before the acknowledgement",
		st.kills, st.calls, st.acks, st.total, st.pastCommit)
	if err != nil {
		t.Fatal(err)
	}
	if l := cpTxLeftovers(t, dir); len(l) > 0 {
		t.Fatalf("left after recovery: %v", l)
	}
}

// CONTROL: the same harness with the change made by two Mutate calls (see
// cpFleet.toggleTwo) must see the invariant broken.
func TestCrossprocTxSIGKILLRandomControlTwoMutates(t *testing.T) {
	_, st, err := cpTxKillRounds(t, "two")
	if err == nil {
		t.Fatalf("CONTROL: %d kills of two-Mutate writers over %d changes kept the invariant: the harness cannot see a torn transaction", st.kills, st.calls)
	}
	t.Logf("two Mutate calls, after %d kills: %v", st.kills, err)
}

type cpKillStats struct{ calls, acks, kills, total, pastCommit int }

// cpTxKillRounds starts txkillee children (writer "tx" or "two") over one
// fleet and SIGKILLs each at a random moment, until at least 200
// transactions were called over at least 30 kills, checking the fleet as
// the next locker after each kill. It returns the first violation.
func cpTxKillRounds(t *testing.T, writer string) (string, cpKillStats, error) {
	const tasks = 6
	minTx, minKills := 200, 30
	if cpSoak() {
		minTx, minKills = 600, 90
	}
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	dir, f := cpMakeFleet(t, tasks)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a hang fails, nothing else is timed
	defer cancel()
	var st cpKillStats
	for st.calls < minTx || st.kills < minKills {
		c := cpStartGo(t, "txkillee", "txkillee", cpArgs{Path: dir, Writer: writer, Goroutines: 1 + rng.IntN(3), Iterations: tasks, Seed: rng.Uint64()})
		roundCalls, roundAcks := 0, 0
		count := func(l string) {
			switch l {
			case "call":
				roundCalls++
			case "ack":
				roundAcks++
			}
		}
		for range 1 + rng.IntN(16) {
			l, ok := c.next()
			if !ok {
				break
			}
			count(l)
		}
		// A random delay up to about one commit's duration, so that the
		// kill lands anywhere in the transaction the child just began
		// (waiting, reading, writing, syncing, renaming), not only at
		// its start. It picks the moment; nothing waits on it.
		time.Sleep(rand.N(4 * time.Millisecond))
		// Half the rounds, a transaction of the parent contends at the
		// moment of the kill; it must get through.
		var parent chan error
		if rng.IntN(2) == 0 {
			parent = make(chan error, 1)
			i := rng.IntN(tasks)
			go func() { parent <- f.toggle(ctx, i) }()
		}
		if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cpKilled(t, c, count)
		st.kills++
		if parent != nil {
			if err := <-parent; err != nil {
				t.Fatalf("kill %d: the parent's transaction across the kill: %v", st.kills, err)
			}
			roundAcks++
			roundCalls++
		}
		st.calls, st.acks = st.calls+roundCalls, st.acks+roundAcks
		got, err := f.check(ctx)
		if err != nil {
			return dir, st, fmt.Errorf("kill %d: invariant broken for the next locker: %w", st.kills, err)
		}
		if got < st.total+roundAcks || got > st.total+roundCalls {
			return dir, st, fmt.Errorf("kill %d: %d transactions committed this round, want between %d acknowledged and %d called", st.kills, got-st.total, roundAcks, roundCalls)
		}
		if got > st.total+roundAcks {
			st.pastCommit++
		}
		st.total = got
	}
	return dir, st, nil
}

// txnSteps are the steps of a commit of two documents, in order, as the
// Python agent (and the package's own commit hook) name them; from
// "journal" on, the transaction is committed.
var txnSteps = []string{
	"marker 0", "temp 0", "marker 1", "temp 1", "prepared", "journal", "committed",
	"renamed 0", "renamed 1", "installed", "forgotten", "unmarked 0", "unmarked 1",
}

// cpTxLeftovers lists the commit files (markers, new contents, journals)
// in dir's tree.
func cpTxLeftovers(t *testing.T, dir string) []string {
	t.Helper()
	var found []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && (strings.HasSuffix(d.Name(), ".txn") || strings.HasSuffix(d.Name(), ".txn.tmp") || strings.HasSuffix(d.Name(), ".journal")) {
			found = append(found, p)
		}
		return err
	})
	return found
}

// CONTROL: the same change as two Mutate calls, killed between them,
// breaks the invariant the check above requires.
func TestCrossprocTxSIGKILLControlTwoMutates(t *testing.T) {
	dir, f := cpMakeFleet(t, 2)
	c := cpStartGo(t, "txkillee", "txkillee", cpArgs{Path: dir, Writer: "two-once", Iterations: 2, Seed: 1})
	c.expect(t, "between")
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cpKilled(t, c, func(string) {})
	_, err := f.check(context.Background())
	if err == nil {
		t.Fatal("CONTROL: two Mutate calls killed between them kept the invariant: the check cannot see a torn transaction")
	}
	t.Logf("two Mutate calls killed between them: %v", err)
}

// The Python agent (testdata/txn_agent.py) follows the documented protocol
// from outside Go: killed at every step of its own commit, it leaves files
// that the Go lockers complete or undo.

func cpTxAgent(args ...string) *exec.Cmd {
	return exec.Command("python3", append([]string{filepath.Join("testdata", "txn_agent.py")}, args...)...)
}

func TestCrossprocTxPythonKilledAtEveryStep(t *testing.T) {
	cpNeedPython(t)
	commit := slices.Index(txnSteps, "journal")
	for k, step := range txnSteps {
		t.Run(step, func(t *testing.T) {
			dir, f := cpMakeFleet(t, 1)
			c := cpStart(t, "txn_agent.py", cpTxAgent("toggle", f.reg.Name(), f.tasks[0].Name(), "--die-at", step), false)
			cpRelease(t, []*cpChild{c})
			c.expect(t, "dying")
			cpKilled(t, c, func(string) {})
			got, err := f.check(context.Background())
			if err != nil {
				t.Fatalf("invariant broken after the Python agent died at %q: %v", step, err)
			}
			if want := min(k/commit, 1); got != want {
				t.Fatalf("%d transactions committed, want %d (killed at %q)", got, want, step)
			}
			if l := cpTxLeftovers(t, dir); len(l) > 0 {
				t.Fatalf("left after recovery: %v", l)
			}
		})
	}
}
