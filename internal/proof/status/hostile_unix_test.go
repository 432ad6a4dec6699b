//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package status_test

// Hostile files, paths and users: what a document's directory may contain
// when other programs or other users share it. Each case names the failure
// it guards against.

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status"
)

func incrRuns(s *status.Status) error { s.Runs++; return nil }

// A named pipe, a directory or a device at PATH is refused at once by every
// entry point, without blocking (a pipe with no writer used to block open
// forever while the lock was held) or reading without end (a device).
func TestNonRegularDocumentRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "dir.json")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	paths := []string{fifo, sub}
	if os.Geteuid() == 0 {
		// A device node like /dev/zero (major 1, minor 5 on Linux).
		dev := filepath.Join(dir, "zero.json")
		if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|5); err == nil {
			paths = append(paths, dev)
		}
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			called := false
			_, err := status.Mutate(context.Background(), path, func(s *status.Status) error { called = true; return nil })
			if !errors.Is(err, fs.ErrNotRegular) || called {
				t.Errorf("Mutate = %v (fn called %v), want fs.ErrNotRegular and no call", err, called)
			}
			if _, err := status.Load(context.Background(), path); !errors.Is(err, fs.ErrNotRegular) {
				t.Errorf("Load = %v, want fs.ErrNotRegular", err)
			}
			if _, err := status.NewStore[map[string]any](path).Load(context.Background()); !errors.Is(err, fs.ErrNotRegular) {
				t.Errorf("Store.Load = %v, want fs.ErrNotRegular", err)
			}
			if !cpTryFlock(t, path+status.LockSuffix) {
				t.Errorf("the lock is still held after the refusal")
			}
			if strings.Count(err.Error(), path) != 1 {
				t.Errorf("error %q should name the path once", err)
			}
		})
	}
}

// A lock file that is not a regular file — a named pipe, the directory
// that Node's proper-lockfile makes, a socket (which open(2) answers with
// "no such device or address") — is refused with a clear error that says
// what it is.
func TestNonRegularLockFileRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo+status.LockSuffix, 0o644); err != nil {
		t.Fatal(err)
	}
	mkdir := filepath.Join(dir, "mkdir.json")
	if err := os.Mkdir(mkdir+status.LockSuffix, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock.json")
	l, err := net.Listen("unix", sock+status.LockSuffix)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for path, kind := range map[string]string{fifo: "named pipe", mkdir: "directory", sock: "socket"} {
		_, err := status.Mutate(context.Background(), path, incrRuns)
		if !errors.Is(err, fs.ErrNotRegular) || !strings.Contains(err.Error(), kind) {
			t.Errorf("%s: Mutate = %v, want fs.ErrNotRegular naming a %s", filepath.Base(path), err, kind)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the document was written despite the refused lock file", filepath.Base(path))
		}
	}
}

// A document larger than the limit is refused, unread and unchanged.
func TestDocumentSizeLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	big := `{"status":"running","runs":1,"x":"` + strings.Repeat("x", 2000) + `"}`
	if err := os.WriteFile(path, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	small := status.NewStore[status.Status](path, status.WithMaxSize(1024))
	if _, err := small.Mutate(context.Background(), incrRuns); !errors.Is(err, fs.ErrTooLarge) {
		t.Errorf("Mutate over the limit = %v, want fs.ErrTooLarge", err)
	}
	if _, err := small.Load(context.Background()); !errors.Is(err, fs.ErrTooLarge) {
		t.Errorf("Load over the limit = %v, want fs.ErrTooLarge", err)
	}
	if b, _ := os.ReadFile(path); string(b) != big {
		t.Fatalf("the document changed")
	}
	st, err := status.NewStore[status.Status](path).Mutate(context.Background(), incrRuns)
	if err != nil || st.Runs != 2 {
		t.Fatalf("default limit: %+v, %v; want runs 2", st, err)
	}
}

