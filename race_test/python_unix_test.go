//go:build unix

package racetest

import (
	"os/exec"
	"testing"
)

// A Python agent joins the fleet through the locking protocol (the Python
// package in python/): two Go servers run the workload while
// testdata/qa_agent.py updates every workspace. Nothing it commits
// may be lost, and its field qa.checked, which no Go struct declares, must
// survive every Go write.

const pyRounds = 25

func needPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 not found in PATH: this test needs it (make test installs it with make deps)")
	}
}

func TestAgentWorkloadPythonAgent(t *testing.T) {
	needPython(t)
	_, workspaces := sizes()
	v := runFleet(t, "module", 2, workspaces, pyRounds)
	t.Logf("module + python: %s", v)
	if v.Lost != 0 || v.Phantom != 0 || v.Torn != 0 || v.Regressions != 0 || len(v.Errors) > 0 ||
		len(v.ShutdownErrs) > 0 || len(v.GaveUp) > 0 || v.Unfinished != 0 {
		t.Fatalf("with a Python agent: %s", v)
	}
	if v.PyAcked != pyRounds*workspaces {
		t.Fatalf("the Python agent committed %d updates, want %d", v.PyAcked, pyRounds*workspaces)
	}
	v.requireCoverage(t, workspaces, 2)
}

// The control: Go servers that do the bare read-modify-write lose updates
// even when the other participant follows the protocol — the lock protects
// only those who take it.
func TestAgentWorkloadPythonAgentControlBareAtomic(t *testing.T) {
	needPython(t)
	_, workspaces := sizes()
	v := runFleet(t, "bare-atomic", 2, workspaces, pyRounds)
	t.Logf("bare-atomic + python: %s", v)
	if v.PyAcked == 0 {
		t.Fatal("the Python agent committed nothing")
	}
	if v.Lost+v.Phantom+v.Torn+v.Regressions == 0 {
		t.Fatal("CONTROL: no violation detected with bare Go writers next to a locking Python agent")
	}
}
