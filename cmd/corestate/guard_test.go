package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentstate/core/status"
)

func TestSetGuardHolds(t *testing.T) {
	path := tempFile(t, "status.json")
	writeFile(t, path, `{"status": "queued", "runs": 2, "score": 2, "owner": {"team": "x", "n": 1}}`)
	corestate(t, "set", path, "status=running", "pid=42", "--if", "status=queued").want(t, exitOK)
	st, err := status.Load(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != status.Running || st.PID != 42 {
		t.Fatalf("after a guarded set: status %q pid %d, want running 42", st.State, st.PID)
	}
	// Several guards, alternatives, JSON comparison (key order, 2 == 2.0),
	// an absent Status field as its zero value, null as absent.
	corestate(t, "set", path, "note=x",
		"--if", "status=blocked,running",
		"--if", "runs=2", "--if", "score=2.0",
		"--if", `owner={"n":1,"team":"x"}`,
		"--if", "issue=0",
		"--if", "reviewer=null").want(t, exitOK)
	if got := corestate(t, "get", path, "note").want(t, exitOK).stdout; got != "x\n" {
		t.Errorf("note = %q after guards that hold", got)
	}
}

// A guard that does not hold: exit 8, one line naming the field, the
// current and the wanted values, and the file byte-for-byte unchanged.
func TestSetGuardFails(t *testing.T) {
	const before = "{\"status\": \"completed\", \"runs\": 3}\n"
	for _, tc := range []struct {
		guard string
		says  []string // in the error
	}{
		{"status=queued", []string{`status is "completed"`, `want "queued"`}},
		{"status=queued,blocked", []string{`status is "completed"`, `want "queued" or "blocked"`}},
		{"runs=4", []string{"runs is 3", "want 4"}},
		{"status=null", []string{`status is "completed"`, "want absent"}},
		{"pid=7", []string{"pid is absent (reads as 0)", "want 7"}},
		{"reviewer=ana", []string{"reviewer is absent", `want "ana"`}},
	} {
		t.Run(tc.guard, func(t *testing.T) {
			path := tempFile(t, "status.json")
			writeFile(t, path, before)
			r := corestate(t, "set", path, "status=completed", "note=late", "--if", tc.guard).want(t, exitConflict)
			for _, s := range append(tc.says, "conflict", path, "--if "+tc.guard) {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("error does not say %s: %s", s, r.stderr)
				}
			}
			if got := readFile(t, path); got != before {
				t.Errorf("file changed by a set whose guard failed:\n%s", got)
			}
		})
	}
	// A missing file is not created when the guard fails.
	path := tempFile(t, "status.json")
	corestate(t, "set", path, "status=running", "--if", "status=queued").want(t, exitConflict)
	corestate(t, "get", path).want(t, exitNotFound)
	// CONTROL: the same set with a guard that holds on a missing file writes.
	corestate(t, "set", path, "status=running", "--if", "status=null").want(t, exitOK)
}

// The status package's transition rule: a final state is not left unless
// the caller's --if names it (so a "completed" is never reverted to "running").
func TestSetFinalStatusNeedsGuard(t *testing.T) {
	for _, final := range []status.State{status.Completed, status.Failed, status.Merged, status.Rejected} {
		t.Run(string(final), func(t *testing.T) {
			path := tempFile(t, "status.json")
			before := `{"status": "` + string(final) + `"}`
			writeFile(t, path, before)
			r := corestate(t, "set", path, "status=running").want(t, exitConflict)
			if !strings.Contains(r.stderr, "--if status="+string(final)) {
				t.Errorf("error does not say how to override: %s", r.stderr)
			}
			if readFile(t, path) != before {
				t.Fatal("a refused transition changed the file")
			}
			// Other fields and re-stating the state are not transitions.
			corestate(t, "set", path, "note=post-mortem", "status="+string(final)).want(t, exitOK)
			// CONTROL: naming the final state in --if allows the move.
			corestate(t, "set", path, "status=running", "--if", "status=queued,"+string(final)).want(t, exitOK)
		})
	}
	// Non-final states move freely.
	path := tempFile(t, "status.json")
	for _, s := range []string{"queued", "running", "blocked", "ready-for-review", "running", "completed"} {
		corestate(t, "set", path, "status="+s).want(t, exitOK)
	}
}

