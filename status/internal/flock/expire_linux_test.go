//go:build crashhooks

package flock

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Another user who may only read a lock file takes a byte-range read lock
// on it for a moment (Python's fcntl.lockf), while this process takes and
// releases the lock: the release keeps its descriptor (the file has
// byte-range locks of others). The user leaves, this process goes idle.
// Its kept descriptor holds the file system busy, but only for keepFor:
// then umount of the tmpfs the lock file is on succeeds. The CONTROL keeps
// descriptors without a time bound, as before: after the same wait, and
// after twice it, the file system is still busy.
func TestIdleProcessPinsNoMount(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs and acting as a second user need root; CI runs as root")
	}
	// The interpreter itself: a launcher in root's home (pyenv's shim) is
	// not for another user to run.
	py, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Skipf("python3: %v: the reader is a Python process", err)
	}
	for _, forever := range []bool{false, true} {
		t.Run(map[bool]string{false: "bounded", true: "CONTROL_kept_forever"}[forever], func(t *testing.T) {
			dropKept(t)
			setSeam(t, &seamsFor(t).KeepForever, forever)
			expired := make(chan int, 16)
			s := seamsFor(t)
			s.expired = func(n int) { expired <- n }
			t.Cleanup(func() { s.expired = nil })

			dir := t.TempDir()
			os.Chmod(filepath.Dir(dir), 0o755)
			os.Chmod(dir, 0o755)
			mnt := filepath.Join(dir, "mnt")
			os.Mkdir(mnt, 0o755)
			if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m,mode=1777"); err != nil {
				t.Skipf("mount tmpfs: %v", err)
			}
			mounted := true
			t.Cleanup(func() {
				if mounted {
					closeKept()
					syscall.Unmount(mnt, syscall.MNT_DETACH)
				}
			})
			name := filepath.Join(mnt, "status.json.lock")
			if err := os.WriteFile(name, nil, 0o644); err != nil {
				t.Fatal(err)
			}

			reader := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", strings.TrimSpace(string(py)), "-c",
				`import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.lockf(fd, fcntl.LOCK_SH)
print("locked", flush=True)
sys.stdin.readline()`, name)
			var stderr strings.Builder
			reader.Stderr = &stderr
			in, _ := reader.StdinPipe()
			out, _ := reader.StdoutPipe()
			if err := reader.Start(); err != nil {
				t.Skipf("setpriv: %v", err)
			}
			if line, _ := bufio.NewReader(out).ReadString('\n'); line != "locked\n" {
				reader.Process.Kill()
				reader.Wait()
				t.Fatalf("the reader said %q: %s", line, &stderr)
			}
			f, err := Open(name, filepath.Join(mnt, "status.json"), 0o644)
			if err == nil {
				err = f.Lock(context.Background())
			}
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
			in.Close() // the reader leaves
			reader.Wait()
			if keptFor(name) != 1 {
				t.Fatal("the release kept no descriptor: the harness cannot see a pinned mount")
			}
			if err := syscall.Unmount(mnt, 0); !errors.Is(err, syscall.EBUSY) {
				t.Fatalf("umount right after the release: %v, want busy (the descriptor is kept)", err)
			}
			wait := okDeadline // far past keepFor: only a timer that never fires gets there
			if forever {
				wait = 2 * keepFor
			}
			select {
			case n := <-expired:
				t.Logf("after keepFor (%v), the timer closed %d kept descriptors", keepFor, n)
			case <-time.After(wait):
				if !forever {
					t.Fatalf("no kept descriptor was closed within %v", wait)
				}
				t.Logf("CONTROL: %v later nothing was closed", wait)
			}
			err = syscall.Unmount(mnt, 0)
			switch {
			case !forever && err != nil:
				t.Fatalf("umount of the idle process's file system: %v", err)
			case !forever:
				mounted = false
			case !errors.Is(err, syscall.EBUSY):
				t.Fatalf("CONTROL: umount %v: the harness cannot see a pinned mount", err)
			default:
				t.Logf("CONTROL: umount: %v", err)
			}
		})
	}
}
