package status_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/agentstate/core/status"
	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// statusMachine drives status.Mutate and status.Load with random actions,
// including other programs writing the file (valid, foreign or corrupt),
// and compares the outcome with a plain model after every step.
type statusMachine struct {
	path string

	exists  bool
	corrupt []byte // raw bytes of a corrupt file, nil if the file decodes
	doc     status.Status
	unknown map[string]string // unknown field -> raw value bytes
}

var (
	rawValues    = []string{`1`, `"x"`, `[1, 2]`, `{"a": {"b": null}}`, `true`, `-0.5e10`, `"<&>"`}
	unknownNames = []string{"hub_id", "_meta", "Zed", "x-extra"}
	corruptDocs  = []string{``, `{`, `{"status": "running",}`, `{"runs": "three"}`, `[1]`, "\x00\x01", `null`}
	notes        = []string{"", "a", "b c", "ü & <tag>"}
	allStates    = []status.State{status.Queued, status.Running, status.Completed, status.Blocked,
		status.Failed, status.Merged, status.ReadyForReview, status.Rejected}
)

var errModel = errors.New("model: fn refuses")

func (m *statusMachine) raw(t *rapid.T) []byte {
	b, err := os.ReadFile(m.path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return b
}

// mutate runs fn through status.Mutate and checks the common expectations.
// It returns whether the call succeeded.
func (m *statusMachine) mutate(t *rapid.T, fn func(*status.Status) error) (status.Status, error) {
	before := m.raw(t)
	got, err := status.Mutate(context.Background(), m.path, fn)
	if m.corrupt != nil {
		if !errors.Is(err, status.ErrCorrupt) {
			t.Fatalf("Mutate on corrupt file %q: err = %v, want ErrCorrupt", m.corrupt, err)
		}
	}
	if err != nil {
		if after := m.raw(t); !bytes.Equal(before, after) {
			t.Fatalf("failed Mutate (%v) changed the file from %q to %q", err, before, after)
		}
	}
	return got, err
}

func (m *statusMachine) change(t *rapid.T, apply func(*status.Status) error) {
	want := m.doc
	modelErr := apply(&want)
	got, err := m.mutate(t, apply)
	if m.corrupt != nil {
		return
	}
	if modelErr != nil {
		if !errors.Is(err, modelErr) && !(errors.Is(modelErr, status.ErrConflict) && errors.Is(err, status.ErrConflict)) {
			t.Fatalf("Mutate err = %v, want %v", err, modelErr)
		}
		return
	}
	if err != nil {
		t.Fatalf("Mutate: %v", err)
	}
	changed := !cmp.Equal(want, m.doc)
	if changed {
		m.exists = true
		want.UpdatedAt = got.UpdatedAt
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Mutate returned (-model +got):\n%s", diff)
	}
	if !changed && !got.UpdatedAt.Equal(m.doc.UpdatedAt) {
		t.Fatalf("no-change Mutate moved updated_at")
	}
	m.doc = got
}

func (m *statusMachine) Inc(t *rapid.T) {
	m.change(t, func(s *status.Status) error { s.Runs++; return nil })
}

func (m *statusMachine) SetNote(t *rapid.T) {
	note := rapid.SampledFrom(notes).Draw(t, "note")
	m.change(t, func(s *status.Status) error { s.Note = note; return nil })
}

func (m *statusMachine) Transition(t *rapid.T) {
	to := rapid.SampledFrom(allStates).Draw(t, "to")
	from := rapid.SliceOfNDistinct(rapid.SampledFrom(allStates), 0, 2, rapid.ID).Draw(t, "from")
	m.change(t, status.Transition(to, from...))
}

// OddValues stores values that encoding/json does not round-trip exactly
// (invalid UTF-8, a named fixed zone, a monotonic local time) or does.
func (m *statusMachine) OddValues(t *rapid.T) {
	note := rapid.SampledFrom([]string{"ok", "bad \xff utf8", "\u2028"}).Draw(t, "note")
	var at time.Time
	switch rapid.IntRange(0, 2).Draw(t, "time") {
	case 0:
		at = time.Date(2026, 5, 6, 7, 8, 9, 10, time.UTC)
	case 1:
		at = time.Date(2026, 5, 6, 7, 8, 9, 10, time.FixedZone("CET", 3600))
	case 2:
		at = time.Now()
	}
	got, err := m.mutate(t, func(s *status.Status) error { s.Note, s.StartedAt = note, at; return nil })
	if m.corrupt != nil {
		return
	}
	if err != nil {
		t.Fatalf("Mutate: %v", err)
	}
	// The model follows the file: what a decode gives back.
	read, err := status.Load(context.Background(), m.path)
	if err != nil {
		t.Fatal(err)
	}
	m.exists = m.exists || !cmp.Equal(got, m.doc)
	m.doc = read
}

// FnSeesRead: fn is given exactly what a fresh decode of the file gives
// (time zones and monotonic readings included), whatever the previous
// call stored and however the Store obtained it.
func (m *statusMachine) FnSeesRead(t *rapid.T) {
	if m.corrupt != nil {
		t.Skip("corrupt document")
	}
	want, err := status.Load(context.Background(), m.path)
	if err != nil {
		t.Fatal(err)
	}
	var seen status.Status
	if _, err := status.Mutate(context.Background(), m.path, func(s *status.Status) error { seen = *s; return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(seen, want) {
		t.Fatalf("fn saw\n%#v\nRead gives\n%#v", seen, want)
	}
}

func (m *statusMachine) FnError(t *rapid.T) {
	m.change(t, func(s *status.Status) error { s.Runs += 100; s.Note = "lost"; return errModel })
}

func (m *statusMachine) FnPanic(t *rapid.T) {
	before := m.raw(t)
	func() {
		defer func() {
			if v := recover(); v != "model panic" && m.corrupt == nil {
				t.Fatalf("recovered %v, want the fn's panic", v)
			}
		}()
		m.mutate(t, func(s *status.Status) error { s.Runs += 100; panic("model panic") })
	}()
	if after := m.raw(t); !bytes.Equal(before, after) {
		t.Fatalf("panicking fn changed the file")
	}
}

// ForeignWrite is another program (a Python agent, an older service)
// replacing the file with a valid document carrying fields Status lacks.
func (m *statusMachine) ForeignWrite(t *rapid.T) {
	doc := status.Status{
		State: rapid.SampledFrom(allStates).Draw(t, "state"),
		Runs:  rapid.IntRange(0, 5).Draw(t, "runs"),
		Note:  rapid.SampledFrom(notes).Draw(t, "note"),
	}
	unknown := map[string]string{}
	for _, name := range rapid.SliceOfNDistinct(rapid.SampledFrom(unknownNames), 0, 3, rapid.ID).Draw(t, "names") {
		unknown[name] = rapid.SampledFrom(rawValues).Draw(t, "value")
	}
	var buf bytes.Buffer
	b, _ := json.Marshal(doc)
	buf.Write(b[:len(b)-1])
	for name, v := range unknown {
		fmt.Fprintf(&buf, ",%q:%s", name, v)
	}
	buf.WriteByte('}')
	if err := os.WriteFile(m.path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	m.exists, m.corrupt, m.doc, m.unknown = true, nil, doc, unknown
}

func (m *statusMachine) Corrupt(t *rapid.T) {
	bad := []byte(rapid.SampledFrom(corruptDocs).Draw(t, "corrupt"))
	if err := os.WriteFile(m.path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	m.exists, m.corrupt = true, bad
}

func (m *statusMachine) Check(t *rapid.T) {
	got, err := status.Load(context.Background(), m.path)
	if m.corrupt != nil {
		if !errors.Is(err, status.ErrCorrupt) {
			t.Fatalf("Load of %q: err = %v, want ErrCorrupt", m.corrupt, err)
		}
		if raw := m.raw(t); !bytes.Equal(raw, m.corrupt) {
			t.Fatalf("corrupt file was overwritten with %q", raw)
		}
		return
	}
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if diff := cmp.Diff(m.doc, got); diff != "" {
		t.Fatalf("Load (-model +got):\n%s", diff)
	}
	raw := m.raw(t)
	if !m.exists {
		if raw != nil {
			t.Fatalf("file exists but nothing was committed: %q", raw)
		}
		return
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		t.Fatalf("stored file is not a JSON object: %v", err)
	}
	gotUnknown := map[string]string{}
	for _, name := range unknownNames {
		if v, ok := members[name]; ok {
			gotUnknown[name] = string(v)
		}
	}
	if !maps.Equal(m.unknown, gotUnknown) && !(len(m.unknown) == 0 && len(gotUnknown) == 0) {
		t.Fatalf("unknown fields (-model +file):\n%s", cmp.Diff(m.unknown, gotUnknown))
	}
}

func TestStatusStateMachine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	n := 0
	rapid.Check(t, func(t *rapid.T) {
		n++
		m := &statusMachine{path: filepath.Join(dir, fmt.Sprint(n), "status.json")}
		if err := os.MkdirAll(filepath.Dir(m.path), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Repeat(rapid.StateMachineActions(m))
	})
}
