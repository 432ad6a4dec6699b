package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/agentstate/core/status"
)

// startCorestate starts corestate (this test binary, see TestMain) as a
// process with stdout connected to the returned pipe, which the caller may
// leave unread.
func startCorestate(t *testing.T, args ...string) (*exec.Cmd, *os.File, *bytes.Buffer) {
	t.Helper()
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asCorestateEnv+"=1")
	cmd.Stdout = wr
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	wr.Close()
	t.Cleanup(func() {
		rd.Close()
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, rd, &stderr
}

// pollUntil checks cond until it holds (an observable state of another
// process; the test's deadline bounds the wait).
func pollUntil(cond func() bool) {
	for !cond() {
		time.Sleep(time.Millisecond)
	}
}

// exitWithin waits for cmd and returns its exit code, or fails the test if
// it has not exited after a generous while: the point is that it ends, not
// how fast.
func exitWithin(t *testing.T, cmd *exec.Cmd, stderr *bytes.Buffer) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode()
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("corestate did not end after SIGTERM; stderr:\n%s", stderr)
		return 0
	}
}

// A corestate blocked writing to an output pipe that nobody reads (where no
// context reaches) ends after SIGTERM, as timeout(1) expects, with the
// documented exit code. It used to catch the signal and block forever.
func TestSignalEndsBlockedOutput(t *testing.T) {
	path := tempFile(t, "status.json")
	writeFile(t, path, `{"status":"running","x":"`+strings.Repeat("x", 256<<10)+`"}`)
	cmd, out, stderr := startCorestate(t, "get", path)
	// The pipe is full (64 KiB on Linux) once corestate is blocked in write.
	pollUntil(func() bool {
		var n int32
		_, _, e := syscall.Syscall(syscall.SYS_IOCTL, out.Fd(), syscall.TIOCINQ, uintptr(unsafe.Pointer(&n)))
		return e == 0 && n >= 64<<10
	})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := exitWithin(t, cmd, stderr); code != exitInterrupted {
		t.Errorf("exit code %d after SIGTERM, want %d; stderr:\n%s", code, exitInterrupted, stderr)
	}
}

// A corestate waiting for the lock (--timeout 0: no limit) stops waiting
// at SIGTERM, writes nothing and exits 130.
func TestSignalEndsLockWait(t *testing.T) {
	path := tempFile(t, "status.json")
	const content = `{"status":"running"}`
	writeFile(t, path, content)
	release := holdLock(t, path)
	defer release()
	cmd, _, stderr := startCorestate(t, "set", "--timeout", "0", path, "note=late")
	// Waiting means: it has the lock file open.
	pollUntil(func() bool {
		dir := filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "fd")
		fds, _ := os.ReadDir(dir)
		for _, fd := range fds {
			if target, _ := os.Readlink(filepath.Join(dir, fd.Name())); target == path+status.LockSuffix {
				return true
			}
		}
		return false
	})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := exitWithin(t, cmd, stderr); code != exitInterrupted {
		t.Errorf("exit code %d after SIGTERM, want %d; stderr:\n%s", code, exitInterrupted, stderr)
	}
	if got := readFile(t, path); got != content {
		t.Errorf("the interrupted set wrote %q", got)
	}
}
