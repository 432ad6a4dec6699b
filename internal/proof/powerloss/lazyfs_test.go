//go:build linux

package powerloss_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// stuck bounds every wait on LazyFS or the writer: reached only when
// something hangs, never as a pass/fail criterion.
const stuck = 2 * time.Minute

// lazyFS runs one LazyFS mount of root at mnt, and remounts it.
type lazyFS struct {
	bin, dir, root, mnt, cfg, faults string
	done                             *os.File      // our end of the "completed" FIFO, kept open O_RDWR
	doneR                            *bufio.Reader // reads done
	log                              *os.File      // LazyFS's output
	cmd                              *exec.Cmd     // nil when not mounted
	exited                           chan struct{} // closed when cmd has been reaped
}

// newLazyFS prepares dir (root, mount point, config, FIFOs) and mounts.
// Cleanup unmounts and reaps LazyFS whatever happens to the test.
func newLazyFS(t *testing.T, bin, dir string) *lazyFS {
	l := &lazyFS{bin: bin, dir: dir, root: filepath.Join(dir, "root"), mnt: filepath.Join(dir, "mnt"),
		cfg: filepath.Join(dir, "lazyfs.toml"), faults: filepath.Join(dir, "faults.fifo")}
	for _, d := range []string{l.root, l.mnt} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	donePath := filepath.Join(dir, "done.fifo")
	cfg := fmt.Sprintf(`[faults]
fifo_path=%q
fifo_path_completed=%q
[cache]
apply_eviction=false
[cache.simple]
custom_size="2mb"
blocks_per_page=1
[filesystem]
log_all_operations=false
logfile=""
`, l.faults, donePath)
	if err := os.WriteFile(l.cfg, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(donePath, 0o600); err != nil && !errors.Is(err, os.ErrExist) {
		t.Fatal(err)
	}
	// LazyFS opens the "completed" FIFO for writing and blocks until it
	// has a reader: keep one open, read-write so that it never sees EOF.
	var err error
	if l.done, err = os.OpenFile(donePath, os.O_RDWR, 0); err != nil {
		t.Fatal(err)
	}
	l.doneR = bufio.NewReader(l.done)
	if l.log, err = os.Create(filepath.Join(dir, "lazyfs.log")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		l.teardown(t)
		l.done.Close()
		l.log.Close()
	})
	l.mount(t)
	return l
}

// mount starts LazyFS and waits until the mount is in the mount table.
func (l *lazyFS) mount(t *testing.T) {
	t.Helper()
	if ents, err := os.ReadDir(l.mnt); err != nil || len(ents) != 0 {
		t.Fatalf("bare mount point %s before mounting: %d entries, %v", l.mnt, len(ents), err)
	}
	mi, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer mi.Close()
	cmd := exec.Command(l.bin, l.mnt, "--config-path", l.cfg,
		"-o", "allow_other", "-o", "modules=subdir", "-o", "subdir="+l.root, "-f")
	cmd.Stdout, cmd.Stderr = l.log, l.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // dies with the test
	if err := cmd.Start(); err != nil {
		t.Fatalf("start lazyfs: %v", err)
	}
	l.cmd, l.exited = cmd, make(chan struct{})
	go func(exited chan struct{}) { _ = cmd.Wait(); close(exited) }(l.exited)

	deadline := time.Now().Add(stuck)
	for {
		mounted, err := isMounted(mi, l.mnt)
		if err != nil {
			t.Fatal(err)
		}
		if mounted {
			return
		}
		select {
		case <-l.exited:
			l.cmd = nil
			t.Fatalf("lazyfs exited before mounting: %s", l.logTail())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("lazyfs did not mount %s within %v: %s", l.mnt, stuck, l.logTail())
		}
		// The mount table signals POLLPRI when it changes; the timeout
		// only bounds how late an early exit of LazyFS is noticed.
		fds := []unix.PollFd{{Fd: int32(mi.Fd()), Events: unix.POLLPRI}}
		if _, err := unix.Poll(fds, 100); err != nil && !errors.Is(err, unix.EINTR) {
			t.Fatal(err)
		}
	}
}

// isMounted rereads the mount table and reports whether mnt is in it.
func isMounted(mi *os.File, mnt string) (bool, error) {
	if _, err := mi.Seek(0, 0); err != nil {
		return false, err
	}
	sc := bufio.NewScanner(mi)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) > 4 && f[4] == mnt {
			return true, nil
		}
	}
	return false, sc.Err()
}

// clearCache drops every byte LazyFS holds that was not fsynced: the power
// cut. The writer must be dead and reaped already.
func (l *lazyFS) clearCache(t *testing.T) {
	t.Helper()
	// LazyFS's fault worker opens the FIFO for reading some time after the
	// mount appears (under load a non-blocking open for writing found no
	// reader yet: ENXIO). Opened read-write, the FIFO needs no reader: the
	// command waits in the pipe until LazyFS reads it, and the deadline on
	// "finished" below bounds a LazyFS that never does.
	f, err := os.OpenFile(l.faults, os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("open the faults FIFO: %v: %s", err, l.logTail())
	}
	defer f.Close()
	if _, err := f.WriteString("lazyfs::clear-cache\n"); err != nil {
		t.Fatal(err)
	}
	if err := l.done.SetReadDeadline(time.Now().Add(stuck)); err != nil {
		t.Fatal(err)
	}
	line, err := l.doneR.ReadString('\n')
	if err != nil || line != "finished::clear-cache\n" {
		t.Fatalf("waiting for finished::clear-cache: %q, %v: %s", line, err, l.logTail())
	}
}

// unmount unmounts, reaps LazyFS (which aborts on unmount, harmlessly) and
// checks that nothing was written to the bare mount point.
func (l *lazyFS) unmount(t *testing.T) {
	t.Helper()
	if err := syscall.Unmount(l.mnt, 0); err != nil {
		t.Fatalf("unmount %s: %v", l.mnt, err)
	}
	select {
	case <-l.exited:
	case <-time.After(stuck):
		t.Fatalf("lazyfs still running %v after unmount", stuck)
	}
	l.cmd = nil
	if ents, err := os.ReadDir(l.mnt); err != nil || len(ents) != 0 {
		t.Fatalf("bare mount point %s after unmount: %d entries (a writer outlived the mount?), %v", l.mnt, len(ents), err)
	}
}

// remount is the reboot after the power cut.
func (l *lazyFS) remount(t *testing.T) {
	t.Helper()
	l.unmount(t)
	l.mount(t)
}

// teardown leaves no mount and no LazyFS process behind, on any path.
func (l *lazyFS) teardown(t *testing.T) {
	if l.cmd == nil {
		return
	}
	if err := syscall.Unmount(l.mnt, 0); err != nil {
		_ = syscall.Unmount(l.mnt, syscall.MNT_DETACH)
	}
	select {
	case <-l.exited:
	case <-time.After(stuck):
		_ = l.cmd.Process.Kill()
		<-l.exited
		_ = syscall.Unmount(l.mnt, syscall.MNT_DETACH)
		t.Errorf("lazyfs did not exit after unmount; killed")
	}
	l.cmd = nil
}

// logTail returns the end of LazyFS's output, for failure messages.
func (l *lazyFS) logTail() string {
	data, _ := os.ReadFile(l.log.Name())
	if len(data) > 2000 {
		data = data[len(data)-2000:]
	}
	return string(bytes.TrimSpace(data))
}
