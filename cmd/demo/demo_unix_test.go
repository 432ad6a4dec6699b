//go:build unix

package main

import (
	"bytes"
	"errors"
	"os"
	"syscall"
	"testing"
)

// assertGone fails if any of pids is still a process (running or zombie).
// run waits for every worker before it returns, so they must be reaped.
func assertGone(t *testing.T, pids []int) {
	t.Helper()
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("worker %d still exists after the demo returned (kill 0: %v)", pid, err)
		}
	}
}

func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("left behind in the temp dir: %s", e.Name())
	}
}

// TestDemoTimeoutKillsWorkers gives the demo far more work than its
// --timeout allows: it must exit with the timeout code, leave no worker
// process and remove its temp dir.
func TestDemoTimeoutKillsWorkers(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var out, errOut bytes.Buffer
	code := run([]string{"--procs", "2", "--goroutines", "2", "--updates", "1000000", "--timeout", "2s"}, &out, &errOut)
	if code != exitTimeout {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitTimeout, out.String(), errOut.String())
	}
	assertGone(t, workerPIDs(t, errOut.String()))
	assertEmpty(t, tmp)
}

// TestDemoInterruptKillsWorkers sends SIGINT to this process while the
// workers run (the demo's signal handler takes it): exit 130, no worker
// left, temp dir removed.
func TestDemoInterruptKillsWorkers(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	errOut := &notifyWriter{want: "(pids ", seen: make(chan struct{})}
	var out bytes.Buffer
	done := make(chan int)
	go func() {
		done <- run([]string{"--procs", "2", "--goroutines", "2", "--updates", "1000000", "--timeout", "1m"}, &out, errOut)
	}()
	select {
	case <-errOut.seen:
		if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
	case code := <-done:
		t.Fatalf("demo ended (exit %d) before its workers started:\n%s", code, errOut.String())
	}
	if code := <-done; code != exitInterrupted {
		t.Fatalf("exit %d, want %d\nstderr:\n%s", code, exitInterrupted, errOut.String())
	}
	assertGone(t, workerPIDs(t, errOut.String()))
	assertEmpty(t, tmp)
}
