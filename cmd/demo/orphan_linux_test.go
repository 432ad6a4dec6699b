//go:build linux

package main

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestDemoWorkersDieWithParent SIGKILLs a demo (this test binary standing in
// for it) while its workers run. The parent can clean nothing up, so
// the workers must notice by themselves (their stdin closes) and exit. A
// pidfd becomes readable when its process exits, which lets the test wait
// for processes that are not its children without polling.
func TestDemoWorkersDieWithParent(t *testing.T) {
	cmd := exec.Command(os.Args[0], "--procs", "2", "--goroutines", "2", "--updates", "1000000", "--timeout", "5m")
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for the pids, then for a progress line: the workers have been
	// released and are writing (before that they would exit on the missing
	// "go" line, a different path).
	var announced string
	running := false
	sc := bufio.NewScanner(stderr)
	for !running && sc.Scan() {
		switch line := sc.Text(); {
		case strings.Contains(line, "(pids "):
			announced = line
		case announced != "" && strings.Contains(line, "updates attempted"):
			running = true
		}
	}
	if !running {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the demo did not report running workers")
	}
	var pidfds []unix.PollFd
	for _, pid := range workerPIDs(t, announced) {
		fd, err := unix.PidfdOpen(pid, 0)
		if err == unix.ESRCH {
			continue // already gone
		}
		if err != nil {
			t.Fatalf("pidfd_open %d: %v", pid, err)
		}
		t.Cleanup(func() {
			// If the test failed, do not leave the worker behind.
			unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
			unix.Close(fd)
		})
		pidfds = append(pidfds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
	}

	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	// Bounded wait: a worker that ignores its closed stdin would hang here.
	for remaining := len(pidfds); remaining > 0; {
		n, err := unix.Poll(pidfds, 30_000)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Fatalf("%d worker(s) still running 30s after their parent was killed (now killed by the test)", remaining)
		}
		for i := range pidfds {
			if pidfds[i].Revents != 0 && pidfds[i].Fd >= 0 {
				pidfds[i].Fd = -1 // poll ignores negative fds
				remaining--
			}
		}
	}
}
