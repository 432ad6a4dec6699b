//go:build unix

package main

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/agentstate/core/status"
)

// holdLock takes the document's sidecar flock the way another process
// following the protocol would, and returns its release.
func holdLock(t *testing.T, path string) (release func()) {
	t.Helper()
	f, err := os.OpenFile(path+status.LockSuffix, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatal(err)
	}
	return func() { f.Close() }
}

func TestSetLockTimeout(t *testing.T) {
	path := tempFile(t, "status.json")
	corestate(t, "set", path, "runs=1").want(t, exitOK)
	before := readFile(t, path)

	release := holdLock(t, path)
	r := corestate(t, "set", "--timeout", "50ms", path, "runs=2").want(t, exitTimeout)
	if !strings.Contains(r.stderr, "--timeout") {
		t.Errorf("timeout error does not mention --timeout: %s", r.stderr)
	}
	if got := readFile(t, path); got != before {
		t.Errorf("file changed although the lock was never acquired:\n%s", got)
	}
	// Readers need no lock.
	if got := corestate(t, "get", path, "runs").want(t, exitOK).stdout; got != "1\n" {
		t.Errorf("get while locked = %q", got)
	}

	// CONTROL: with the lock released the same command succeeds, so the
	// failure above was the held lock.
	release()
	corestate(t, "set", "--timeout", "50ms", path, "runs=2").want(t, exitOK)
	if got := corestate(t, "get", path, "runs").want(t, exitOK).stdout; got != "2\n" {
		t.Errorf("runs = %q after the lock was released", got)
	}
}
