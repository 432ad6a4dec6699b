package status_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentstate/core/status"
	"github.com/google/go-cmp/cmp"
)

// The document carries exactly the sixteen fields the agent services use.
func TestStatusJSONFields(t *testing.T) {
	full := status.Status{
		State: status.Running, Agent: "a", Repo: "r", Org: "o", Task: "t", Branch: "b",
		Issue: 1, PID: 2, ProcessID: "p", StartedAt: time.Unix(1, 0).UTC(), UpdatedAt: time.Unix(2, 0).UTC(),
		Question: "q", Runs: 3, PRURL: "u", Note: "n", Runtime: "rt",
	}
	b, err := json.Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	want := []string{"agent", "branch", "issue", "note", "org", "pid", "pr_url", "process_id",
		"question", "repo", "runs", "runtime", "started_at", "status", "task", "updated_at"}
	got := slices.Sorted(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("JSON fields (-want +got):\n%s", diff)
	}
	// omitempty exactly on the optional fields.
	b, _ = json.Marshal(status.Status{})
	m = nil
	json.Unmarshal(b, &m)
	var required []string
	for k := range m {
		required = append(required, k)
	}
	slices.Sort(required)
	if diff := cmp.Diff([]string{"agent", "repo", "runs", "started_at", "status", "task", "updated_at"}, required); diff != "" {
		t.Errorf("fields kept when empty (-want +got):\n%s", diff)
	}
}

func TestStates(t *testing.T) {
	all := map[status.State]bool{
		status.Queued: false, status.Running: false, status.Completed: true, status.Blocked: false,
		status.Failed: true, status.Merged: true, status.ReadyForReview: false, status.Rejected: true,
	}
	wantNames := []string{"blocked", "completed", "failed", "merged", "queued", "ready-for-review", "rejected", "running"}
	var names []string
	for s, final := range all {
		names = append(names, string(s))
		if s.Final() != final {
			t.Errorf("%s.Final() = %v, want %v", s, s.Final(), final)
		}
	}
	slices.Sort(names)
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("state values (-want +got):\n%s", diff)
	}
}

func TestTransition(t *testing.T) {
	for _, tc := range []struct {
		cur, to State
		from    []State
		ok      bool
	}{
		{status.Queued, status.Running, []State{status.Queued}, true},
		{status.Completed, status.Running, []State{status.Queued}, false},
		{status.Running, status.Running, []State{status.Queued}, false}, // a second spawner loses
		{status.Blocked, status.Running, []State{status.Queued, status.Blocked}, true},
		{status.Running, status.Completed, nil, true},
		{status.Completed, status.Running, nil, false}, // never revert a final state
		{status.Merged, status.Queued, []State{status.Merged}, true},
		{"", status.Queued, nil, true},
	} {
		s := status.Status{State: tc.cur, Note: "keep"}
		err := s.Transition(tc.to, tc.from...)
		if tc.ok {
			if err != nil || s.State != tc.to {
				t.Errorf("%q→%q from %v: err %v state %q", tc.cur, tc.to, tc.from, err, s.State)
			}
			continue
		}
		var ce *status.ConflictError
		if !errors.Is(err, status.ErrConflict) || !errors.As(err, &ce) {
			t.Errorf("%q→%q from %v: err = %v, want a *ConflictError", tc.cur, tc.to, tc.from, err)
			continue
		}
		if ce.Current != tc.cur || ce.Want != tc.to || !slices.Equal(ce.From, tc.from) {
			t.Errorf("ConflictError = %+v", ce)
		}
		if s.State != tc.cur || s.Note != "keep" {
			t.Errorf("refused transition changed the document: %+v", s)
		}
	}
}

type State = status.State

// A completed task is not reverted by a stale "running" writer, and the
// refused transition writes nothing.
func TestMutateTransitionConflict(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	ctx := context.Background()
	if _, err := status.Mutate(ctx, path, func(s *status.Status) error { s.State = status.Completed; return nil }); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	_, err := status.Mutate(ctx, path, status.Transition(status.Running, status.Queued))
	if !errors.Is(err, status.ErrConflict) {
		t.Fatalf("err = %v, want ErrConflict", err)
	}
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Errorf("refused transition rewrote the file:\n%s\n->\n%s", before, after)
	}
}

