package slots_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// pythonMember is the fleet member of the repository's Python package
// (python/, import agentstate.slots): testdata/fleet_member.py, which
// follows doc.go's protocol as the Go member does.
func pythonMember(t *testing.T) fleetMember {
	t.Helper()
	requirePython(t)
	py, err := filepath.Abs(filepath.Join("testdata", "fleet_member.py"))
	if err != nil {
		t.Fatal(err)
	}
	return fleetMember{
		name:       "python",
		dispatcher: agentCmd{Argv: []string{"python3", py, "dispatcher"}},
		agent:      agentCmd{Argv: []string{"python3", py, "agent"}},
	}
}

// TestFleetPythonUnderKills: Python dispatchers and Python agents alone,
// as the mixed fleet of TestFleetUnderKills (where Python is one member of
// three, drawn at random).
func TestFleetPythonUnderKills(t *testing.T) {
	fleetUnderKills(t, []fleetMember{pythonMember(t)}, 30)
}

// TestFleetControlPythonBare: Python members admitting, releasing and
// reaping by a bare read-modify-write of the registry (no lock; an atomic
// replace, never torn) must be caught, by the checker or the final
// comparison, as the Go members' are (TestFleetControlBareReadModifyWrite).
func TestFleetControlPythonBare(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	for attempt := 1; attempt <= 3; attempt++ {
		f := newFleetRun(t, "bare", []fleetMember{pythonMember(t)}, 40, uint64(attempt))
		f.run(ctx, 3)
		diff := f.finish(ctx)
		if f.violation != nil || len(diff) > 0 {
			t.Logf("CONTROL caught (attempt %d): checker %d of %d snapshots, first %v; final: %v", attempt, f.violated, f.checks, f.violation, diff)
			return
		}
	}
	t.Fatal("CONTROL: the Python bare read-modify-write fleet was not caught in 3 runs: the harness does not see the race")
}
