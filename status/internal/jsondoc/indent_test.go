package jsondoc

import (
	"bytes"
	"encoding/json"
	"testing"
)

var indentSeeds = []string{
	`{}`, `[]`, `{"a":[]}`, `{"a":{}}`, `[1,[2,[3,{}]]]`, `"s"`, `1`, `null`,
	`{"k":"a,b:{c}[d]\"e\\","n":-1.5e+3,"t":true,"z":[{"x":null},{}]}`,
	`{"\u00e9":"\u2028","esc":"\\\\"}`,
}

// checkIndent compares appendIndent with json.Indent on the compact form of
// any valid JSON text (appendIndent's input always comes from encoding/json).
func checkIndent(t *testing.T, data []byte) {
	t.Helper()
	var compact bytes.Buffer
	if err := json.Compact(&compact, data); err != nil {
		return
	}
	var want bytes.Buffer
	if err := json.Indent(&want, compact.Bytes(), "", "  "); err != nil {
		t.Fatalf("json.Indent(%q): %v", compact.Bytes(), err)
	}
	if got := appendIndent(nil, compact.Bytes()); !bytes.Equal(got, want.Bytes()) {
		t.Errorf("appendIndent(%q) =\n%s\nwant\n%s", compact.Bytes(), got, want.Bytes())
	}
}

func TestAppendIndent(t *testing.T) {
	for _, s := range indentSeeds {
		checkIndent(t, []byte(s))
	}
	checkIndent(t, []byte(typicalStatus))
}

// typicalStatus is json.Marshal of a typical status document.
const typicalStatus = `{"status":"running","agent":"claude","repo":"core","org":"agentstate",` +
	`"task":"fix-p4-9-status-lock","branch":"agent/fix-p4-9-status-lock","issue":3,"pid":48211,` +
	`"process_id":"proc-7f3a","started_at":"2026-11-21T09:00:00Z","updated_at":"2026-11-21T09:01:00Z",` +
	`"runs":2,"pr_url":"https://git.example.invalid/agentstate/core/pull/41","note":"waiting on CI",` +
	`"runtime":"docker"}`

func FuzzAppendIndent(f *testing.F) {
	for _, s := range indentSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		appendIndent(nil, data) // never panics, whatever the input
		checkIndent(t, data)
	})
}
