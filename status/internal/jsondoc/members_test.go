package jsondoc

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/agentstate/core/internal/deepdiff"
	"github.com/agentstate/core/internal/jsontext"
)

// checkMembers compares members with encoding/json's own view of a valid
// object (a map of raw values; the last duplicate wins in both).
func checkMembers(t *testing.T, data []byte) {
	t.Helper()
	var want map[string]json.RawMessage
	if err := json.Unmarshal(data, &want); err != nil || want == nil {
		return // not a JSON object: decode rejects it before members runs
	}
	got := map[string]json.RawMessage{}
	err := members(data, func(name string, value []byte) error { got[name] = value; return nil })
	var bad *jsontext.Error
	if errors.As(err, &bad) && jsontext.CheckStrings(data) != nil {
		return // a name that decoding would change: refused, by design
	}
	if err != nil {
		t.Fatalf("members(%q): %v", data, err)
	}
	if diff := deepdiff.Diff(want, got); diff != "" {
		t.Errorf("members(%q) (-encoding/json +members):\n%s", data, diff)
	}
}

var memberSeeds = []string{
	`{}`,
	` { } `,
	`{"a":1}`,
	"{\n  \"a\" : [1, {\"b\": \"}\"}, \"]\"] ,\"c\":null,\"d\":true}",
	`{"esc\"aped":"v\\\"x","\u00e9":-1.5e+3,"a":{"deep":[[[]]]}}`,
	`{"dup":1,"dup":2}`,
	`{"s":"with \\ backslash","n":0}`,
	"{\"bad utf8 \xff\":1}",
}

func TestMembers(t *testing.T) {
	for _, s := range memberSeeds {
		checkMembers(t, []byte(s))
	}
}

func FuzzMembers(f *testing.F) {
	for _, s := range memberSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Never panics, whatever the input.
		members(data, func(string, []byte) error { return nil })
		checkMembers(t, data)
	})
}
