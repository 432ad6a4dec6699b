package status_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentstate/core/status"
)

// Documents that encoding/json reads differently from Python, jq and
// corestate (names that differ only in case, repeated names) or that a
// decode and re-encode would change (invalid UTF-8 and lone surrogates in
// declared fields, in names anywhere) are refused as corrupt by every entry
// point and never rewritten. Before, a Mutate that set only note turned the
// first document into "completed" with runs 7.
func TestAmbiguousDocumentsRefused(t *testing.T) {
	type inner struct {
		A int `json:"a"`
	}
	type nested struct {
		Inner inner          `json:"inner"`
		Tags  map[string]int `json:"tags"`
		List  []inner        `json:"list"`
	}
	for _, tc := range []struct {
		name, doc, at string // at: the text at the reported offset
		nested        bool   // decode as nested instead of status.Status
	}{
		{"case variants", `{"status":"running","runs":1,"Runs":7,"STATUS":"completed"}`, `"Runs"`, false},
		{"case variant alone", `{"Status":"completed"}`, `"Status"`, false},
		{"Unicode case fold", `{"ſtatus":"completed"}`, `"ſtatus"`, false}, // ſ folds to s in encoding/json
		{"duplicate field", `{"status":"queued","status":"completed"}`, `"status":"completed"`, false},
		{"duplicate unknown", `{"status":"queued","x":1,"x":2}`, `"x":2`, false},
		{"invalid UTF-8 in a field", "{\"note\":\"caf\xe9\"}", "\xe9", false},
		{"lone surrogate in a field", `{"note":"a\ud800b"}`, `\ud800b`, false},
		{"lone surrogate in a name", `{"status":"queued","x\udc00":1}`, `\udc00`, false},
		{"case variant nested", `{"inner":{"a":1,"A":2}}`, `"A"`, true},
		{"duplicate in a map", `{"tags":{"k":1,"k":2}}`, `"k":2`, true},
		{"duplicate in a list", `{"list":[{"a":1},{"a":1,"a":2}]}`, `"a":2`, true},
		{"surrogate in a map name", `{"tags":{"\ud800":1}}`, `\ud800`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "status.json")
			if err := os.WriteFile(path, []byte(tc.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			var errs []error
			if tc.nested {
				store := status.NewStore[nested](path)
				_, err := store.Mutate(context.Background(), func(n *nested) error { n.Inner.A++; return nil })
				_, lerr := store.Load(context.Background())
				errs = []error{err, lerr}
			} else {
				_, err := status.Mutate(context.Background(), path, func(s *status.Status) error { s.Note = "x"; return nil })
				_, rerr := status.Load(context.Background(), path)
				errs = []error{err, rerr}
			}
			for _, err := range errs {
				var ce *status.CorruptError
				if !errors.As(err, &ce) {
					t.Fatalf("got %v, want a *CorruptError", err)
				}
				if !strings.HasPrefix(tc.doc[ce.Offset:], tc.at) {
					t.Errorf("offset %d points at %q, want %q (%v)", ce.Offset, tc.doc[ce.Offset:], tc.at, err)
				}
			}
			if b, _ := os.ReadFile(path); string(b) != tc.doc {
				t.Errorf("document rewritten:\n%s", b)
			}
		})
	}
}

// What stays accepted: escapes that decode exactly (a surrogate pair, an
// escaped backslash before "u"), and anything at all inside the values of
// fields that Status does not declare, which Mutate keeps byte for byte.
func TestUnambiguousDocumentsKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	unknown := "\"caf\xe9 \\ud800\""
	doc := `{"status":"running","note":"\ud83d\ude00 \\u d800","x_raw":` + unknown + `,"x_obj":{"k":1,"k":2,"K":3}}`
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := status.Mutate(context.Background(), path, func(s *status.Status) error { s.Runs++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if st.Note != "😀 \\u d800" {
		t.Errorf("note = %q", st.Note)
	}
	b, _ := os.ReadFile(path)
	for _, want := range []string{`"x_raw": ` + unknown, `"x_obj": {"k":1,"k":2,"K":3}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("unknown value not kept byte for byte: want %q in\n%s", want, b)
		}
	}
}
