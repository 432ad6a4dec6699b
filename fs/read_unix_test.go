//go:build unix

package fs

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// ReadRegular refuses, without blocking or following, everything that is
// not a regular file. Each case would hang (named pipe), read without end
// (/dev/zero) or read another file (link) through os.ReadFile: the control
// for the link case is checked below.
func TestReadRegularRefusesHostileFiles(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "secret")
	mustWrite(t, target, "secret", 0o600)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	devZero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", devZero); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"named pipe":              fifo,
		"directory":               dir,
		"symbolic link":           link,
		"link to a device":        devZero,
		"device":                  "/dev/zero",
		"directory with a slash":  dir + "/",
		"named pipe via a parent": filepath.Join(dir, ".", "fifo"),
	}
	for name, path := range cases {
		t.Run(name, func(t *testing.T) {
			b, err := ReadRegular(path, 1<<20)
			if !errors.Is(err, ErrNotRegular) || b != nil {
				t.Fatalf("ReadRegular(%s) = %q, %v; want nil, ErrNotRegular", path, b, err)
			}
			var pe *PathError
			if !errors.As(err, &pe) || pe.Path != path || pe.Op != "read" {
				t.Errorf("error %v: want a *PathError for read %s", err, path)
			}
		})
	}
	// CONTROL: the same link read by os.ReadFile gives the target's bytes.
	if b, err := os.ReadFile(link); err != nil || string(b) != "secret" {
		t.Fatalf("control: os.ReadFile(link) = %q, %v; the link does not reach the target", b, err)
	}
}

func TestReadRegularLimit(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "doc")
	data := bytes.Repeat([]byte("x"), 1000)
	mustWrite(t, p, string(data), 0o644)
	for _, limit := range []int64{0, -1, 1000, 5000} {
		b, err := ReadRegular(p, limit)
		if err != nil || !bytes.Equal(b, data) {
			t.Errorf("limit %d: got %d bytes, %v; want the 1000 bytes", limit, len(b), err)
		}
	}
	b, err := ReadRegular(p, 999)
	if !errors.Is(err, ErrTooLarge) || b != nil {
		t.Errorf("limit 999: got %d bytes, %v; want ErrTooLarge", len(b), err)
	}
	empty := filepath.Join(dir, "empty")
	mustWrite(t, empty, "", 0o644)
	if b, err := ReadRegular(empty, 10); err != nil || b == nil || len(b) != 0 {
		t.Errorf("empty file: %q (nil %v), %v; want an empty, non-nil slice", b, b == nil, err)
	}
	if _, err := ReadRegular(filepath.Join(dir, "missing"), 10); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want os.ErrNotExist", err)
	}
}

// readUpTo stops a file that grows past the limit after its size was
// taken (here: a pipe's stream stands in for the growing file).
func TestReadUpToStopsGrowth(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Write(bytes.Repeat([]byte("y"), 4096)) // one write of PIPE_BUF: never blocks on an empty pipe
		w.Close()
	}()
	b, err := readUpTo(r, 10, 100)
	<-done
	if !errors.Is(err, ErrTooLarge) || b != nil {
		t.Fatalf("got %d bytes, %v; want ErrTooLarge", len(b), err)
	}
}

// WriteAtomicNoFollow refuses a link at the destination and leaves its
// target alone; WriteAtomic (the control) follows it.
func TestWriteAtomicNoFollowRefusesLink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	mustWrite(t, target, "keep", 0o600)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomicNoFollow(link, []byte("new"), 0o644); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("WriteAtomicNoFollow(link) = %v, want ErrNotRegular", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Fatalf("target changed to %q through the refused link", b)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("link no longer a link: %v %v", fi, err)
	}
	plain := filepath.Join(dir, "plain")
	for _, content := range []string{"one", "two"} {
		if err := WriteAtomicNoFollow(plain, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(plain); string(b) != content {
			t.Fatalf("plain file = %q, want %q", b, content)
		}
	}
	// CONTROL: WriteAtomic follows the same link and replaces the target.
	if err := WriteAtomic(link, []byte("followed"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "followed" {
		t.Fatalf("control: WriteAtomic through the link left the target %q", b)
	}
}