func TestGuardBadInput(t *testing.T) {
	path := tempFile(t, "status.json")
	const before = `{"status": "queued"}`
	writeFile(t, path, before)
	for _, tc := range []struct {
		guard string
		code  int
	}{
		{"status", exitUsage},                // no =
		{"tags=[1,2],[3", exitUsage},         // a composite cut by a comma
		{"status=done", exitBadField},        // not a state
		{"status=queued,done", exitBadField}, // likewise, in a list
		{"runs=abc", exitBadField},           // not an integer
		{"Runs=1", exitBadField},             // collides with runs
		{"Runs=null", exitBadField},
		{"=1", exitBadField},
	} {
		corestate(t, "set", path, "note=x", "--if", tc.guard).want(t, tc.code)
		corestate(t, "incr", path, "runs", "--if", tc.guard).want(t, tc.code)
	}
	if readFile(t, path) != before {
		t.Error("a rejected guard changed the file")
	}
}

func TestParseGuardAlternatives(t *testing.T) {
	for text, want := range map[string][]string{
		"status=queued,blocked": {`"queued"`, `"blocked"`},
		`note="a,b"`:            {`"a,b"`},
		"tags=[1,2]":            {`[1,2]`},
		"note=a,b":              {`"a"`, `"b"`},
		"runs=1,2":              {"1", "2"},
		"branch=12":             {`"12"`}, // a string field, as set takes it
		"x=null,1":              {"<absent>", "1"},
	} {
		g, err := parseGuard(kindStatus, text)
		if err != nil {
			t.Errorf("%s: %v", text, err)
			continue
		}
		var got []string
		for _, a := range g.alts {
			if a.value == nil {
				got = append(got, "<absent>")
			} else {
				got = append(got, string(a.value))
			}
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: alternatives %q, want %q", text, got, want)
		}
	}
}

func TestJSONEqual(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		eq   bool
	}{
		{"1", "1.0", true},
		{"1", "1e0", true},
		{"9007199254740993", "9007199254740992", false}, // beyond float64
		{`{"a":1,"b":[true,null]}`, `{ "b": [true, null], "a": 1 }`, true},
		{`"\u0061"`, `"a"`, true},
		{`"1"`, "1", false},
		{"null", "false", false},
		{"[1,2]", "[2,1]", false},
		{`{"a":1}`, `{"a":1,"b":2}`, false},
	} {
		if got := jsonEqual([]byte(tc.a), []byte(tc.b)); got != tc.eq {
			t.Errorf("jsonEqual(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.eq)
		}
	}
}

func TestConflictErrorMatchesStatusErrConflict(t *testing.T) {
	path := tempFile(t, "status.json")
	writeFile(t, path, `{"status": "completed"}`)
	g, err := parseGuard(kindStatus, "status=queued")
	if err != nil {
		t.Fatal(err)
	}
	_, err = set(t.Context(), newStore(kindByName, path), []assignment{mustParse(t, "status=running")}, []guard{g})
	if !errors.Is(err, status.ErrConflict) || exitCode(err) != exitConflict {
		t.Errorf("guard failure: %v (exit %d), want status.ErrConflict and exit %d", err, exitCode(err), exitConflict)
	}
	_, err = set(t.Context(), newStore(kindByName, path), []assignment{mustParse(t, "status=running")}, nil)
	var ce *status.ConflictError
	if !errors.As(err, &ce) || ce.Current != status.Completed || exitCode(err) != exitConflict {
		t.Errorf("transition from completed: %v, want a *status.ConflictError and exit %d", err, exitConflict)
	}
}
