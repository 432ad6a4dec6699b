//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package status_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/agentstate/core/status"
)

// cpOldLockIncrement is the locker as it was before the identity re-check:
// open (creating) PATH.lock, flock it, read-modify-write, close. Nothing
// checks that the locked file is still the one named PATH.lock.
func cpOldLockIncrement(path string) error {
	fd, err := syscall.Open(path+status.LockSuffix, syscall.O_RDWR|syscall.O_CREAT|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	for {
		err = syscall.Flock(fd, syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		return err
	}
	return cpBareIncrement(path)
}

// cpRunWithDeleter runs Go counter children with writer next to one python
// locker that deletes PATH.lock on release (variant: see
// testdata/lock_deleter.py) and increments runs too. It returns the number
// of acknowledged increments and the final count.
func cpRunWithDeleter(t *testing.T, path, variant, writer string, procs, goroutines, iters int) (acked, final int) {
	t.Helper()
	var children []*cpChild
	for i := range procs {
		children = append(children, cpStartGo(t, fmt.Sprintf("go child %d (%s)", i, writer), "counter",
			cpArgs{Path: path, Writer: writer, Goroutines: goroutines, Iterations: iters}))
	}
	deleter := cpStart(t, "python deleter ("+variant+")",
		exec.Command("python3", filepath.Join("testdata", "lock_deleter.py"), path, variant), false)
	cpRelease(t, append(children, deleter))
	for _, c := range children {
		var res cpCounterResult
		c.expectJSON(t, "result", &res)
		c.mustExit(t)
		if res.Acked != goroutines*iters {
			t.Errorf("%s: %d increments acknowledged, want %d", c.name, res.Acked, goroutines*iters)
		}
		acked += res.Acked
	}
	deleter.stdin.Close() // ends its loop
	var res cpCounterResult
	deleter.expectJSON(t, "result", &res)
	deleter.mustExit(t)
	acked += res.Acked
	t.Logf("python deleter made %d increments", res.Acked)
	s, err := status.Load(context.Background(), path)
	if err != nil {
		t.Fatalf("final read: %v", err)
	}
	return acked, s.Runs
}

// Python filelock 3.20.4-3.29.4 unlinks PATH.lock before it unlocks. A Go
// caller already waiting on the old file then gets its flock while a
// newcomer locks a new file of the same name: two holders. The re-check of
// the locked file's identity after flock makes the waiter start over, so
// nothing is lost, neither between the tools nor among Go's own writers.
func TestCrossprocDeleterUnlinkThenUnlock(t *testing.T) {
	t.Parallel()
	cpNeedPython(t)
	path := cpSeed(t)
	acked, final := cpRunWithDeleter(t, path, "unlink-then-unlock", "mutate", 4, 4, 100)
	t.Logf("Go and a deleting locker: final %d, acknowledged %d", final, acked)
	if final != acked {
		t.Errorf("final count %d, acknowledged %d: %d updates lost", final, acked, acked-final)
	}
}

// CONTROL: the locker without the re-check, in the same harness with the
// same deleter, loses updates.
func TestCrossprocDeleterControlNoRecheck(t *testing.T) {
	cpNeedPython(t)
	const attempts = 3
	for a := range attempts {
		path := cpSeed(t)
		acked, final := cpRunWithDeleter(t, path, "unlink-then-unlock", "oldlock", 4, 4, 50)
		if final < acked {
			t.Logf("attempt %d: the locker without the re-check lost %d of %d updates", a+1, acked-final, acked)
			return
		}
	}
	t.Fatalf("the locker without the re-check lost nothing in %d attempts: the harness cannot see two holders", attempts)
}

// A locker that unlocks before it unlinks (portalocker's TemporaryFileLock)
// cannot be made safe from the other side: between its unlock and its
// unlink, a Go caller locks the old file, passes the re-check, and the
// unlink then lets a newcomer lock a new file, so updates may be lost
// (docs/PROTOCOL.md, Third-party lockers). What still holds, and is checked here:
// the document stays whole and decodable, and no update is applied twice.
// The loss itself is logged, not asserted: it is not a guarantee either way.
func TestCrossprocUnlockThenUnlinkLockerKeepsDocumentWhole(t *testing.T) {
	t.Parallel()
	cpNeedPython(t)
	path := cpSeed(t)
	acked, final := cpRunWithDeleter(t, path, "unlock-then-unlink", "mutate", 4, 4, 50)
	if final > acked {
		t.Fatalf("final count %d exceeds the %d acknowledged increments: an update was applied twice", final, acked)
	}
	t.Logf("with an unlock-then-unlink locker, Mutate lost %d of %d", acked-final, acked)
}
