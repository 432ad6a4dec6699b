package flock

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestStoppedPythonWaiter: a waiter of the repository's Python package
// sleeps on the bell ahead of ours (it would wake only for a ring) and is
// stopped (SIGSTOP); our holder releases; our waiter gets the lock, well
// before its deadline: the stopped process left the bell's queue, so the
// ring reaches ours. The CONTROL is the one thing that keeps a waiter out:
// the stopped Python process holds the flock itself, and our waiter's
// deadline ends first.
func TestStoppedPythonWaiter(t *testing.T) {
	for _, c := range []string{"waiter_stopped", "CONTROL_holder_stopped"} {
		t.Run(c, func(t *testing.T) {
			name := lockName(t)
			doc := strings.TrimSuffix(name, ".lock")
			var py *child
			var holder *File
			deadline := okDeadline
			if c == "waiter_stopped" {
				var err error
				if holder, err = lockWith(t.Context(), name, false); err != nil {
					t.Fatal(err)
				}
				py = start(t, execPython(t, pythonWaiterScript, pythonSrc(t), doc, "bell", "rungs"))
				py.expect(t, "sleeping")
				waitFor(t, "Python asleep on the bell", func() bool { return bellSleepers(py.cmd.Process.Pid) > 0 })
			} else {
				py = start(t, execPython(t, pythonHolderScript, pythonSrc(t), doc, "ring"))
				py.expect(t, "locked")
				deadline = controlDeadline
			}
			if err := py.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			asleep := asleepHook(t)
			ctx, cancel := context.WithTimeout(t.Context(), deadline)
			defer cancel()
			got := lockAsync(t, ctx, name, false)
			<-asleep
			waitFor(t, "our waiter asleep on the bell", func() bool { return bellSleepers(os.Getpid()) > 0 })
			if holder != nil {
				holder.Close()
			}
			err := <-got
			switch {
			case c == "waiter_stopped" && err != nil:
				t.Fatalf("behind a stopped Python waiter: %v", err)
			case c != "waiter_stopped" && !errors.Is(err, context.DeadlineExceeded):
				t.Fatalf("CONTROL: got %v while a stopped Python process held the flock: the harness cannot see blocking", err)
			case c != "waiter_stopped":
				t.Logf("CONTROL: %v", err)
			}
		})
	}
}

// TestSilentRelease: a holder that never rings (flock(1), another
// language's client, a program of an earlier version) releases while our
// waiter sleeps on the bell; the waiter gets the lock at its own timeout,
// before its deadline. The CONTROL switches the waiter's timeouts off: it
// sleeps on a free lock until its deadline ends.
func TestSilentRelease(t *testing.T) {
	for _, timeouts := range []bool{true, false} {
		t.Run(map[bool]string{true: "timeouts", false: "CONTROL_no_timeouts"}[timeouts], func(t *testing.T) {
			name := lockName(t)
			release := holdLock(t, name) // a plain flock: its release rings nothing
			setSeam(t, &seamsFor(t).noTimeouts, !timeouts)
			asleep := asleepHook(t)
			ctx := deadlineCtx(t, !timeouts)
			got := lockAsync(t, ctx, name, false)
			<-asleep
			waitFor(t, "the waiter asleep on the bell", func() bool { return bellSleepers(os.Getpid()) > 0 })
			release()
			err := <-got
			switch {
			case timeouts && err != nil:
				t.Fatalf("after a release that did not ring: %v", err)
			case !timeouts && !errors.Is(err, context.DeadlineExceeded):
				t.Fatalf("CONTROL: got %v without timeouts after a silent release: the harness cannot see a missed ring", err)
			case !timeouts:
				t.Logf("CONTROL: %v, the lock free all the while", err)
			}
		})
	}
}
