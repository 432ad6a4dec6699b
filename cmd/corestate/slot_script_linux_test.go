package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/slots"
)

// slotScript is a dispatcher and its agents in shell, with corestate alone:
// it reserves a slot for task fix-42, starts an agent through the exec
// wrapper (which adopts the slot, then becomes the agent), lets the test
// kill the agent, reaps (failing the task in the same transaction), then
// reserves, adopts and releases a slot for task fix-43. After each step it
// prints the step (the agent's pid after "adopted") and waits for a line.
const slotScript = `set -eu
reg=registry.json
step() { echo "$@"; read -r _; }
corestate slot reserve --id a42 --key fix-42 --owner $$ --resource log=logs/fix-42 "$reg" \
	-- fix-42/status.json --if status=queued status=running >/dev/null
step reserved
corestate slot adopt "$reg" a42 -- sh -c 'echo adopted >"$0"; exec sleep 600' "$PWD/fifo" &
agent=$!
read -r _ <fifo
step adopted $agent
REAP
step reaped
corestate slot reserve --id a43 --key fix-43 "$reg" -- fix-43/status.json --if status=queued status=running >/dev/null
step reserved-43
corestate slot adopt "$reg" a43 >/dev/null
step adopted-43
corestate slot release "$reg" a43 --if status=running status=completed >/dev/null
step released-43
`

// The reap of the script, one transaction; and the CONTROL's, the two
// steps a script had before: the slot first, the task after.
const (
	atomicReap  = `corestate slot reap "$reg" --if status=running status=failed >reaped.txt`
	twoStepReap = `corestate reap --in agents --count active_count "$reg" >reaped.txt
step between
corestate set fix-42/status.json status=failed --if status=running >/dev/null`
)

// TestSlotScript runs the script with each step one corestate command, and
// a checker reading the registry and both tasks under their locks
// (LoadAll) at every step and, concurrently, all the time. It must never see
// a running task without a slot, a slot whose task is not running, or counts
// that differ from the slots; at the end the registry is empty, the killed
// agent's task failed and the other completed, and the reap printed the
// killed agent's slot with its resources. CONTROL: the same script reaping
// in two steps (corestate reap, then corestate set) is caught between them.
func TestSlotScript(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("no sh: %v", err)
	}
	t.Run("atomic", func(t *testing.T) {
		steps, racing := runSlotScript(t, sh, atomicReap)
		for _, s := range steps {
			if s.err != nil {
				t.Errorf("after %s: %v", s.name, s.err)
			}
		}
		if racing.violations.Load() != 0 {
			t.Errorf("the concurrent checker saw %d of %d snapshots break the invariant; first: %v", racing.violations.Load(), racing.snapshots.Load(), racing.first())
		}
		t.Logf("%d steps, %d concurrent snapshots, no violation", len(steps), racing.snapshots.Load())
	})
	t.Run("control", func(t *testing.T) {
		steps, _ := runSlotScript(t, sh, twoStepReap)
		i := slices.IndexFunc(steps, func(s scriptStep) bool { return s.name == "between" })
		if i < 0 || steps[i].err == nil {
			t.Fatalf("CONTROL: the two-step reap was not caught between its steps: %+v", steps)
		}
		t.Logf("CONTROL caught between the two steps: %v", steps[i].err)
	})
}

// A scriptStep is what the checker found when the script stopped after a
// step.
type scriptStep struct {
	name string
	err  error
}

// racingChecker counts snapshots taken while the script runs.
type racingChecker struct {
	snapshots, violations atomic.Int64
	mu                    sync.Mutex
	firstErr              error
}

func (r *racingChecker) first() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.firstErr
}

