package status

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/agentstate/core/status/internal/filestore"
)

// fnSees runs one no-op Mutate and returns the document its fn was given.
func fnSees(t *testing.T, path string) Status {
	t.Helper()
	var seen Status
	if _, err := Mutate(context.Background(), path, func(s *Status) error { seen = *s; return nil }); err != nil {
		t.Fatal(err)
	}
	return seen
}

// TestLastEncodingReuse checks that reusing the last encoding (instead of
// decoding the file) never changes what fn sees: after every kind of value,
// fn must see exactly what a fresh decode (Read) gives, down to time zones
// and monotonic readings (reflect.DeepEqual).
func TestLastEncodingReuse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	c := codecFor[Status]()
	if !c.Reuses() {
		t.Fatal("Status is not treated as flat; the reuse path is never taken")
	}
	for _, tc := range []struct {
		name   string
		set    func(*Status)
		reused bool
	}{
		{"plain", func(s *Status) { s.Note = "plain"; s.StartedAt = time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC) }, true},
		{"invalid utf8", func(s *Status) { s.Note = "a\xffb" }, false},
		{"fixed zone", func(s *Status) { s.StartedAt = time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("X", 3600)) }, false},
		{"monotonic local", func(s *Status) { s.StartedAt = time.Now() }, false},
		{"back to plain", func(s *Status) { s.StartedAt = time.Unix(0, 0).UTC(); s.Runs++ }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Mutate(context.Background(), path, func(s *Status) error { tc.set(s); return nil }); err != nil {
				t.Fatal(err)
			}
			cur, _ := filestore.Read(path, path, 0)
			if _, _, _, hit := lookup[Status](c, cur); hit != tc.reused {
				t.Errorf("last encoding reused = %v, want %v", hit, tc.reused)
			}
			want, err := Load(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			if got := fnSees(t, path); !reflect.DeepEqual(got, want) {
				t.Errorf("fn saw\n%#v\nRead gives\n%#v", got, want)
			}
		})
	}
}
