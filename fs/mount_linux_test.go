//go:build linux

package fs

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// requireMount skips (with the reason) unless the test may mount file
// systems: CI runs as root, so there these tests run for real.
func requireMount(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: mounting needs root (CI runs as root)")
	}
}

// mountTmpfs mounts a tmpfs with the given options on a fresh directory
// and unmounts it when the test ends.
func mountTmpfs(t *testing.T, opts string) string {
	t.Helper()
	requireMount(t)
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, opts); err != nil {
		t.Skipf("skipped: mount -t tmpfs refused: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fill writes to path until the file system is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := bytes.Repeat([]byte{'F'}, 4096)
	for i := 0; i < 1<<16; i++ {
		if _, err := f.Write(chunk); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return
			}
			t.Fatal(err)
		}
	}
	t.Fatal("the tmpfs never filled up")
}

func TestDiskFullLeavesOldFile(t *testing.T) {
	dir := mountTmpfs(t, "size=64k,mode=0755")
	dest := filepath.Join(dir, "status.json")
	mustWrite(t, dest, `{"status":"running"}`, 0o644)
	fill(t, filepath.Join(dir, "filler"))
	payload := bytes.Repeat([]byte("x"), 16<<10)

	fsys, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	for name, write := range map[string]func() error{
		"WriteAtomic":    func() error { return WriteAtomic(dest, payload, 0o644) },
		"Fs.WriteAtomic": func() error { return fsys.WriteAtomic("status.json", payload, 0o644) },
	} {
		err := write()
		if !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("%s on a full disk: err = %v, want ENOSPC", name, err)
		}
		t.Logf("%s: %v", name, err)
		if got := mustRead(t, dest); got != `{"status":"running"}` {
			t.Fatalf("%s: old file damaged: %q", name, got)
		}
		assertNoTemp(t, dir)
	}
	// Once there is room again the same write succeeds.
	if err := os.Remove(filepath.Join(dir, "filler")); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(dest, payload, 0o644); err != nil {
		t.Fatalf("after freeing space: %v", err)
	}
}

// TestReadOnlyDirLeavesOldFile: as root (who ignores permission bits) the
// directory is on a tmpfs remounted read-only; otherwise it is chmod 0555.
func TestReadOnlyDirLeavesOldFile(t *testing.T) {
	var dir string
	want := syscall.EROFS
	if os.Geteuid() == 0 {
		dir = mountTmpfs(t, "size=64k,mode=0755")
	} else {
		dir, want = t.TempDir(), syscall.EACCES
	}
	dest := filepath.Join(dir, "status.json")
	mustWrite(t, dest, "old", 0o644)
	if want == syscall.EROFS {
		if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
			t.Skipf("skipped: remount read-only refused: %v", err)
		}
	} else {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
	}
	err := WriteAtomic(dest, []byte("new"), 0o644)
	if !errors.Is(err, want) {
		t.Fatalf("err = %v, want %v", err, want)
	}
	t.Logf("read-only: %v", err)
	if got := mustRead(t, dest); got != "old" {
		t.Fatalf("old file damaged: %q", got)
	}
	assertNoTemp(t, dir)
}

func TestMountPointDestination(t *testing.T) {
	requireMount(t)
	dir := t.TempDir()
	src := filepath.Join(t.TempDir(), "host-config.json")
	dest := filepath.Join(dir, "config.json")
	mustWrite(t, src, "from host", 0o644)
	mustWrite(t, dest, "placeholder", 0o644)
	if err := syscall.Mount(src, dest, "", syscall.MS_BIND, ""); err != nil {
		t.Skipf("skipped: bind mount refused: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dest, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount: %v", err)
		}
	})
	fsys, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	for name, write := range map[string]func() error{
		"WriteAtomic":    func() error { return WriteAtomic(dest, []byte("new"), 0o644) },
		"Fs.WriteAtomic": func() error { return fsys.WriteAtomic("config.json", []byte("new"), 0o644) },
	} {
		err := write()
		if !errors.Is(err, ErrMountPoint) {
			t.Fatalf("%s: err = %v, want ErrMountPoint", name, err)
		}
		t.Logf("%s: %v", name, err)
		if got := mustRead(t, dest); got != "from host" {
			t.Fatalf("%s: mounted file changed to %q (no copy fallback allowed)", name, got)
		}
		assertNoTemp(t, dir)
	}
}

func TestSpecialFileDestination(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, "/dev/null"} {
		err := WriteAtomic(p, []byte("x"), 0o644)
		if !errors.Is(err, ErrNotRegular) {
			t.Fatalf("WriteAtomic(%s): err = %v, want ErrNotRegular", p, err)
		}
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("fifo replaced: %v %v", fi, err)
	}
	assertNoTemp(t, dir)
}
