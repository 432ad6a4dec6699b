package flock

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// pythonHolderScript takes the lock of the document argv[2] with the
// repository's Python package (its source tree, argv[1]), reports "locked",
// releases it when a line arrives on stdin, reporting "released woke=N"
// (how many of the package's rings woke a sleeper), and waits for stdin to
// close. argv[3] "ring" or "no-ring" (a release opens no bell, so it rings
// none); "clock" and "no-ring-clock" report "released
// at=<CLOCK_MONOTONIC ns>", taken just before the release, instead.
const pythonHolderScript = `
import sys, time
sys.path.insert(0, sys.argv[1])
from agentstate import _bell, _lock
key, mode = sys.argv[2], sys.argv[3]
if mode.startswith("no-ring"):
    open_bell = _bell.open_bell
    _bell.open_bell = lambda fd, name, grow=False: open_bell(fd, name, grow) if grow else None
woke = []
ring = _bell.Bell.ring
def counted(b):
    r = ring(b)
    woke.append(r)
    return r
_bell.Bell.ring = counted
while True:
    h = _lock.lock_one(key, 0o644, _lock.Deadline(None), "hold", key)
    print("locked", flush=True)
    if not sys.stdin.readline():
        break
    at = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    h.close()
    if mode.endswith("clock"):
        print("released at=%d" % at, flush=True)
    else:
        print("released woke=%d" % sum(woke), flush=True)
    if not sys.stdin.readline():
        break
`

// execPython runs a script with the system's Python 3.
func execPython(t testing.TB, script string, args ...string) *exec.Cmd {
	t.Helper()
	const system = "/usr/bin/python3"
	if _, err := os.Stat(system); err != nil {
		t.Fatal("no system python3 (make deps installs it):", err)
	}
	return exec.Command(system, append([]string{"-c", script}, args...)...)
}

// pythonSrc is the repository's Python package.
func pythonSrc(t testing.TB) string {
	t.Helper()
	src, err := filepath.Abs("../../../python/src")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(src, "agentstate", "_bell.py")); err != nil {
		t.Fatal("the repository's Python package:", err)
	}
	return src
}

// TestPythonReleaseRings: a Go waiter asleep on the bell (with no timeout
// of its own, so that only a ring can wake it) gets a lock that a Python
// process releases, woken by the Python process's ring. The CONTROL, the
// same release with the ring turned off, leaves the waiter asleep on a
// free lock (a Go waiter would have only its timeout), until the test
// cancels its wait.
func TestPythonReleaseRings(t *testing.T) {
	for _, c := range []string{"ring", "CONTROL_no_ring"} {
		t.Run(c, func(t *testing.T) {
			name := lockName(t)
			mode := map[string]string{"ring": "ring", "CONTROL_no_ring": "no-ring"}[c]
			holder := start(t, execPython(t, pythonHolderScript, pythonSrc(t), strings.TrimSuffix(name, ".lock"), mode))
			holder.expect(t, "locked")

			var rungs atomic.Int64
			hook(t, &seamsFor(t).rung, func() { rungs.Add(1) })
			setSeam(t, &seamsFor(t).noTimeouts, true)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			got := lockAsync(t, ctx, name, false)
			waitFor(t, "asleep on the bell", func() bool { return bellSleepers(os.Getpid()) > 0 })

			if _, err := holder.stdin.Write([]byte("release\n")); err != nil {
				t.Fatal(err)
			}
			woke := holder.expect(t, "released")
			if c == "ring" {
				if woke != "released woke=1" {
					cancel() // the waiter sleeps until a ring or its ctx
					<-got
					t.Fatalf("Python said %q: its release woke no sleeper on the bell", woke)
				}
				if err := <-got; err != nil {
					t.Fatal("waiter:", err)
				}
				if rungs.Load() != 1 {
					t.Fatalf("the waiter was rung %d times, want 1", rungs.Load())
				}
				return
			}
			// The CONTROL: nothing rang, so the waiter is still asleep on
			// the bell, with the lock free.
			if woke != "released woke=0" {
				t.Fatalf("Python said %q with the ring turned off", woke)
			}
			if n := bellSleepers(os.Getpid()); n == 0 {
				t.Fatal("the waiter left the bell with no ring and no timeout")
			}
			cancel()
			if err := <-got; !errors.Is(err, context.Canceled) || rungs.Load() != 0 {
				t.Fatalf("CONTROL: waiter ended with %v after %d rings, want context.Canceled and none", err, rungs.Load())
			}
		})
	}
}

// TestPythonWaiterSleepsOnBell: a Python waiter sleeps on the bell, in the
// kernel's queue that Go's waiters share, and a Go release wakes it: Go's
// ring woke a sleeper, and the Python process got the lock after a sleep a
// ring ended. The CONTROL, a Python waiter that polls (the package's test
// seam), is reached by no ring.
func TestPythonWaiterSleepsOnBell(t *testing.T) {
	for _, c := range []string{"bell", "CONTROL_poll"} {
		t.Run(c, func(t *testing.T) {
			name := lockName(t)
			f, err := lockWith(t.Context(), name, false)
			if err != nil {
				t.Fatal(err)
			}
			mode := map[string]string{"bell": "bell", "CONTROL_poll": "poll"}[c]
			w := start(t, execPython(t, pythonWaiterScript, pythonSrc(t), strings.TrimSuffix(name, ".lock"), mode, "rungs"))
			w.expect(t, "sleeping")
			if c == "bell" {
				waitFor(t, "Python asleep on the bell", func() bool { return bellSleepers(w.cmd.Process.Pid) > 0 })
			}
			f.Close()
			woke, _ := courtesy(name, time.Now())
			got := w.expect(t, "got")
			if c == "bell" && (!woke || got == "got rungs=0") {
				t.Fatalf("Go's release woke a sleeper: %v; Python said %q: want a wake and rungs > 0", woke, got)
			}
			if c == "CONTROL_poll" && (woke || got != "got rungs=0") {
				t.Fatalf("CONTROL: Go's release woke a sleeper: %v; Python said %q: want neither", woke, got)
			}
		})
	}
}