func runSlotScript(t *testing.T, sh, reap string) ([]scriptStep, *racingChecker) {
	t.Helper()
	dir, reg := slotFleet(t, `{"max_concurrent": 2}`, "fix-42", "fix-43")
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	wrapper := fmt.Sprintf("#!/bin/sh\n%s=1 exec %s \"$@\"\n", asCorestateEnv, strconv.Quote(os.Args[0]))
	writeFile(t, filepath.Join(bin, "corestate"), wrapper)
	if err := os.Chmod(filepath.Join(bin, "corestate"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	tasks := []string{filepath.Join(dir, "fix-42", "status.json"), filepath.Join(dir, "fix-43", "status.json")}
	check := func() error { return checkSlotDocs(reg, tasks) }

	cmd := exec.Command(sh, "-c", strings.Replace(slotScript, "REAP", reap, 1))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var agent int
	defer func() {
		in.Close()
		if agent > 0 {
			syscall.Kill(agent, syscall.SIGKILL)
		}
		cmd.Process.Kill()
		cmd.Wait()
	}()

	racing := &racingChecker{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			err := check()
			racing.snapshots.Add(1)
			if err != nil {
				racing.violations.Add(1)
				racing.mu.Lock()
				if racing.firstErr == nil {
					racing.firstErr = err
				}
				racing.mu.Unlock()
			}
		}
	})
	var steps []scriptStep
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		f := strings.Fields(lines.Text())
		step := scriptStep{name: f[0], err: check()}
		steps = append(steps, step)
		if f[0] == "adopted" {
			// The exec wrapper kept its pid: the agent owns its slot.
			agent, _ = strconv.Atoi(f[1])
			if o := slotOwner(t, reg, "a42"); o != agent {
				t.Errorf("slot a42 is owned by pid %d; the agent is %d", o, agent)
			}
			if err := syscall.Kill(agent, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
		if f[0] == "reserved" {
			if o := slotOwner(t, reg, "a42"); o != cmd.Process.Pid {
				t.Errorf("slot a42 was reserved by pid %d; the script is %d", o, cmd.Process.Pid)
			}
		}
		if f[0] == "reserved-43" {
			if o := slotOwner(t, reg, "a43"); o != cmd.Process.Pid {
				t.Errorf("slot a43 (no --owner) is owned by pid %d; corestate's parent, the script, is %d", o, cmd.Process.Pid)
			}
		}
		io.WriteString(in, "go\n")
	}
	close(stop)
	wg.Wait()
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("script: %v\n%s", err, stderr.String())
	}

	r := loadRegistry(t, reg)
	if len(r.Agents) != 0 || r.ActiveCount != 0 {
		t.Errorf("at the end: slots %d, active_count %d", len(r.Agents), r.ActiveCount)
	}
	for i, want := range []string{"failed", "completed"} {
		if got := taskState(t, tasks[i]); got != want {
			t.Errorf("%s is %s, want %s", tasks[i], got, want)
		}
	}
	reaped := readFile(t, filepath.Join(dir, "reaped.txt"))
	if !strings.Contains(reaped, `"id":"a42"`) || !strings.Contains(reaped, `"log":"logs/fix-42"`) {
		t.Errorf("reap printed:\n%s", reaped)
	}
	return steps, racing
}

// checkSlotDocs reads the registry and the tasks under their locks and
// returns the first broken invariant: counts are the slots', and a task
// runs exactly when a slot names it.
func checkSlotDocs(reg string, tasks []string) error {
	r := status.NewStore[slots.Registry](reg)
	docs := []status.AnyStore{r}
	for _, p := range tasks {
		docs = append(docs, status.NewStore[status.Status](p))
	}
	tx, err := status.LoadAll(context.Background(), docs...)
	if err != nil {
		return err
	}
	g, err := r.In(tx)
	if err != nil {
		return err
	}
	if g.ActiveCount != len(g.Agents) || g.TotalSpawned < len(g.Agents) {
		return fmt.Errorf("active_count %d, total_spawned %d, %d slots", g.ActiveCount, g.TotalSpawned, len(g.Agents))
	}
	for i, p := range tasks {
		name, _ := filepath.Rel(filepath.Dir(reg), p)
		held := slices.ContainsFunc(g.Agents, func(s slots.Slot) bool { return slices.Contains(s.Docs, name) })
		task, err := docs[i+1].(*status.Store[status.Status]).In(tx)
		if err != nil {
			return err
		}
		running := task.State == status.Running
		if held != running {
			return fmt.Errorf("%s: running %v, held by a slot %v", name, running, held)
		}
	}
	return nil
}

// slotOwner returns the pid that owns slot id.
func slotOwner(t *testing.T, reg, id string) int {
	t.Helper()
	for _, s := range loadRegistry(t, reg).Agents {
		if s.ID == id {
			return s.Owner.PID
		}
	}
	t.Fatalf("no slot %s", id)
	return 0
}
