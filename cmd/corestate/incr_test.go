package main

import (
	"context"
	"strings"
	"testing"

	"github.com/agentstate/core/status"
)

func TestIncrRoundTrip(t *testing.T) {
	path := tempFile(t, "status.json")
	// A missing file and field count as 0.
	out := corestate(t, "incr", path, "runs").want(t, exitOK).stdout
	if out != readFile(t, path) {
		t.Errorf("incr printed\n%s\nbut the file holds\n%s", out, readFile(t, path))
	}
	corestate(t, "incr", path, "runs", "5").want(t, exitOK)
	corestate(t, "incr", path, "runs", "--", "-2").want(t, exitOK)
	corestate(t, "incr", path, "retries").want(t, exitOK) // a field Status does not know
	if got := corestate(t, "get", path, "runs").want(t, exitOK).stdout; got != "4\n" {
		t.Errorf("runs = %q after 1+5-2, want 4", got)
	}
	if got := corestate(t, "get", path, "retries").want(t, exitOK).stdout; got != "1\n" {
		t.Errorf("retries = %q, want 1", got)
	}
	st, err := status.Load(context.Background(), path)
	if err != nil || st.Runs != 4 || st.UpdatedAt.IsZero() {
		t.Errorf("status.Load: %+v, %v; want runs 4 and updated_at set", st, err)
	}
	// Guarded: exit 8 and nothing written when the guard fails.
	before := readFile(t, path)
	corestate(t, "incr", path, "runs", "--if", "runs=3").want(t, exitConflict)
	if readFile(t, path) != before {
		t.Error("incr with a failing guard changed the file")
	}
	corestate(t, "incr", path, "runs", "--if", "runs=4").want(t, exitOK)
	// Adding 0 writes nothing.
	before = readFile(t, path)
	corestate(t, "incr", path, "runs", "0").want(t, exitOK)
	if readFile(t, path) != before {
		t.Error("incr by 0 rewrote the file")
	}
}

func TestIncrBadField(t *testing.T) {
	for _, tc := range []struct {
		content, field string
	}{
		{`{"x": [1]}`, "x"},                 // an unknown field that is not a number
		{`{"x": true}`, "x"},                //
		{`{"runs": 1}`, "status"},           // a Status field that is not an integer
		{`{"runs": 1}`, "note"},             //
		{`{"runs": 1}`, "Runs"},             // collides with runs
		{`{"x": 9223372036854775807}`, "x"}, // overflow
		{`{"runs": 1}`, "\xff"},             // not UTF-8: would be written as "\ufffd"
	} {
		t.Run(tc.content+"_"+tc.field, func(t *testing.T) {
			path := tempFile(t, "status.json")
			writeFile(t, path, tc.content)
			r := corestate(t, "incr", path, tc.field).want(t, exitBadField)
			if !strings.Contains(r.stderr, "bad field") {
				t.Errorf("stderr does not say bad field: %s", r.stderr)
			}
			if readFile(t, path) != tc.content {
				t.Error("a rejected incr changed the file")
			}
		})
	}
	// A status.Status field whose value its Go type cannot hold makes the
	// document corrupt for every Go reader (status.Load refuses it): so
	// does corestate, and the file is left as it is.
	for _, content := range []string{`{"runs": "3"}`, `{"runs": 1.5}`} {
		path := tempFile(t, "status.json")
		writeFile(t, path, content)
		corestate(t, "incr", path, "runs").want(t, exitCorrupt)
		if readFile(t, path) != content {
			t.Error("a rejected incr changed the file")
		}
	}
	for _, args := range [][]string{
		{"incr", "f"}, {"incr", "f", "runs", "x"}, {"incr", "f", "runs", "1", "2"}, {"incr", "f", "runs", "1.5"},
	} {
		corestate(t, args...).want(t, exitUsage)
	}
}
