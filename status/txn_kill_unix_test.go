//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package status

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/agentstate/core/status/internal/journal"
)

// Go children SIGKILLed at every step of a commit, through the commit hook
// (the journal's Crash switch), and at the moment between the two Mutate calls of the
// CONTROL. After each kill the next locker — LoadAll here, or the Python
// agent that follows the documented protocol for one document and then
// LoadAll for the other — must find the registry's count equal to the
// task's state, the transaction committed exactly when its journal was
// written, and no file of the commit left. (Kills at random moments of
// hundreds of transactions are in internal/proof/status.)

// The child's environment: the step at which it dies ("two" for the
// CONTROL), and the directory of its registry and task.
const (
	txnKillStep = "STATUS_TXN_KILL_STEP"
	txnKillDir  = "STATUS_TXN_KILL_DIR"
)

// A child runs its body instead of the tests: the test binary re-executed
// with txnKillStep set.
func init() {
	if os.Getenv(txnKillStep) != "" {
		txnKillChild()
	}
}

// txnKillChild is the child's body: one spawn of the task,
// dying at the step; or, for "two", the registry changed by one Mutate and
// then a wait to be killed before the task's.
func txnKillChild() {
	dir, step := os.Getenv(txnKillDir), os.Getenv(txnKillStep)
	reg, task := NewStore[txReg](filepath.Join(dir, "registry.json")), NewStore[Status](filepath.Join(dir, "task", "status.json"))
	ctx := context.Background()
	if step == "two" {
		if _, err := reg.Mutate(ctx, func(r *txReg) error { r.Active++; return nil }); err != nil {
			os.Exit(2)
		}
		os.Stdout.WriteString("between\n")
		select {} // the parent kills us here
	}
	journal.TestSeams().Crash = func(s string) bool { // the parent skipped in a build without them
		if s == step {
			os.Stdout.WriteString("dying\n")
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // until the signal lands
		}
		return false
	}
	if _, err := MutateAll(ctx, []AnyStore{reg, task}, spawn(reg, task)); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(2)
	}
	os.Stdout.WriteString("done\n")
	os.Exit(0)
}

// killAt runs a child that dies at step in dir's registry and task, and
// checks that SIGKILL ended it after it reported want.
func killAt(t *testing.T, dir, step, want string) {
	t.Helper()
	killAtCmd(t, exec.Command(os.Args[0], "-test.run=^$"), dir, step, want)
}

func killAtCmd(t *testing.T, cmd *exec.Cmd, dir, step, want string) {
	t.Helper()
	if step != "two" {
		needHooks(t) // the child dies at a commit step through the Crash switch
	}
	cmd.Env = append(os.Environ(), txnKillStep+"="+step, txnKillDir+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if step == "two" {
		cmd.Process.Signal(syscall.SIGKILL)
	}
	cmd.Wait()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if line != want+"\n" || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child at %q reported %q and ended %v, want %q and SIGKILL", step, line, cmd.ProcessState, want)
	}
}

// checkSpawn reads the registry and the task as the next locker and
// returns the registry's count, or an error if it disagrees with the task.
func checkSpawn(t *testing.T, dir string) (int, error) {
	t.Helper()
	reg, task := txDocs(t, dir)
	tx, err := LoadAll(context.Background(), reg, task)
	if err != nil {
		return 0, err
	}
	r, s := in(t, reg, tx), in(t, task, tx)
	running := 0
	if s.State == Running {
		running = 1
	}
	if r.Active != running || len(r.Agents) != running {
		return r.Active, fmt.Errorf("registry %+v, task %s", *r, s.State)
	}
	return r.Active, nil
}

func TestTxSIGKILLAtEveryStep(t *testing.T) {
	needHooks(t)
	steps := commitSteps(t, 2)
	commit := slices.Index(steps, "journal")
	for k, step := range steps {
		t.Run(step, func(t *testing.T) {
			dir := t.TempDir()
			reg, task := txDocs(t, dir)
			seedTx(t, reg, task)
			killAt(t, dir, step, "dying")
			got, err := checkSpawn(t, dir)
			if err != nil {
				t.Fatalf("invariant broken for the next locker: %v", err)
			}
			if want := min(k/commit, 1); got != want {
				t.Fatalf("%d transactions committed, want %d (killed at %q)", got, want, step)
			}
			if l := leftovers(t, dir); len(l) > 0 {
				t.Fatalf("left after recovery: %v", l)
			}
		})
	}
}

// The Python agent, as the next locker of one document after a Go commit
// killed at every step, decides as Go then decides for the other (a wrong
// decision breaks the invariant).
func TestTxPythonRecoversAtEveryStep(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not found in PATH: the cross-language recovery test needs it (make test installs it)")
	}
	agent := filepath.Join("..", "internal", "proof", "status", "testdata", "txn_agent.py")
	steps := commitSteps(t, 2)
	commit := slices.Index(steps, "journal")
	for k, step := range steps {
		doc := []string{"registry.json", filepath.Join("task", "status.json")}[k%2] // each in turn
		t.Run(step, func(t *testing.T) {
			dir := t.TempDir()
			reg, task := txDocs(t, dir)
			seedTx(t, reg, task)
			killAt(t, dir, step, "dying")
			path := filepath.Join(dir, doc)
			if out, err := exec.Command("python3", agent, "recover", path).CombinedOutput(); err != nil {
				t.Fatalf("python recover: %v\n%s", err, out)
			}
			if _, err := os.Lstat(path + markerSuffix); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the Python agent left the marker of %s", doc)
			}
			got, err := checkSpawn(t, dir)
			if err != nil {
				t.Fatalf("Python recovered %s, Go the other: %v", doc, err)
			}
			if want := min(k/commit, 1); got != want {
				t.Fatalf("%d transactions committed, want %d (killed at %q)", got, want, step)
			}
			if l := leftovers(t, dir); len(l) > 0 {
				t.Fatalf("left after recovery: %v", l)
			}
		})
	}
}

// CONTROL: the same change as two Mutate calls, killed between them,
// breaks the invariant the checks above require.
func TestTxSIGKILLControlTwoMutates(t *testing.T) {
	dir := t.TempDir()
	reg, task := txDocs(t, dir)
	seedTx(t, reg, task)
	killAt(t, dir, "two", "between")
	if _, err := checkSpawn(t, dir); err == nil {
		t.Fatal("CONTROL: two Mutate calls killed between them kept the invariant: the check cannot see a torn transaction")
	}
}
