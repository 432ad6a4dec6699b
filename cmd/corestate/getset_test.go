package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentstate/core/status"
	"github.com/google/go-cmp/cmp"
)

func TestSetThenGetRoundTrip(t *testing.T) {
	path := tempFile(t, "status.json")
	corestate(t, "set", path, "status=running", "runs=3", `note="two words"`,
		"branch=feat/x", "pid=4242", "started_at=2026-01-02T15:04:05Z").want(t, exitOK)

	for field, want := range map[string]string{
		"status":     "running",
		"runs":       "3",
		"note":       "two words", // strings print raw
		"branch":     "feat/x",
		"pid":        "4242",
		"started_at": "2026-01-02T15:04:05Z",
		"issue":      "0", // a Status field the file omits: its zero value
		"question":   "",
	} {
		if got := corestate(t, "get", path, field).want(t, exitOK).stdout; got != want+"\n" {
			t.Errorf("get %s = %q, want %q", field, got, want+"\n")
		}
	}
	if got := corestate(t, "get", "--json", path, "note").want(t, exitOK).stdout; got != "\"two words\"\n" {
		t.Errorf("get --json note = %q", got)
	}

	// What a Go program using the module reads back.
	st, err := status.Load(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	want := status.Status{
		State: status.Running, Runs: 3, Note: "two words", Branch: "feat/x", PID: 4242,
		StartedAt: time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC), UpdatedAt: st.UpdatedAt,
	}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("status.Load after set (-want +got):\n%s", diff)
	}
	if st.UpdatedAt.IsZero() {
		t.Error("set did not set updated_at")
	}
}

func TestSetPrintsCommittedDocument(t *testing.T) {
	path := tempFile(t, "status.json")
	out := corestate(t, "set", path, "runs=1", "zeta=true", "alpha=[1,2]").want(t, exitOK).stdout
	if out != readFile(t, path) {
		t.Errorf("set printed\n%s\nbut the file holds\n%s", out, readFile(t, path))
	}
	if got := corestate(t, "get", path).want(t, exitOK).stdout; got != out {
		t.Errorf("get printed\n%s\nset printed\n%s", got, out)
	}
	// Status fields first in declared order, then others sorted.
	var keys []string
	dec := json.NewDecoder(strings.NewReader(out))
	dec.Token() // {
	for dec.More() {
		k, _ := dec.Token()
		keys = append(keys, k.(string))
		var skip json.RawMessage
		dec.Decode(&skip)
	}
	if diff := cmp.Diff([]string{"updated_at", "runs", "alpha", "zeta"}, keys); diff != "" {
		t.Errorf("key order (-want +got):\n%s", diff)
	}
}

