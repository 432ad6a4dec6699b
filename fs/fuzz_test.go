package fs

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// FuzzName checks that name validation never panics, only fails with the
// package's sentinels, and never accepts a name that leaves the root; and
// that a WriteAtomic through an Fs with that name never creates or changes
// anything outside the root, whatever the name.
func FuzzName(f *testing.F) {
	for _, s := range []string{"", ".", "..", "a", "a/b", "a/../b", "/etc/passwd", "a//b", "./a", "a/", `a\..\b`,
		"C:/x", `C:\x`, "\x00", "NUL", "a/./b", ".hidden", "..a", "a..", "a/b/../../..", "sub/link"} {
		f.Add(s)
	}
	outer := f.TempDir()
	rootDir := filepath.Join(outer, "root")
	if err := os.MkdirAll(filepath.Join(rootDir, "sub"), 0o755); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outer, "outside"), []byte("keep"), 0o644); err != nil {
		f.Fatal(err)
	}
	if err := os.Symlink("../../outside", filepath.Join(rootDir, "sub", "link")); err != nil && runtime.GOOS != "windows" {
		f.Fatal(err)
	}
	fsys, err := New(rootDir)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { fsys.Close() })

	f.Fuzz(func(t *testing.T, name string) {
		l, err := local(name)
		if err != nil {
			if !errors.Is(err, ErrInvalidName) && !errors.Is(err, ErrOutsideRoot) {
				t.Fatalf("local(%q): unexpected error kind %v", name, err)
			}
		} else if l != "." && !filepath.IsLocal(l) {
			t.Fatalf("local(%q) = %q accepted a name that is not local", name, l)
		}
		werr := fsys.WriteAtomic(name, []byte("fuzz"), 0o644)
		if err != nil && werr == nil {
			t.Fatalf("WriteAtomic(%q) succeeded though the name is invalid: %v", name, err)
		}
		ents, rerr := os.ReadDir(outer)
		if rerr != nil {
			t.Fatal(rerr)
		}
		if len(ents) != 2 {
			t.Fatalf("WriteAtomic(%q) created something outside the root: %v", name, ents)
		}
		if b, _ := os.ReadFile(filepath.Join(outer, "outside")); string(b) != "keep" {
			t.Fatalf("WriteAtomic(%q) changed a file outside the root", name)
		}
	})
}
