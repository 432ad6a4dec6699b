package flock

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

var _ = func() bool {
	helperModes["wait"] = helperWait
	helperModes["ring"] = helperRing
	return true
}()

// helperWait waits for the lock (as Lock does, or as the replaced queue
// did), reporting "sleeping" before its first sleep, then "got tries=N
// rungs=N" or "err ...". It holds the lock until its stdin closes.
func helperWait(a helperArgs) int {
	s := TestSeams()
	s.noKeep = a.Old // the replaced queue closed on every release
	f, err := Open(a.Name, a.Name+".doc", 0o644)
	if err != nil {
		fmt.Println("err", err)
		return 0
	}
	var tries, rungs atomic.Int64
	var once sync.Once
	s.try = func() { tries.Add(1) }
	s.rung = func() { rungs.Add(1) }
	s.sleep = func() { once.Do(func() { fmt.Println("sleeping") }) }
	ctx, cancel := context.WithTimeout(context.Background(), a.Timeout)
	defer cancel()
	if a.Old {
		err = oldLock(ctx, f)
	} else {
		err = f.Lock(ctx)
	}
	if err != nil {
		fmt.Println("err", err)
		return 0
	}
	fmt.Printf("got tries=%d rungs=%d\n", tries.Load(), rungs.Load())
	io.Copy(io.Discard, os.Stdin)
	f.Close()
	return 0
}

// helperRing maps the lock file read-only, as any reader may, and rings its
// bell for nothing, as fast as it can, until its stdin closes. It reports
// "rang N" every 10,000 rings.
func helperRing(a helperArgs) int {
	b, err := readerBell(a.Name)
	if err != nil {
		fmt.Println("err", err)
		return 0
	}
	var done atomic.Bool
	go func() {
		io.Copy(io.Discard, os.Stdin)
		done.Store(true)
	}()
	for n := 1; !done.Load(); n++ {
		b.futex(futexWakeBitset, maxWake, nil, futexBitsetAny)
		if n%10000 == 0 {
			fmt.Println("rang", n)
		}
	}
	return 0
}

// readerBell maps name's bell as any reader of the file may: read-only,
// through a descriptor of its own.
func readerBell(name string) (*bell, error) {
	fd, err := syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	mem, err := syscall.Mmap(fd, 0, bellSize, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	return &bell{mem: mem, fd: fd}, nil
}

// A child is a helper process (or a real tool) as a test sees it.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr bytes.Buffer
	once   sync.Once
}

// helperCmd is the command that runs this test binary as the helper a,
// after wrap (a command that runs another, such as unshare).
func helperCmd(t *testing.T, a helperArgs, wrap ...string) *exec.Cmd {
	t.Helper()
	seamsFor(t) // the helpers report through them
	env, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	args := append(wrap, os.Args[0], "-test.run=^$")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), helperEnv+"="+string(env))
	return cmd
}

// start starts cmd; the test ends it.
func start(t *testing.T, cmd *exec.Cmd) *child {
	t.Helper()
	c := &child{cmd: cmd, lines: make(chan string, 64)}
	cmd.Stderr = &c.stderr
	var err error
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	t.Cleanup(c.stop)
	return c
}

// expect returns the child's next line, which must start with prefix.
func (c *child) expect(t *testing.T, prefix string) string {
	t.Helper()
	select {
	case l, ok := <-c.lines:
		if !ok {
			c.stop()
			t.Fatalf("%s ended before %q: %v (stderr: %s)", c.cmd.Path, prefix, c.cmd.ProcessState, c.stderr.String())
		}
		if !strings.HasPrefix(l, prefix) {
			t.Fatalf("%s said %q, want %q...", c.cmd.Path, l, prefix)
		}
		return l
	case <-t.Context().Done():
		t.Fatalf("%s: no %q before the test's deadline", c.cmd.Path, prefix)
	}
	return ""
}

// stop ends the child (stopped or not) and reaps it.
func (c *child) stop() {
	c.once.Do(func() {
		c.cmd.Process.Signal(syscall.SIGCONT)
		c.stdin.Close()
		c.cmd.Process.Kill()
		c.cmd.Wait()
		for range c.lines {
		}
	})
}

// asNobody runs a command as a second user (uid and gid 65534, no
// supplementary groups), as CI's root can.
func asNobody(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a second user's process (CI runs as root)")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Fatal("setpriv (util-linux) is missing:", err)
	}
	return exec.Command("setpriv", append([]string{"--reuid=65534", "--regid=65534", "--clear-groups"}, args...)...)
}

// python is the system's Python 3, which a second user may run (a
// per-user installation in root's home may not be).
func python(t *testing.T) string {
	t.Helper()
	const system = "/usr/bin/python3"
	if _, err := os.Stat(system); err != nil {
		t.Fatal("no system python3 (make deps installs it):", err)
	}
	return system
}