func TestMutateSetsUpdatedAtOnlyOnChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	ctx := context.Background()
	start := time.Now().UTC()
	st, err := status.Mutate(ctx, path, func(s *status.Status) error { s.Runs = 1; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if st.UpdatedAt.Before(start.Add(-time.Second)) || st.UpdatedAt.Location() != time.UTC {
		t.Errorf("UpdatedAt = %v, want about %v in UTC", st.UpdatedAt, start)
	}
	before, _ := os.ReadFile(path)
	st2, err := status.Mutate(ctx, path, func(s *status.Status) error { s.Runs = 1; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if !st2.UpdatedAt.Equal(st.UpdatedAt) {
		t.Errorf("no-change Mutate moved UpdatedAt from %v to %v", st.UpdatedAt, st2.UpdatedAt)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Errorf("no-change Mutate rewrote the file")
	}
	read, err := status.Load(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(st, read); diff != "" {
		t.Errorf("Load after Mutate (-mutate +read):\n%s", diff)
	}
}

// A second service's file with fields Status does not know keeps them
// through status.Mutate, byte for byte in value, and the layout is the
// documented one: known fields in struct order, then unknown fields sorted.
func TestStatusUnknownFieldsAndLayout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	const foreign = `{"status":"queued","agent":"claude","zeta":[1, 2,3],"repo":"core","task":"t1",` +
		`"alpha":{"nested": "yes"},"started_at":"2026-01-02T03:04:05Z","updated_at":"2026-01-02T03:04:05Z","runs":0}`
	if err := os.WriteFile(path, []byte(foreign), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := status.Mutate(context.Background(), path, func(s *status.Status) error {
		s.Runs++
		s.PRURL = "https://example.invalid/pr?a=1&b=2"
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st status.Status
	json.Unmarshal(b, &st)
	want := `{
  "status": "queued",
  "agent": "claude",
  "repo": "core",
  "task": "t1",
  "started_at": "2026-01-02T03:04:05Z",
  "updated_at": "` + st.UpdatedAt.Format(time.RFC3339Nano) + `",
  "runs": 1,
  "pr_url": "https://example.invalid/pr?a=1&b=2",
  "alpha": {"nested": "yes"},
  "zeta": [1, 2,3]
}
`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("stored file (-want +got):\n%s", diff)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the existing 0600 kept", fi.Mode().Perm())
	}
	if !strings.HasSuffix(string(b), "}\n") {
		t.Errorf("no trailing newline")
	}
}

func TestReadMissingAndCorrupt(t *testing.T) {
	dir := t.TempDir()
	st, err := status.Load(context.Background(), filepath.Join(dir, "none.json"))
	if err != nil || st != (status.Status{}) {
		t.Errorf("Load(missing) = %+v, %v; want zero, nil", st, err)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"status": "running", "runs": "x"}`), 0o644)
	_, err = status.Load(context.Background(), bad)
	var ce *status.CorruptError
	if !errors.As(err, &ce) || ce.Path != bad || ce.Offset == 0 || !strings.Contains(err.Error(), bad) {
		t.Errorf("Load(corrupt) err = %v, want *CorruptError with path and offset", err)
	}
}

func TestWithPermForNewFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret.json")
	s := status.NewStore[map[string]int](path, status.WithPerm(0o600))
	if _, err := s.Mutate(context.Background(), func(m *map[string]int) error {
		*m = map[string]int{"a": 1}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("new file mode %v, want 0600", fi.Mode().Perm())
	}
	lock, err := os.Stat(path + status.LockSuffix)
	if err != nil || !lock.Mode().IsRegular() {
		t.Errorf("lock file %s: %v", path+status.LockSuffix, err)
	}
}

// A non-struct document type keeps every key by itself; the Store must not
// try to find unknown fields in it.
func TestStoreOfMap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agents.json")
	os.WriteFile(path, []byte(`{"b": 2, "a": {"nested": true}}`), 0o644)
	s := status.NewStore[map[string]any](path)
	got, err := s.Mutate(context.Background(), func(m *map[string]any) error {
		(*m)["c"] = 3.0
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": map[string]any{"nested": true}, "b": 2.0, "c": 3.0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	b, _ := os.ReadFile(path)
	if string(b) != "{\n  \"a\": {\n    \"nested\": true\n  },\n  \"b\": 2,\n  \"c\": 3\n}\n" {
		t.Errorf("stored %q", b)
	}
}

// Bad caller input gets an error, never a panic.
func TestBadInput(t *testing.T) {
	if _, err := status.Mutate(context.Background(), filepath.Join(t.TempDir(), "s.json"), nil); err == nil {
		t.Errorf("Mutate with a nil fn: no error")
	}
	if _, err := status.Mutate(context.Background(), "", func(*status.Status) error { return nil }); err == nil {
		t.Errorf("Mutate of an empty path: no error")
	}
	if _, err := status.Load(context.Background(), ""); err == nil {
		t.Errorf("Load of an empty path: no error")
	}
	dir := t.TempDir()
	if _, err := status.Mutate(context.Background(), dir, func(s *status.Status) error { s.Runs = 1; return nil }); err == nil {
		t.Errorf("Mutate of a directory: no error")
	}
	var nilCtx context.Context
	path := filepath.Join(dir, "s.json")
	if _, err := status.Mutate(nilCtx, path, func(s *status.Status) error { s.Runs = 1; return nil }); err == nil {
		t.Errorf("Mutate with a nil context: no error")
	}
	if _, err := status.NewStore[status.Status](path).Load(nilCtx); err == nil {
		t.Errorf("Load with a nil context: no error")
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("bad input wrote %s: %v", path, err)
	}
}

// Every Store of Status stamps updated_at like status.Mutate, so code that
// keeps a *Store[Status] (core's accessor, long-lived services) cannot
// forget it; a Store of another type never gets a field it did not ask for.
func TestStoreOfStatusSetsUpdatedAt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	ctx := context.Background()
	st, err := status.NewStore[status.Status](path).Mutate(ctx, func(s *status.Status) error { s.Runs = 1; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if st.UpdatedAt.IsZero() {
		t.Errorf("Store[Status].Mutate left UpdatedAt zero")
	}
	type plain struct {
		Runs      int       `json:"runs"`
		UpdatedAt time.Time `json:"updated_at"`
	}
	other := filepath.Join(t.TempDir(), "doc.json")
	p, err := status.NewStore[plain](other).Mutate(ctx, func(d *plain) error { d.Runs = 1; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if !p.UpdatedAt.IsZero() {
		t.Errorf("Store[plain].Mutate set UpdatedAt = %v; only Status stamps itself", p.UpdatedAt)
	}
}
