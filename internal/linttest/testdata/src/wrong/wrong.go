// Package wrong has want comments that do not match what the analyzer
// finds: a fact that does not match its want, a finding without a want,
// and a want without a finding.
package wrong

import (
	"encoding/json"
	"os"
)

func load(p string) map[string]any { // want load:"writes"
	data, _ := os.ReadFile(p)
	var m map[string]any
	_ = json.Unmarshal(data, &m)
	return m
}

func bump(p string) { // want bump:"writes"
	out, _ := json.Marshal(load(p))
	_ = os.WriteFile(p+".x", out, 0o644) // want "read-modify-write"
}

func reset(p string) {
	out, _ := json.Marshal(load(p))
	_ = os.WriteFile(p, out, 0o644)
}
