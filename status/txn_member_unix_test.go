//go:build linux

package status

// Helpers for the tests in which an unprivileged member of a shared
// workspace plants files next to a root service's documents. CI runs as
// root; these tests act as uid and gid 65534 (nobody) through
// SysProcAttr.Credential, which needs nothing installed.

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

const member = 65534 // uid and gid of the member (nobody, nogroup)

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("acting as a second user (uid 65534) needs root; CI runs as root")
	}
}

// asMember runs sh -c script as the member in dir; args are $1, $2...
func asMember(t *testing.T, dir, script string, args ...string) {
	t.Helper()
	cmd := exec.Command("sh", append([]string{"-c", script, "sh"}, args...)...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: member, Gid: member, Groups: []uint32{}}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("as uid %d: %s: %v\n%s", member, script, err, out)
	}
}

// workspace returns a new directory the member may write: sticky and
// world-writable like /tmp (1777, owned by root), or the documented group
// workspace (setgid, group-writable, group 65534).
func workspace(t *testing.T, sticky bool) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	mode := os.FileMode(0o777) | os.ModeSticky
	if !sticky {
		if err := os.Chown(ws, 0, member); err != nil {
			t.Fatal(err)
		}
		mode = 0o775 | os.ModeSetgid
	}
	if err := os.Chmod(ws, mode); err != nil {
		t.Fatal(err)
	}
	return ws
}

// privateDir returns a directory only root may enter.
func privateDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// writeOwned writes a root service's document, or the member's (uid).
func writeOwned(t *testing.T, path, data string, uid int, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, uid, member); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// journalName is a journal's path in dir.
func journalName(dir string) string {
	return filepath.Join(dir, journalPrefix+"0123456789abcdef"+journalSuffix)
}

// journalJSON is a journal's content listing docs.
func journalJSON(docs ...string) string {
	data, _ := json.Marshal(map[string][]string{"documents": docs})
	return string(data)
}

// markerOf is a marker naming j for the document at doc as it is now; in
// the earlier format (the journal's path alone) if legacy.
func markerOf(t *testing.T, j, doc string, legacy bool) string {
	if legacy {
		return j + "\n"
	}
	return j + "\n" + Before(t, doc) + "\n"
}

// watchOpens watches the files at names with inotify and returns a
// function that counts the opens of any of them since the last call.
func watchOpens(t *testing.T, names ...string) func() int {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	for _, name := range names {
		if _, err := syscall.InotifyAddWatch(fd, name, syscall.IN_OPEN); err != nil {
			t.Fatalf("watch %s: %v", name, err)
		}
	}
	return func() int {
		n := 0
		buf := make([]byte, 64<<10)
		for {
			k, err := syscall.Read(fd, buf)
			if errors.Is(err, syscall.EAGAIN) {
				return n
			}
			if err != nil {
				t.Fatal(err)
			}
			for off := 0; off+syscall.SizeofInotifyEvent <= k; {
				ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
				if ev.Mask&syscall.IN_OPEN != 0 {
					n++
				}
				off += syscall.SizeofInotifyEvent + int(ev.Len)
			}
		}
	}
}

// nullDevice makes a character device like /dev/null (1, 3) in dir, which
// only root may enter: a stand-in for /dev/kmsg or /dev/watchdog whose
// opens the test can count.
func nullDevice(t *testing.T, dir string) string {
	t.Helper()
	dev := filepath.Join(dir, "null")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Skipf("mknod: %v (a device node is needed to count its opens)", err)
	}
	return dev
}

// tryFlock reports whether an exclusive flock on name can be taken now.
func tryFlock(t *testing.T, name string) bool {
	t.Helper()
	fd, err := syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	err = syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

// hasReader reports whether a process has the named pipe open for reading,
// or is blocked opening it so; a blocked opener is released by this (its
// open returns, then reads end of file).
func hasReader(fifo string) bool {
	fd, err := syscall.Open(fifo, syscall.O_WRONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return false // ENXIO: no reader
	}
	syscall.Close(fd)
	return true
}

// hangs runs call and reports whether, after ctx ended, it had not
// returned and was blocked opening fifo for reading, and whether it held
// the lock of doc then. It then releases the call (the pipe's open) and
// waits for it; err is what the call returned.
func hangs(t *testing.T, ctx context.Context, doc, fifo string, call func() error) (hung, locked bool, err error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return false, false, err
	case <-ctx.Done():
	}
	for { // polled: the call is already late
		select {
		case err := <-done:
			return false, false, err
		default:
		}
		locked = !tryFlock(t, doc+LockSuffix)
		if hasReader(fifo) {
			return true, locked, <-done
		}
		time.Sleep(time.Millisecond)
	}
}

// killAtAs is killAt with the child running as uid (and gid member), from
// a copy of the test binary that uid may run.
func killAtAs(t *testing.T, dir, step, want string, uid int) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "status.test")
	os.Chmod(filepath.Dir(bin), 0o755)
	os.Chmod(filepath.Dir(filepath.Dir(bin)), 0o755)
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: member, Groups: []uint32{}}}
	killAtCmd(t, cmd, dir, step, want)
}

// setSeam sets one of journal.Seams' switches until t ends.
func setSeam(t *testing.T, seam *bool) {
	*seam = true
	t.Cleanup(func() { *seam = false })
}

// errNames reports whether err names every one of files.
func errNames(err error, files ...string) bool {
	if err == nil {
		return false
	}
	for _, f := range files {
		if !strings.Contains(err.Error(), f) {
			return false
		}
	}
	return true
}
