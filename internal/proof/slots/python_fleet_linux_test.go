package slots_test

import (
	"path/filepath"
	"testing"
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
	bareFleetCaught(t, []fleetMember{pythonMember(t)})
}
