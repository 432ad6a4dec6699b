//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package status

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A Go commit SIGKILLed at every step (killAt), then the Python package
// (python/, import agentstate, through txn_agent.py check) as the next
// locker of both documents: it completes or undoes the transaction as the
// commit point says, and sees the registry's count equal to the task's
// state. The CONTROL is a Python reader that skips the recovery (a client
// of the basic protocol): at some step it sees half the transaction.

// pyView is what txn_agent.py check reports.
type pyView struct {
	Active, Agents int
	State          State
}

func pyCheck(t *testing.T, dir string, basic bool) pyView {
	t.Helper()
	args := []string{filepath.Join("..", "internal", "proof", "status", "testdata", "txn_agent.py"), "check",
		filepath.Join(dir, "registry.json"), filepath.Join(dir, "task", "status.json")}
	if basic {
		args = append(args, "--basic")
	}
	out, err := exec.Command("python3", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("txn_agent.py check: %v\n%s", err, out)
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "view ")
	var v pyView
	if !ok || json.Unmarshal([]byte(rest), &v) != nil {
		t.Fatalf("txn_agent.py check said %q", out)
	}
	return v
}

func pyNeed(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not found in PATH: the cross-language recovery test needs it (make test installs it)")
	}
}

func TestTxGoKilledRecoveredByPython(t *testing.T) {
	pyNeed(t)
	steps := commitSteps(t, 2)
	commit := slices.Index(steps, "journal")
	for k, step := range steps {
		t.Run(step, func(t *testing.T) {
			dir := t.TempDir()
			reg, task := txDocs(t, dir)
			seedTx(t, reg, task)
			killAt(t, dir, step, "dying")
			v := pyCheck(t, dir, false)
			want := min(k/commit, 1)
			if running := v.State == Running; v.Active != want || v.Agents != want || running != (want == 1) {
				t.Fatalf("Python, the next locker after Go died at %q, sees %+v; want %d transactions, counted in both", step, v, want)
			}
			if got, err := checkSpawn(t, dir); err != nil || got != want {
				t.Fatalf("after Python's recovery Go sees %d transactions (%v), want %d", got, err, want)
			}
			if l := leftovers(t, dir); len(l) > 0 {
				t.Fatalf("left after Python's recovery: %v", l)
			}
		})
	}
}

// CONTROL: without the recovery a Python reader sees a registry that
// disagrees with the task after some kill.
func TestTxGoKilledControlPythonWithoutRecovery(t *testing.T) {
	pyNeed(t)
	var torn []string
	for _, step := range commitSteps(t, 2) {
		dir := t.TempDir()
		reg, task := txDocs(t, dir)
		seedTx(t, reg, task)
		killAt(t, dir, step, "dying")
		if v := pyCheck(t, dir, true); v.Active != v.Agents || (v.State == Running) != (v.Active == 1) {
			torn = append(torn, step)
		}
	}
	if len(torn) == 0 {
		t.Fatal("CONTROL: a Python reader without recovery never saw half a transaction: the test cannot tell recovery from its absence")
	}
	t.Logf("without recovery, Python saw half a transaction after kills at %q", torn)
}