// sharedDir is a directory that a second user may read and traverse; its
// files are created by this (root) process, mode 0644.
func sharedDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "flock-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// markHolder starts a second user's Python process that takes n OFD read
// locks ("marks", what the replaced queue's waiters held) on name, opened
// read-only, at offsets first, first+2, ...
func markHolder(t *testing.T, name string, n int, first int64) *child {
	t.Helper()
	c := start(t, asNobody(t, python(t), "-c", `
import fcntl, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
n, first = int(sys.argv[2]), int(sys.argv[3])
for i in range(n):
    fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack("@hhqqi4x", fcntl.F_RDLCK, 0, first + 2*i, 1, 0))
print("ready", flush=True)
sys.stdin.read()
`, name, strconv.Itoa(n), strconv.FormatInt(first, 10)))
	c.expect(t, "ready")
	return c
}

// flooder starts a second user's Python process that opens and closes name
// read-only n times, then reports "done".
func flooder(t *testing.T, name string, n int) *child {
	t.Helper()
	c := start(t, asNobody(t, python(t), "-c", `
import os, sys
name, n = sys.argv[1], int(sys.argv[2])
print("flooding", flush=True)
for i in range(n):
    os.close(os.open(name, os.O_RDONLY))
print("done", flush=True)
sys.stdin.read()
`, name, strconv.Itoa(n)))
	c.expect(t, "flooding")
	return c
}

// holdLock takes name's flock the way another program would and returns
// the function that releases it.
func holdLock(t *testing.T, name string) (release func()) {
	t.Helper()
	fd, err := syscall.Open(name, syscall.O_RDWR|syscall.O_CREAT|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(fd, syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() { once.Do(func() { syscall.Close(fd) }) }
	t.Cleanup(release)
	return release
}

// bellSleepers counts the threads of process pid asleep on a bell (in
// FUTEX_WAIT_BITSET, which the Go runtime does not use for itself).
func bellSleepers(pid int) int {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	n := 0
	for _, task := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/syscall", pid, task.Name()))
		f := strings.Fields(string(b))
		if len(f) > 2 && f[0] == strconv.Itoa(syscall.SYS_FUTEX) && f[2] == "0x9" {
			n++
		}
	}
	return n
}

// waitFor polls an observable condition until it holds; go test's
// -timeout bounds it (t.Context ends only when the test does), so a
// condition must not be one that can pass unseen.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		if t.Context().Err() != nil {
			t.Fatalf("never %s", what)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// lockName is a lock file in a fresh directory.
func lockName(t *testing.T) string {
	return filepath.Join(t.TempDir(), "status.json.lock")
}

// lockWith waits for name's lock in this process as Lock does (old false)
// or as the replaced queue did (old true).
func lockWith(ctx context.Context, name string, old bool) (*File, error) {
	f, err := Open(name, strings.TrimSuffix(name, ".lock"), 0o644)
	if err != nil {
		return nil, err
	}
	if old {
		err = oldLock(ctx, f)
	} else {
		err = f.Lock(ctx)
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

// hook sets one of the test seams for the rest of the test.
func hook(t *testing.T, p *func(), fn func()) {
	old := *p
	*p = fn
	t.Cleanup(func() { *p = old })
}

// replacedQueue makes the rest of the test release as the replaced queue
// did, if old: by closing the descriptor (its waiters woke on the close).
func replacedQueue(tb testing.TB, old bool) {
	if old {
		setSeam(tb, &seamsFor(tb).noKeep, true)
	}
}

// setSeam sets a boolean test seam for the rest of the test.
func setSeam(tb testing.TB, p *bool, v bool) {
	old := *p
	*p = v
	tb.Cleanup(func() { *p = old })
}

// lockAsync waits for name's lock in a goroutine, as Lock does (as the
// replaced queue did if old), releases it at once, and reports how the wait
// ended. ctx must end with the test (t.Context or a context derived from
// it): the test waits for the goroutine, so that a test that ends early (a
// skip, a failure) leaves no waiter reading the seams the next test sets.
func lockAsync(t *testing.T, ctx context.Context, name string, old bool) <-chan error {
	got := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		f, err := lockWith(ctx, name, old)
		if err == nil {
			f.Close()
		}
		got <- err
	}()
	t.Cleanup(func() { <-done })
	return got
}

// asleepHook returns a channel closed at the first sleep of a waiter of
// this process.
func asleepHook(t *testing.T) <-chan struct{} {
	asleep := make(chan struct{})
	var once sync.Once
	hook(t, &seamsFor(t).sleep, func() { once.Do(func() { close(asleep) }) })
	return asleep
}