// "link/../status.json" with link a symbolic link to a directory names, for
// the kernel (and so for Python, cat and Read), the status.json next to the
// link's target, not the one next to the link. Mutate must lock and write
// that same file.
func TestPathResolvedAsTheKernelDoes(t *testing.T) {
	base := t.TempDir()
	if err := os.MkdirAll(filepath.Join(base, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "a", "b"), filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(base, "a", "status.json")
	decoy := filepath.Join(base, "status.json") // where text cleaning leads
	for p, doc := range map[string]string{real: `{"runs":5}`, decoy: `{"runs":100}`} {
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(base)
	for i, path := range []string{filepath.Join(base, "link") + "/../status.json", "link/../status.json", "./link/./../status.json"} {
		st, err := status.Mutate(context.Background(), path, incrRuns)
		if err != nil || st.Runs != 6+i {
			t.Fatalf("Mutate(%s) = runs %d, %v; want %d", path, st.Runs, err, 6+i)
		}
		read, err := status.Load(context.Background(), path)
		if err != nil || read.Runs != 6+i {
			t.Fatalf("Load(%s) = runs %d, %v after the Mutate; want %d", path, read.Runs, err, 6+i)
		}
	}
	if b, _ := os.ReadFile(decoy); string(b) != `{"runs":100}` {
		t.Errorf("the file next to the link changed: %s", b)
	}
	if _, err := os.Stat(real + status.LockSuffix); err != nil {
		t.Errorf("no lock file next to the real document: %v", err)
	}
	if _, err := os.Stat(decoy + status.LockSuffix); err == nil {
		t.Errorf("a lock file was made next to the link's parent")
	}
}

// A path that ends in a slash (or "." or "..") names a directory, never a
// document: every entry point refuses it and nothing is written.
func TestPathNamingADirectoryRefused(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "x.json")
	if err := os.WriteFile(doc, []byte(`{"runs":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{doc + "/", doc + "/.", dir + "/..", dir + "/"} {
		if _, err := status.Mutate(context.Background(), path, incrRuns); !errors.Is(err, fs.ErrInvalidName) {
			t.Errorf("Mutate(%q) = %v, want fs.ErrInvalidName", path, err)
		}
		if _, err := status.Load(context.Background(), path); !errors.Is(err, fs.ErrInvalidName) {
			t.Errorf("Load(%q) = %v, want fs.ErrInvalidName", path, err)
		}
	}
	if b, _ := os.ReadFile(doc); string(b) != `{"runs":1}` {
		t.Errorf("x.json changed: %s", b)
	}
}

// A document name of 251-255 bytes fits the file system but its lock file
// name does not: the error says so, matchable with errors.Is.
func TestNameTooLongForLockFile(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, strings.Repeat("a", 250))
	if _, err := status.Mutate(context.Background(), ok, incrRuns); err != nil {
		t.Fatalf("a 250-byte name: %v", err)
	}
	long := filepath.Join(dir, strings.Repeat("b", 251))
	if err := os.WriteFile(long, []byte(`{"runs":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := status.Mutate(context.Background(), long, incrRuns)
	if !errors.Is(err, status.ErrNameTooLong) || !errors.Is(err, syscall.ENAMETOOLONG) {
		t.Fatalf("Mutate(251-byte name) = %v, want ErrNameTooLong and ENAMETOOLONG", err)
	}
	if st, err := status.Load(context.Background(), long); err != nil || st.Runs != 1 {
		t.Errorf("Load(251-byte name) = %+v, %v; reading needs no lock file", st, err)
	}
}

// needRoot skips a test that acts as a second user. CI runs as root, so
// these tests run there.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("acting as a second user (uid 65534) needs root; CI runs as root")
	}
}

const nobody = 65534 // uid and gid of the second user

// asNobody runs a command as uid and gid 65534 and returns its combined
// output and error.
func asNobody(dir, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	return cmd.CombinedOutput()
}

// sharedDir returns a directory every user may write, like /tmp (mode 1777),
// and a directory only root may enter, holding a secret file.
func sharedDir(t *testing.T) (shared, private string) {
	t.Helper()
	shared = t.TempDir()
	if err := os.Chmod(filepath.Dir(shared), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o1777); err != nil {
		t.Fatal(err)
	}
	private = t.TempDir()
	if err := os.Chmod(private, 0o700); err != nil {
		t.Fatal(err)
	}
	return shared, private
}

// Another user plants PATH.lock as a link into a directory only root may
// write. Root's Mutate must not create (or lock) anything through it.
func TestPlantedLockFileLinkRefused(t *testing.T) {
	needRoot(t)
	shared, private := sharedDir(t)
	path := filepath.Join(shared, "status.json")
	planted := filepath.Join(private, "created-by-root")
	if out, err := asNobody(shared, "ln", "-s", planted, path+status.LockSuffix); err != nil {
		t.Fatalf("planting the link as uid %d: %v %s", nobody, err, out)
	}
	_, err := status.Mutate(context.Background(), path, incrRuns)
	if !errors.Is(err, fs.ErrNotRegular) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Mutate through a planted lock link = %v, want fs.ErrNotRegular naming a symbolic link", err)
	}
	if _, err := os.Lstat(planted); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("root created %s through the planted link", planted)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the document was written despite the refused lock file")
	}
}

