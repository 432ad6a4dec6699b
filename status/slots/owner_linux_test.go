package slots_test

import (
	"os/exec"
	"testing"

	"github.com/agentstate/core/status/claim"
)

// processOwner starts a process and returns its owner, and a function that
// kills it: claim.Local then calls the owner dead.
func processOwner(t *testing.T) (claim.Owner, func()) {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	o, err := claim.Of(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	var done bool
	kill := func() {
		if !done {
			done = true
			cmd.Process.Kill()
			cmd.Wait()
		}
	}
	t.Cleanup(kill)
	return o, kill
}
