package core

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestErrorsNamePathOnce: New's and StatusPath's errors name the root or the
// workspace once, also when the fs error under them named it too.
func TestErrorsNamePathOnce(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{filepath.Join(dir, "missing"), file} {
		_, err := New(root)
		if err == nil || strings.Count(err.Error(), root) != 1 {
			t.Errorf("New(%s) = %v, want an error naming the root once", root, err)
		}
	}

	c := newCore(t)
	if err := os.MkdirAll(filepath.Join(c.Root(), "acme", "api"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(c.Root(), "acme", "api", "link7")); err != nil {
		t.Fatal(err)
	}
	for _, w := range []Workspace{{"acme", "api", "link7"}, {"acme", "..", "task7"}, {"acme", "", "task7"}} {
		_, err := c.StatusPath(w.Org, w.Repo, w.Task)
		if err == nil || strings.Count(err.Error(), w.Task) != 1 || w.Repo != "" && strings.Count(err.Error(), w.Repo) != 1 {
			t.Errorf("StatusPath(%v) = %v, want an error naming the workspace once", w, err)
		}
	}
}
