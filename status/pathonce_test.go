package status

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestErrorsNamePathOnce: an error names the operation and the document's
// path once, also when the fs or os call under it named the path (or its
// lock file) itself.
func TestErrorsNamePathOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	corrupt := write("corrupt.json", `{"runs": 1,,}`)
	big := write("big.json", `{"runs": 1}`)
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	missingDir := filepath.Join(dir, "missing", "status.json")
	missing := filepath.Join(dir, "missing.json")
	noop := func(*Status) error { return nil }
	for _, tc := range []struct {
		path string
		call func(path string) error
	}{
		{corrupt, func(p string) error { _, err := Load(ctx, p); return err }},
		{corrupt, func(p string) error { _, err := Mutate(ctx, p, noop); return err }},
		{corrupt, func(p string) error { _, err := Create(ctx, p, Status{}); return err }},
		{corrupt, func(p string) error {
			_, err := MutateAll(ctx, []AnyStore{NewStore[Status](p)}, func(*Tx) error { return nil })
			return err
		}},
		{missingDir, func(p string) error { _, err := Mutate(ctx, p, noop); return err }},
		{sub, func(p string) error { _, err := Load(ctx, p); return err }},
		{sub, func(p string) error { _, err := Mutate(ctx, p, noop); return err }},
		{big, func(p string) error { _, err := NewStore[Status](p, WithMaxSize(4)).Load(ctx); return err }},
		{missing, func(p string) error { _, err := Quarantine(ctx, p); return err }},
		{missing, func(p string) error { return NewStore[Status](p).Remove(ctx) }},
		{missing, func(p string) error { _, err := Mutate(ctx, p, nil); return err }},
	} {
		err := tc.call(tc.path)
		if err == nil {
			t.Errorf("%s: no error", tc.path)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "status: ") || strings.Count(msg, tc.path) != 1 {
			t.Errorf("error %q, want the path %s once", msg, tc.path)
		}
	}
}
