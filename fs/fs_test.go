package fs

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentstate/core/internal/deepdiff"
)

// newFs returns an Fs on a fresh temp dir (and that dir's path).
func newFs(t *testing.T) (*Fs, string) {
	t.Helper()
	dir := t.TempDir()
	fsys, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	return fsys, dir
}

func TestFsWriteAtomicRoundTrip(t *testing.T) {
	fsys, dir := newFs(t)
	if err := fsys.MkdirAll("org/repo", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := fsys.WriteAtomic("org/repo/status.json", []byte(`{"status":"running"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fsys.WriteAtomic("org/repo/status.json", []byte(`{"status":"completed"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := fsys.ReadFile("org/repo/status.json")
	if err != nil || string(got) != `{"status":"completed"}` {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
	if got := mustRead(t, filepath.Join(dir, "org/repo/status.json")); got != `{"status":"completed"}` {
		t.Fatalf("on disk: %q", got)
	}
	fi, err := fsys.Stat("org/repo/status.json")
	if err != nil {
		t.Fatal(err)
	}
	if want := DefaultPerm &^ umask(t); fi.Mode().Perm() != want {
		t.Errorf("new file mode %v, want %v", fi.Mode().Perm(), want)
	}
	assertNoTemp(t, filepath.Join(dir, "org/repo"))
}

func TestFsKeepsExistingPerm(t *testing.T) {
	fsys, dir := newFs(t)
	mustWrite(t, filepath.Join(dir, "secret"), "old", 0o600)
	if err := fsys.WriteAtomic("secret", []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(filepath.Join(dir, "secret"))
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("0600 file became %v", fi.Mode().Perm())
	}
}

func TestFsOutsideRoot(t *testing.T) {
	outer := t.TempDir()
	rootDir := filepath.Join(outer, "root")
	outside := filepath.Join(outer, "outside")
	if err := os.MkdirAll(filepath.Join(rootDir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, outside, "precious", 0o644)
	for link, target := range map[string]string{
		"up":      "../outside",       // file outside
		"sub/up2": "../../outside",    // from a subdirectory
		"abs":     outside,            // absolute, outside
		"absin":   rootDir + "/inner", // absolute, even though it points inside
		"esc":     "..",               // a directory link leading out
	} {
		if err := os.Symlink(target, filepath.Join(rootDir, link)); err != nil {
			t.Fatal(err)
		}
	}
	fsys, err := New(rootDir)
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()

	// Operations that follow a link at the final element get every name;
	// the others get the name as a directory element (n + "/x"), since
	// rename and remove act on a final link itself, inside the root.
	names := []string{"..", "../outside", "/etc/passwd", "sub/../../outside", "up", "sub/up2", "abs", "absin", "esc/outside"}
	final := map[string]func(name string) error{
		"WriteAtomic": func(n string) error { return fsys.WriteAtomic(n, []byte("evil"), 0o644) },
		"ReadFile":    func(n string) error { _, err := fsys.ReadFile(n); return err },
		"Open": func(n string) error {
			f, err := fsys.Open(n)
			if err == nil {
				f.Close()
			}
			return err
		},
		"Stat":    func(n string) error { _, err := fsys.Stat(n); return err },
		"Exists":  func(n string) error { _, err := fsys.Exists(n); return err },
		"Append":  func(n string) error { return fsys.Append(n, []byte("evil")) },
		"ReadDir": func(n string) error { _, err := fsys.ReadDir(n); return err },
	}
	inner := map[string]func(name string) error{
		"Remove":     func(n string) error { return fsys.Remove(n) },
		"RemoveAll":  func(n string) error { return fsys.RemoveAll(n) },
		"MkdirAll":   func(n string) error { return fsys.MkdirAll(n, 0o755) },
		"RenameTo":   func(n string) error { return fsys.Rename("sub", n) },
		"RenameFrom": func(n string) error { return fsys.Rename(n, "stolen") },
		"SweepTemp":  func(n string) error { _, err := fsys.SweepTemp(n, 0); return err },
		"WriteIn":    func(n string) error { return fsys.WriteAtomic(n, []byte("evil"), 0o644) },
	}
	check := func(opName, n string, err error) {
		t.Helper()
		if !errors.Is(err, ErrOutsideRoot) {
			t.Errorf("%s(%q): err = %v, want ErrOutsideRoot", opName, n, err)
		}
	}
	for opName, op := range final {
		for _, n := range names {
			check(opName, n, op(n))
		}
	}
	for opName, op := range inner {
		for _, n := range names {
			check(opName, n+"/x", op(n+"/x"))
		}
	}
	if got := mustRead(t, outside); got != "precious" {
		t.Fatalf("file outside the root was changed: %q", got)
	}
	if got := listDir(t, outer); !slices.Equal(got, []string{"outside", "root"}) {
		t.Fatalf("outer dir now holds %v", got)
	}
}

func TestFsErrorMessage(t *testing.T) {
	fsys, _ := newFs(t)
	err := fsys.WriteAtomic("org/repo/status.json", []byte("x"), 0o644)
	const prefix = "fs: write atomic org/repo/status.json: "
	if err == nil || !strings.HasPrefix(err.Error(), prefix) {
		t.Fatalf("err = %v, want prefix %q", err, prefix)
	}
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v, want os.ErrNotExist for a missing parent", err)
	}
	err = fsys.Rename("a", "../b")
	if err == nil || !strings.HasPrefix(err.Error(), "fs: rename a -> ../b: ") || !errors.Is(err, ErrOutsideRoot) {
		t.Fatalf("rename err = %v", err)
	}
}

func TestFsSymlinkPolicy(t *testing.T) {
	fsys, dir := newFs(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "real", "deep"), 0o755))
	must(os.MkdirAll(filepath.Join(dir, "links"), 0o755))
	mustWrite(t, filepath.Join(dir, "real/deep/cfg.json"), "old", 0o600)
	// links/cfg -> ../real/deep/cfg.json ; chain -> links/cfg ; dangling -> real/new.json
	must(os.Symlink("../real/deep/cfg.json", filepath.Join(dir, "links/cfg")))
	must(os.Symlink("links/cfg", filepath.Join(dir, "chain")))
	must(os.Symlink("real/new.json", filepath.Join(dir, "dangling")))
	must(os.Symlink("loop2", filepath.Join(dir, "loop1")))
	must(os.Symlink("loop1", filepath.Join(dir, "loop2")))
	// A directory link in the middle of the name: viadir/deep/cfg.json.
	must(os.Symlink("real", filepath.Join(dir, "viadir")))

	isLink := func(name string) {
		t.Helper()
		fi, err := os.Lstat(filepath.Join(dir, name))
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("%s is no longer a symlink (%v, %v)", name, fi, err)
		}
	}
	for i, name := range []string{"links/cfg", "chain", "viadir/deep/cfg.json"} {
		want := "v" + string(rune('1'+i))
		must(fsys.WriteAtomic(name, []byte(want), 0o644))
		if got := mustRead(t, filepath.Join(dir, "real/deep/cfg.json")); got != want {
			t.Fatalf("after writing %s: target = %q, want %q", name, got, want)
		}
		fi, _ := os.Stat(filepath.Join(dir, "real/deep/cfg.json"))
		if fi.Mode().Perm() != 0o600 {
			t.Fatalf("target mode became %v", fi.Mode().Perm())
		}
	}
	isLink("links/cfg")
	isLink("chain")
	must(fsys.WriteAtomic("dangling", []byte("created"), 0o644))
	isLink("dangling")
	if got := mustRead(t, filepath.Join(dir, "real/new.json")); got != "created" {
		t.Fatalf("dangling link target = %q", got)
	}
	if err := fsys.WriteAtomic("loop1", []byte("x"), 0o644); !errors.Is(err, syscall.ELOOP) {
		t.Fatalf("symlink loop: err = %v, want ELOOP", err)
	}
	isLink("loop1")
	for _, d := range []string{".", "links", "real", "real/deep"} {
		assertNoTemp(t, filepath.Join(dir, d))
	}
}

func TestFsBadInput(t *testing.T) {
	fsys, dir := newFs(t)
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(dir, "d/keep"), "keep", 0o644)
	tests := []struct {
		name string
		want error
	}{
		{"", ErrInvalidName},
		{".", ErrNotRegular},
		{"d", ErrNotRegular},
		{"d/", ErrInvalidName},
		{"./d/keep", ErrInvalidName},
		{"d//keep", ErrInvalidName},
		{"missing/f", os.ErrNotExist},
		{"d/keep/f", syscall.ENOTDIR},
	}
	for _, tt := range tests {
		err := fsys.WriteAtomic(tt.name, []byte("x"), 0o644)
		if !errors.Is(err, tt.want) {
			t.Errorf("WriteAtomic(%q): err = %v, want %v", tt.name, err, tt.want)
		}
		var pe *PathError
		if !errors.As(err, &pe) || pe.Op != "write atomic" || pe.Path != tt.name {
			t.Errorf("WriteAtomic(%q): err %#v is not a *PathError naming op and name", tt.name, err)
		}
		var ope *os.PathError
		if !errors.As(err, &ope) || ope.Op != "write atomic" || ope.Path != tt.name || !errors.Is(ope.Err, tt.want) {
			t.Errorf("WriteAtomic(%q): err %#v does not match *os.PathError naming op, name and cause", tt.name, err)
		}
	}
	if got := mustRead(t, filepath.Join(dir, "d/keep")); got != "keep" {
		t.Fatalf("d/keep = %q", got)
	}
	if got := listDir(t, dir); !slices.Equal(got, []string{"d"}) {
		t.Errorf("root holds %v", got)
	}
	assertNoTemp(t, filepath.Join(dir, "d"))
}

func TestFsDirectoryOps(t *testing.T) {
	fsys, _ := newFs(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(fsys.MkdirAll("a/b/c", 0o755))
	must(fsys.MkdirAll("a/b/c", 0o755)) // idempotent
	must(fsys.WriteAtomic("a/f", []byte("1"), 0o644))
	must(fsys.Append("a/log", []byte("x\n")))
	must(fsys.Append("a/log", []byte("y\n")))
	if b, _ := fsys.ReadFile("a/log"); string(b) != "x\ny\n" {
		t.Fatalf("log = %q", b)
	}
	if err := fsys.MkdirAll("a/f/g", 0o755); !errors.Is(err, syscall.ENOTDIR) {
		t.Fatalf("MkdirAll through a file: %v", err)
	}
	ents, err := fsys.ReadDir("a")
	must(err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if diff := deepdiff.Diff([]string{"b", "f", "log"}, names); diff != "" {
		t.Fatalf("ReadDir (-want +got):\n%s", diff)
	}
	must(fsys.Rename("a/f", "a/b/g"))
	for name, want := range map[string]bool{"a/f": false, "a/b/g": true, "a/b/c": true, "nope": false} {
		got, err := fsys.Exists(name)
		if err != nil || got != want {
			t.Errorf("Exists(%q) = %v, %v; want %v", name, got, err, want)
		}
	}
	if err := fsys.Remove("a/b"); err == nil {
		t.Fatal("Remove of a non-empty directory succeeded")
	}
	must(fsys.Remove("a/b/g"))
	must(fsys.RemoveAll("a/b"))
	must(fsys.RemoveAll("a/b")) // missing is fine
	if err := fsys.Remove("."); !errors.Is(err, ErrInvalidName) {
		t.Fatalf("Remove(.) = %v", err)
	}
	f, err := fsys.Open("a/log")
	must(err)
	f.Close()
}

func TestMkdirAllHost(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x", "y", "z")
	if err := MkdirAll(p, 0o750); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
		t.Fatalf("Stat = %v, %v", fi, err)
	}
	if err := MkdirAll(p, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(filepath.Join(p, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSweepTemp(t *testing.T) {
	fsys, dir := newFs(t)
	old := time.Now().Add(-time.Hour)
	stale := []string{tempName("status.json"), tempName(".env"), tempName(strings.Repeat("n", 250))}
	fresh := tempName("status.json")
	decoys := []string{"status.json", ".status.json.tmp", "status.json.0123456789abcdef.tmp",
		".status.json.0123456789ABCDEF.tmp", ".status.json.0123456789abcde.tmp", "notes.tmp"}
	for _, n := range append(append(stale, decoys...), fresh) {
		mustWrite(t, filepath.Join(dir, n), "x", 0o644)
		if n != fresh {
			if err := os.Chtimes(filepath.Join(dir, n), old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A directory with a temp-shaped name is not ours either.
	dirDecoy := tempName("dir")
	if err := os.Mkdir(filepath.Join(dir, dirDecoy), 0o755); err != nil {
		t.Fatal(err)
	}
	removed, err := fsys.SweepTemp(".", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]string(nil), stale...)
	for i := range want {
		want[i] = "." + "/" + want[i]
	}
	sortStrings(want)
	for i := range want {
		want[i] = strings.TrimPrefix(want[i], "./")
	}
	if diff := deepdiff.Diff(want, removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	left := listDir(t, dir)
	wantLeft := append([]string{fresh, dirDecoy}, decoys...)
	sortStrings(wantLeft)
	if diff := deepdiff.Diff(wantLeft, left); diff != "" {
		t.Errorf("left (-want +got):\n%s", diff)
	}
	// Package-level variant, age 0 removes the fresh one too.
	removed, err = SweepTemp(dir, 0)
	if err != nil || len(removed) != 1 || removed[0] != filepath.Join(dir, fresh) {
		t.Fatalf("SweepTemp = %v, %v", removed, err)
	}
}
