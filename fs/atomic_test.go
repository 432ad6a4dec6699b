package fs

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteAtomicCreatesAndReplaces(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "status.json")
	if err := WriteAtomic(p, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(p, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, p); got != "two" {
		t.Fatalf("content = %q, want %q", got, "two")
	}
	assertNoTemp(t, dir)
}

func TestWriteAtomicNewFilePermMinusUmask(t *testing.T) {
	mask := umask(t)
	dir := t.TempDir()
	for _, perm := range []os.FileMode{0o600, 0o644, 0o666, 0o640} {
		p := filepath.Join(dir, perm.String())
		if err := WriteAtomic(p, []byte("x"), perm); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := fi.Mode().Perm(), perm&^mask; got != want {
			t.Errorf("perm %v: new file mode = %v, want %v (umask %o)", perm, got, want, mask)
		}
	}
}

func TestWriteAtomicKeepsExistingPerm(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "secret")
	mustWrite(t, p, "old", 0o600)
	if err := WriteAtomic(p, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("a 0600 file became %v", fi.Mode().Perm())
	}
	// And the other way: a 0664 file keeps group write although perm says 0600.
	mustWrite(t, p, "old", 0o664)
	if err := WriteAtomic(p, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o664 {
		t.Fatalf("a 0664 file became %v", fi.Mode().Perm())
	}
}

func TestWriteAtomicFollowsSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.json")
	link := filepath.Join(dir, "link.json")
	mustWrite(t, target, "old", 0o640)
	if err := os.Symlink("real.json", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(link, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(link)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the symlink was replaced by a regular file")
	}
	if got := mustRead(t, target); got != "new" {
		t.Fatalf("target content = %q, want new", got)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o640 {
		t.Fatalf("target mode = %v, want 0640", fi.Mode().Perm())
	}
	assertNoTemp(t, dir)
}

func TestWriteAtomicBadInput(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		want error
	}{
		{"empty", "", ErrInvalidName},
		{"directory", sub, ErrNotRegular},
		{"trailing slash", sub + "/", ErrNotRegular},
		{"missing parent", filepath.Join(dir, "nope", "f.json"), os.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := WriteAtomic(tt.path, []byte("x"), 0o644)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "fs: write atomic "+tt.path) {
				t.Errorf("error %q does not name the operation and path", err)
			}
			var pe *PathError
			if !errors.As(err, &pe) || pe.Path != tt.path {
				t.Errorf("error %v is not a *PathError for %q", err, tt.path)
			}
			// Code written for the os package's errors (io/fs.PathError is
			// the same type) finds the path too.
			var ope *os.PathError
			if !errors.As(err, &ope) || ope.Path != tt.path || !errors.Is(ope, tt.want) {
				t.Errorf("error %v does not match *os.PathError for %q", err, tt.path)
			}
		})
	}
	if got := listDir(t, dir); len(got) != 1 || got[0] != "sub" {
		t.Errorf("dir now holds %v, want only sub", got)
	}
	assertNoTemp(t, sub)
}

func TestWriteAtomicFrom(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "big")
	data := bytes.Repeat([]byte("0123456789abcdef"), 20000) // 320 KB, several chunks
	n, err := WriteAtomicFrom(context.Background(), p, bytes.NewReader(data), 0o644)
	if err != nil || n != int64(len(data)) {
		t.Fatalf("WriteAtomicFrom = %d, %v", n, err)
	}
	if got := mustRead(t, p); got != string(data) {
		t.Fatal("content differs")
	}
}

func TestWriteAtomicFromFailingReaderLeavesOld(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	mustWrite(t, p, "old", 0o644)
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("partial"), errReader{boom})
	if _, err := WriteAtomicFrom(context.Background(), p, r, 0o644); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if got := mustRead(t, p); got != "old" {
		t.Fatalf("content = %q, want old", got)
	}
	assertNoTemp(t, dir)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := WriteAtomicFrom(ctx, p, strings.NewReader("new"), 0o644); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if got := mustRead(t, p); got != "old" {
		t.Fatalf("content = %q, want old", got)
	}
	assertNoTemp(t, dir)
}

// panicReader panics on its first Read.
type panicReader struct{}

func (panicReader) Read([]byte) (int, error) { panic("reader panicked") }

// A reader that panics is the caller's bug and its panic propagates, but
// the write still cleans up like any failure: the destination keeps its
// content and no temp file (nor its descriptor) is left behind.
func TestWriteAtomicFromPanickingReaderLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	mustWrite(t, p, "old", 0o644)
	func() {
		defer func() {
			if v := recover(); v != "reader panicked" {
				t.Errorf("recovered %v, want the reader's panic", v)
			}
		}()
		WriteAtomicFrom(context.Background(), p, panicReader{}, 0o644)
		t.Errorf("WriteAtomicFrom returned; want the reader's panic to propagate")
	}()
	if got := mustRead(t, p); got != "old" {
		t.Fatalf("content = %q, want old", got)
	}
	assertNoTemp(t, dir)
}

func TestWriteAtomicFromNilArguments(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	mustWrite(t, p, "old", 0o644)
	fsys, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	var nilCtx context.Context // the bad input under test
	for name, call := range map[string]func() (int64, error){
		"nil reader":     func() (int64, error) { return WriteAtomicFrom(context.Background(), p, nil, 0o644) },
		"nil context":    func() (int64, error) { return WriteAtomicFrom(nilCtx, p, strings.NewReader("x"), 0o644) },
		"Fs nil reader":  func() (int64, error) { return fsys.WriteAtomicFrom(context.Background(), "f", nil, 0o644) },
		"Fs nil context": func() (int64, error) { return fsys.WriteAtomicFrom(nilCtx, "f", strings.NewReader("x"), 0o644) },
	} {
		if _, err := call(); !errors.Is(err, os.ErrInvalid) {
			t.Errorf("%s: err = %v, want os.ErrInvalid", name, err)
		}
	}
	if got := mustRead(t, p); got != "old" {
		t.Fatalf("content = %q, want old", got)
	}
	assertNoTemp(t, dir)
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func TestTempName(t *testing.T) {
	for _, base := range []string{"a", "status.json", ".env", strings.Repeat("x", 300), strings.Repeat("é", 200)} {
		n := tempName(base)
		if !isTempName(n) {
			t.Errorf("tempName(%.20q) = %q is not recognised by isTempName", base, n)
		}
		if len(n) > maxNameLen {
			t.Errorf("tempName(%.20q) has %d bytes", base, len(n))
		}
		if !strings.HasPrefix(n, "."+base[:min(len(base), 10)]) {
			t.Errorf("tempName(%.20q) = %q does not start with .base", base, n)
		}
	}
	for _, n := range []string{"status.json", ".status.json.tmp", ".a.0123456789abcdeg.tmp", ".a.0123456789ABCDEF.tmp",
		"a.0123456789abcdef.tmp", "..0123456789abcdef.tmp", ".0123456789abcdef.tmp", ".a.0123456789abcdef.tmpx", ".a-0123456789abcdef.tmp"} {
		if isTempName(n) {
			t.Errorf("isTempName(%q) = true, want false", n)
		}
	}
}