func TestSetKeepsAndSetsUnknownFields(t *testing.T) {
	path := tempFile(t, "status.json")
	// Written by "another service": unknown fields, one nested.
	writeFile(t, path, `{"status": "queued", "runs": 1, "owner": {"team": "infra", "ids": [1, 2]}, "retries": 7}`)

	corestate(t, "set", path, "runs=2", "new_field=\"hi\"", "retries=8").want(t, exitOK)

	var got map[string]any
	if err := json.Unmarshal([]byte(readFile(t, path)), &got); err != nil {
		t.Fatal(err)
	}
	delete(got, "updated_at")
	want := map[string]any{
		"status": "queued", "runs": 2.0, "retries": 8.0, "new_field": "hi",
		"owner": map[string]any{"team": "infra", "ids": []any{1.0, 2.0}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("document after set (-want +got):\n%s", diff)
	}

	// And the library keeps what corestate set.
	if _, err := status.Mutate(context.Background(), path, func(s *status.Status) error {
		s.Runs++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := corestate(t, "get", path, "new_field").want(t, exitOK).stdout; got != "hi\n" {
		t.Errorf("after status.Mutate, new_field = %q", got)
	}
	if got := corestate(t, "get", path, "owner").want(t, exitOK).stdout; got != `{"team":"infra","ids":[1,2]}`+"\n" {
		t.Errorf("after status.Mutate, owner = %q", got)
	}
}

func TestSetValueForms(t *testing.T) {
	path := tempFile(t, "status.json")
	corestate(t, "set", path, "status=blocked", "pid=7", "x=1", "branch=123", "note=true",
		`question="why?"`, "plain=hello world", "obj={\"a\":null}").want(t, exitOK)
	for field, want := range map[string]string{
		"branch":   "123",  // a string field takes VALUE as written
		"note":     "true", // likewise
		"question": "why?", // a JSON string literal is decoded
		"plain":    "hello world",
		"x":        "1",
		"obj":      `{"a":null}`,
	} {
		if got := corestate(t, "get", path, field).want(t, exitOK).stdout; got != want+"\n" {
			t.Errorf("get %s = %q, want %q", field, got, want)
		}
	}
	if got := corestate(t, "get", "--json", path, "x").want(t, exitOK).stdout; got != "1\n" {
		t.Errorf("unknown field x=1 stored as %s, want the number 1", got)
	}

	// FIELD=null removes it: an omitted Status field reads as zero, an
	// unknown one is gone.
	corestate(t, "set", path, "pid=null", "x=null").want(t, exitOK)
	doc := readFile(t, path)
	if strings.Contains(doc, `"pid"`) || strings.Contains(doc, `"x"`) {
		t.Errorf("pid and x not removed:\n%s", doc)
	}
	corestate(t, "get", path, "pid").want(t, exitOK)
	corestate(t, "get", path, "x").want(t, exitNotFound)
}

func TestSetBadField(t *testing.T) {
	for _, arg := range []string{
		"runs=abc", "runs=1.5", `runs="3"`, "pid=[1]", "issue={}",
		"status=done", "status=null", "status=", "status=RUNNING",
		"started_at=yesterday", "updated_at=5",
		"Runs=1", "STATUS=queued", // would collide with runs/status in Go readers
		"=3",
		// Not UTF-8: JSON exchanged between programs must be (RFC 8259),
		// and a Python agent's json.load fails on the whole file.
		"note=\"\xff\"", "extra=\"a\xffb\"", "extra=\xff", "extra=[\"\xff\"]", "\xff=1",
	} {
		t.Run(arg, func(t *testing.T) {
			path := tempFile(t, "status.json")
			const before = "{\"status\": \"queued\", \"runs\": 1}\n"
			writeFile(t, path, before)
			r := corestate(t, "set", path, "note=ok", arg).want(t, exitBadField)
			if !strings.Contains(r.stderr, "bad field") {
				t.Errorf("stderr does not say bad field: %s", r.stderr)
			}
			if got := readFile(t, path); got != before {
				t.Errorf("file changed by a rejected set:\n%s", got)
			}
		})
	}
}

func TestCorruptFileIsReportedAndUntouched(t *testing.T) {
	for name, content := range map[string]string{
		"truncated": `{"status": "running", "ru`,
		"empty":     "",
		"garbage":   "}}not json",
		"null":      "null\n",
		"array":     "[1,2]\n",
		"trailing":  `{"runs": 1}}`,
	} {
		t.Run(name, func(t *testing.T) {
			path := tempFile(t, "status.json")
			writeFile(t, path, content)
			for _, args := range [][]string{
				{"get", path}, {"get", path, "runs"}, {"set", path, "runs=2"},
			} {
				r := corestate(t, args...).want(t, exitCorrupt)
				if !strings.Contains(r.stderr, path) {
					t.Errorf("%v: error does not name the file: %s", args, r.stderr)
				}
			}
			if got := readFile(t, path); got != content {
				t.Errorf("corrupt file was changed to %q", got)
			}
		})
	}
}

func TestNotFound(t *testing.T) {
	path := tempFile(t, "status.json")
	corestate(t, "get", path).want(t, exitNotFound)
	corestate(t, "get", path, "runs").want(t, exitNotFound)
	corestate(t, "set", path, "runs=1").want(t, exitOK) // set creates the document
	corestate(t, "get", path, "no_such_field").want(t, exitNotFound)
	corestate(t, "set", tempFile(t, "missing-dir/status.json"), "runs=1").want(t, exitNotFound)
}

func TestSetUnchangedWritesNothing(t *testing.T) {
	path := tempFile(t, "status.json")
	corestate(t, "set", path, "runs=3", "x=1").want(t, exitOK)
	before := readFile(t, path)
	// Same values: updated_at would move if anything were written.
	out := corestate(t, "set", path, "runs=3", "x=1").want(t, exitOK).stdout
	if after := readFile(t, path); after != before || out != before {
		t.Errorf("an unchanged set rewrote the file or printed something else:\nbefore %s\nafter  %s\nprint  %s", before, after, out)
	}
	// CONTROL: a real change does rewrite it (so the check above can fail).
	corestate(t, "set", path, "runs=4").want(t, exitOK)
	if readFile(t, path) == before {
		t.Error("a changing set did not rewrite the file")
	}
}

func TestSetUpdatedAt(t *testing.T) {
	path := tempFile(t, "status.json")
	as := []assignment{mustParse(t, "runs=1")}
	start := time.Now()
	doc, err := set(context.Background(), newStore(kindByName, path), as, nil)
	if err != nil {
		t.Fatal(err)
	}
	var at time.Time
	if err := doc.Decode("updated_at", &at); err != nil || at.Location() != time.UTC || at.Before(start.Add(-time.Second)) || at.After(time.Now().Add(time.Second)) {
		t.Errorf("updated_at = %v (%v), want now, in UTC", at, err)
	}
	// An explicit updated_at wins.
	as = []assignment{mustParse(t, "runs=2"), mustParse(t, "updated_at=2001-02-03T04:05:06Z")}
	doc, err = set(context.Background(), newStore(kindByName, path), as, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := doc.Get("updated_at"); string(got) != `"2001-02-03T04:05:06Z"` {
		t.Errorf("explicit updated_at replaced by %s", got)
	}
}

func TestSetContextEnded(t *testing.T) {
	path := tempFile(t, "status.json")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := set(ctx, newStore(kindByName, path), []assignment{mustParse(t, "runs=1")}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("set with an ended context: %v, want context.Canceled", err)
	}
	if code := exitCode(err); code != exitInterrupted {
		t.Errorf("exit code %d for a canceled context, want %d", code, exitInterrupted)
	}
}

func mustParse(t *testing.T, arg string) assignment {
	t.Helper()
	a, err := parseAssignment(kindStatus, arg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Values are kept as JSON text, never decoded into float64: an integer above
// 2^53 written by another program survives a set exactly. (Through
// map[string]any it would become 9007199254740992.)
func TestSetKeepsNumbersExactly(t *testing.T) {
	path := tempFile(t, "status.json")
	writeFile(t, path, `{"runs": 1, "big": 9007199254740993, "precise": 0.10000000000000000001}`)
	corestate(t, "set", path, "runs=2", "huge=123456789012345678901234567890").want(t, exitOK)
	for field, want := range map[string]string{
		"big":     "9007199254740993",
		"precise": "0.10000000000000000001",
		"huge":    "123456789012345678901234567890",
	} {
		if got := corestate(t, "get", path, field).want(t, exitOK).stdout; got != want+"\n" {
			t.Errorf("%s = %q, want %s", field, got, want)
		}
	}
}
