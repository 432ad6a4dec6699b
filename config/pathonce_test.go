package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFileErrorsNamePathOnce: LoadFile's and SaveFile's errors name the
// operation and the file once, also when the os or fs error under them
// named the file too.
func TestFileErrorsNamePathOnce(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.json")
	if err := os.WriteFile(corrupt, []byte(`{"a": 1,,}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c := New()
	for _, tc := range []struct {
		op, path string
		call     func(path string) error
	}{
		{"load", filepath.Join(dir, "missing.yaml"), c.LoadFile},
		{"load", corrupt, c.LoadFile},
		{"load", dir, c.LoadFile},
		{"save", filepath.Join(dir, "missing", "c.yaml"), func(p string) error { return c.SaveFile(p, 0o644) }},
		{"save", dir, func(p string) error { return c.SaveFile(p, 0o644) }},
	} {
		err := tc.call(tc.path)
		if err == nil {
			t.Errorf("%s %s: no error", tc.op, tc.path)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "config: "+tc.op+" "+tc.path+": ") || strings.Count(msg, tc.path) != 1 {
			t.Errorf("%s %s: error %q, want the operation and the path once", tc.op, tc.path, msg)
		}
	}
}