// Another user plants PATH itself as a link to a file only root may read.
// Policy: a document is never reached through a link at its own name, so
// root neither reads (leaks) nor replaces the target.
func TestPlantedDocumentLinkRefused(t *testing.T) {
	needRoot(t)
	shared, private := sharedDir(t)
	secret := filepath.Join(private, "secret.json")
	const content = `{"status":"running","note":"root only"}`
	if err := os.WriteFile(secret, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(shared, "status.json")
	if out, err := asNobody(shared, "ln", "-s", secret, path); err != nil {
		t.Fatalf("planting the link as uid %d: %v %s", nobody, err, out)
	}
	if st, err := status.Load(context.Background(), path); !errors.Is(err, fs.ErrNotRegular) {
		t.Errorf("Load through a planted link = %+v, %v; want fs.ErrNotRegular", st, err)
	}
	if _, err := status.Mutate(context.Background(), path, func(s *status.Status) error {
		s.Note = "overwritten"
		return nil
	}); !errors.Is(err, fs.ErrNotRegular) {
		t.Errorf("Mutate through a planted link = %v, want fs.ErrNotRegular", err)
	}
	if b, _ := os.ReadFile(secret); string(b) != content {
		t.Errorf("the link's target changed: %s", b)
	}
}

// The lock file gets the document's owner and permission bits, so that in
// a group-shared workspace every member who may write the document may open
// its lock read-write (as every Python locker does), whoever created it.
func TestLockFileModeFollowsDocument(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 0, nobody); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, os.ModeSetgid|0o775); err != nil { // new files get the group
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		uid, gid int
		mode     os.FileMode
	}{
		{"group.json", 0, nobody, 0o664},
		{"owner.json", nobody, nobody, 0o600},
	}
	for _, c := range cases {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, []byte(`{"runs":1}`), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(path, c.uid, c.gid); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, c.mode); err != nil {
			t.Fatal(err)
		}
		if _, err := status.Mutate(context.Background(), path, incrRuns); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path + status.LockSuffix)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if fi.Mode().Perm() != c.mode || int(st.Uid) != c.uid || int(st.Gid) != c.gid {
			t.Errorf("%s: lock file %v owned by %d:%d, want %v owned by %d:%d",
				c.name, fi.Mode().Perm(), st.Uid, st.Gid, c.mode, c.uid, c.gid)
		}
		// What every Python locker does: open the lock file read-write.
		if out, err := asNobody(dir, "sh", "-c", `exec 3<>"$1"`, "sh", path+status.LockSuffix); err != nil {
			t.Errorf("%s: uid %d cannot open the lock file read-write: %v %s", c.name, nobody, err, out)
		}
	}
}

// A second user whose directory it may not write, and where no lock file
// exists yet, gets "permission denied", the real cause, not "no such file".
func TestReadOnlyDirectoryErrorIsPermission(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "status.json")
	if err := os.WriteFile(path, []byte(`{"runs":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c := cpStartGoAs(t, "read-only child", "mutate-once", cpArgs{Path: path}, dir)
	var res cpMutateOnceResult
	c.expectJSON(t, "result", &res)
	c.mustExit(t)
	if !res.Permission || res.NotExist {
		t.Errorf("error %q: errors.Is ErrPermission %v, ErrNotExist %v; want a permission error", res.Err, res.Permission, res.NotExist)
	}
}

type cpMutateOnceResult struct {
	Err                  string
	Permission, NotExist bool
}

var _ = cpRegister("mutate-once", func(a cpArgs, w *cpReporter) error {
	_, err := status.Mutate(context.Background(), a.Path, incrRuns)
	res := cpMutateOnceResult{Permission: errors.Is(err, os.ErrPermission), NotExist: errors.Is(err, os.ErrNotExist)}
	if err != nil {
		res.Err = err.Error()
	}
	return w.json("result", res)
})

// cpStartGoAs starts the test binary as a child in mode, as uid and gid
// 65534, in directory dir. The binary is copied where that user may run it.
func cpStartGoAs(t *testing.T, name, mode string, a cpArgs, dir string) *cpChild {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "status.test")
	if err := os.Chmod(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(filepath.Dir(bin)), 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(bin, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(dst, src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	c := cpCommand(t, bin, mode, a)
	c.Dir = dir
	c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	return cpStart(t, name, c, true)
}
