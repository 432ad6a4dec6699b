package main

import (
	"strings"
	"testing"
)

// set and incr keep every value they do not change byte for byte, as
// status.Mutate keeps unknown fields, so the file grows with what is
// written, not with the nesting depth of what was there: a 20 KB document
// holding a 9,990-deep array used to become a 199.6 MB file (every level
// re-indented), and its printout as large.
func TestSetKeepsValuesVerbatim(t *testing.T) {
	const depth = 9990
	deep := strings.Repeat("[", depth) + strings.Repeat("]", depth)
	odd := `{"keep":[1, 2.50,"three"],  "nested": {"a": null}}`
	content := `{"status":"running","runs":1,"x_deep":` + deep + `,"x_odd":` + odd + "}"
	path := tempFile(t, "status.json")
	writeFile(t, path, content)
	for _, args := range [][]string{{"set", path, "note=x"}, {"incr", path, "runs"}, {"get", path}} {
		r := corestate(t, args...).want(t, exitOK)
		file := readFile(t, path)
		for _, out := range []string{file, r.stdout} {
			if len(out) > len(content)+200 {
				t.Fatalf("%s: %d bytes from a %d-byte document", args[0], len(out), len(content))
			}
			if !strings.Contains(out, `"x_deep": `+deep+",\n") || !strings.Contains(out, `"x_odd": `+odd+"\n") {
				t.Fatalf("%s: unknown values not kept byte for byte:\n%.300s", args[0], out)
			}
		}
	}
}

// corestate reads a document as status.Load does: one that Go's decoder
// reads differently from Python, jq and corestate (a case variant of a
// field, a repeated name) is corrupt, so a guard cannot pass on what the
// file seems to say while Go agents see something else. It used to set
// note here, on a document that status.Load sees as "completed".
func TestGuardAgreesWithGoReaders(t *testing.T) {
	for _, content := range []string{
		`{"status":"queued","runs":1,"Runs":7,"STATUS":"completed"}`,
		`{"status":"completed","status":"queued"}`,
		`{"status":"queued","note":"lone \udc00"}`,
		"{\"status\":\"queued\",\"x\\ud800\":1}",
	} {
		path := tempFile(t, "status.json")
		writeFile(t, path, content)
		r := corestate(t, "set", "--if", "status=queued", path, "note=claimed").want(t, exitCorrupt)
		if !strings.Contains(r.stderr, "corrupt") {
			t.Errorf("stderr does not say corrupt: %s", r.stderr)
		}
		corestate(t, "get", path).want(t, exitCorrupt)
		if got := readFile(t, path); got != content {
			t.Errorf("the document changed: %s", got)
		}
	}
}
