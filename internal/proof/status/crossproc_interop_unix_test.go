//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package status_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/agentstate/core/status"
	"github.com/google/go-cmp/cmp"
)

// cpNeedPython skips when python3 is absent; CI installs it (make deps).
func cpNeedPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not found in PATH: the cross-language locking test needs it (make test installs it)")
	}
}

// cpPythonAlone runs the python agent by itself for iters increments.
func cpPythonAlone(t *testing.T, path string, iters int) {
	t.Helper()
	cmd := exec.Command("python3", filepath.Join("testdata", "interop_counter.py"), path, strconv.Itoa(iters), "lock")
	c := cpStart(t, "python", cmd, false)
	cpRelease(t, []*cpChild{c})
	var res cpCounterResult
	c.expectJSON(t, "result", &res)
	c.mustExit(t)
	if res.Acked != iters {
		t.Fatalf("python acknowledged %d increments, want %d", res.Acked, iters)
	}
}

func cpJSONValue(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("value %s: %v", raw, err)
	}
	return v
}

// A python3 agent that follows the documented protocol (fcntl.flock on the
// fresh-opened sidecar, temp file + fsync + os.replace + directory fsync)
// joins Go processes in the lost-update harness: nothing may be lost, and
// each side keeps the fields the other wrote.
func TestCrossprocPythonInterop(t *testing.T) {
	t.Parallel()
	cpNeedPython(t)
	path := cpSeed(t)
	run := cpCounterRun{procs: 4, goroutines: 8, iters: 50, writer: "mutate", python: 2, pyIters: 150, pyMode: "lock"}
	if cpSoak() {
		run.iters, run.pyIters = 100, 300
	}
	out := cpRunCounter(t, path, run)
	want := run.procs*run.goroutines*run.iters + run.python*run.pyIters
	t.Logf("Go and python together: final %d, want %d; %d lock-free reads", out.final, want, out.read.Reads)
	if out.want != want || out.final != want {
		t.Errorf("final count %d (acknowledged %d), want exactly %d: %d updates lost", out.final, out.want, want, want-out.final)
	}
	if out.read.Invalid != 0 || out.read.Decreases != 0 {
		t.Errorf("lock-free readers saw %d invalid documents and %d decreases: %q", out.read.Invalid, out.read.Decreases, out.read.Examples)
	}

	// Field preservation, one side at a time so that the last writer is known.
	cpPythonAlone(t, path, 1)
	pyExtra := cpRawFields(t, path)["py_extra"]
	if pyExtra == nil {
		t.Fatal("python did not write py_extra")
	}
	if _, err := status.Mutate(context.Background(), path, func(s *status.Status) error {
		s.Runs++
		s.Note = "go was here"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := cpRawFields(t, path)["py_extra"]; string(got) != string(pyExtra) {
		t.Errorf("Go changed python's unknown field:\n got %s\nwant %s", got, pyExtra)
	}
	cpPythonAlone(t, path, 1)
	s, err := status.Load(context.Background(), path)
	if err != nil {
		t.Fatalf("Go cannot read what python wrote: %v", err)
	}
	if s.Runs != want+3 || s.Note != "go was here" || s.State != status.Running || s.Agent != "crossproc" || !s.StartedAt.Equal(cpSeedStarted) {
		t.Errorf("python lost what Go wrote: %+v (want runs %d, note, state, agent, started_at kept)", s, want+3)
	}
	// Python re-encodes values (2.50 becomes 2.5), so its side is checked
	// for equal values; Go's side above is byte-for-byte.
	if diff := cmp.Diff(cpJSONValue(t, json.RawMessage(cpSeedExtra)), cpJSONValue(t, cpRawFields(t, path)["x_seed"])); diff != "" {
		t.Errorf("python changed the unknown field x_seed (-seed +now):\n%s", diff)
	}
}

// CONTROL: the same python agent without the lock, in the same harness,
// must lose updates — so the test above shows that python's flock really
// excludes Go's, not that the interleaving happened to be harmless.
func TestCrossprocPythonControlNoLock(t *testing.T) {
	cpNeedPython(t)
	const attempts = 3
	for a := range attempts {
		path := cpSeed(t)
		out := cpRunCounter(t, path, cpCounterRun{procs: 4, goroutines: 8, iters: 20, writer: "mutate", python: 2, pyIters: 60, pyMode: "nolock"})
		if out.lost() > 0 {
			t.Logf("attempt %d: python without the lock lost %d of %d updates", a+1, out.lost(), out.want)
			return
		}
	}
	t.Fatalf("python without the lock lost no update in %d attempts: the harness cannot tell locked from unlocked", attempts)
}

// A python process SIGKILLed while it holds the flock blocks no Go caller:
// the kernel drops the lock with the process.
func TestCrossprocPythonKilledHoldingLock(t *testing.T) {
	cpNeedPython(t)
	path := cpSeed(t)
	cmd := exec.Command("python3", filepath.Join("testdata", "interop_counter.py"), path, "0", "hold")
	c := cpStart(t, "python holder", cmd, false)
	c.expect(t, "inside")
	if cpTryFlock(t, path+status.LockSuffix) {
		t.Fatal("the lock was free while python held it: python and Go do not take the same lock")
	}
	waiter := make(chan error, 1)
	go func() { waiter <- cpIncrementWithin(path) }()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.wait()
	if err := <-waiter; err != nil {
		t.Fatalf("Mutate waiting for the killed python holder: %v", err)
	}
	s, err := status.Load(context.Background(), path)
	if err != nil || s.Runs != 1 {
		t.Fatalf("after the kill: runs %d, err %v; want 1, nil", s.Runs, err)
	}
}
