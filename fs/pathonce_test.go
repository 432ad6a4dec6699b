package fs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestErrorsNamePathOnce: an error names the operation and the path once,
// also when the os or os.Root call under it named the path itself.
func TestErrorsNamePathOnce(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file.json")
	if err := os.WriteFile(file, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	fsys, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	host := func(name string) string { return filepath.Join(dir, name) }
	for _, tc := range []struct {
		op, path string
		call     func(path string) error
	}{
		{"write atomic", host("missing/x.json"), func(p string) error { return WriteAtomic(p, nil, 0o644) }},
		{"write atomic", dir, func(p string) error { return WriteAtomic(p, nil, 0o644) }},
		{"write atomic", host("file.json/x"), func(p string) error { return WriteAtomic(p, nil, 0o644) }},
		{"write atomic", host("missing/x.json"), func(p string) error {
			_, err := WriteAtomicFrom(context.Background(), p, strings.NewReader(""), 0o644)
			return err
		}},
		{"mkdir all", file, func(p string) error { return MkdirAll(p, 0o755) }},
		{"read", host("missing.json"), func(p string) error { _, err := ReadRegular(p, 10); return err }},
		{"read", dir, func(p string) error { _, err := ReadRegular(p, 10); return err }},
		{"new", host("missing"), func(p string) error { _, err := New(p); return err }},
		{"write atomic", "missing/x.json", func(n string) error { return fsys.WriteAtomic(n, nil, 0o644) }},
		{"write atomic", "a//b.json", func(n string) error { return fsys.WriteAtomic(n, nil, 0o644) }},
		{"read", "missing.json", func(n string) error { _, err := fsys.ReadFile(n); return err }},
		{"open", "missing.json", func(n string) error { _, err := fsys.Open(n); return err }},
		{"stat", "missing.json", func(n string) error { _, err := fsys.Stat(n); return err }},
		{"append", "missing/x.log", func(n string) error { return fsys.Append(n, nil) }},
		{"remove", "missing.json", func(n string) error { return fsys.Remove(n) }},
		{"read dir", "missing", func(n string) error { _, err := fsys.ReadDir(n); return err }},
		{"mkdir all", "file.json", func(n string) error { return fsys.MkdirAll(n, 0o755) }},
		{"rename", "missing.json -> y.json", func(string) error { return fsys.Rename("missing.json", "y.json") }},
	} {
		err := tc.call(tc.path)
		if err == nil {
			t.Errorf("%s %s: no error", tc.op, tc.path)
			continue
		}
		msg := err.Error()
		once := strings.Count(msg, tc.path) == 1
		for _, name := range strings.Split(tc.path, " -> ") { // Rename names two
			once = once && strings.Count(msg, name) == 1
		}
		if !strings.HasPrefix(msg, "fs: "+tc.op+" "+tc.path+": ") || !once {
			t.Errorf("%s %s: error %q, want the operation and the path once", tc.op, tc.path, msg)
		}
	}
}
