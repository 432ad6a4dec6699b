package config_test

import (
	"bytes"
	"testing"

	"github.com/agentstate/core/config"
)

// FuzzLoadYAML: LoadYAML never panics and leaves the content alone when it
// fails; what it accepts, SaveYAML writes and LoadYAML reads back to the
// same bytes, and Save (JSON) can write too.
func FuzzLoadYAML(f *testing.F) {
	for _, s := range []string{
		agentsYAML, dispatchYAML, "a: 1\n", "a: {b: [1, 2.5, x, ~, true]}\n", "a: .inf\n", "80: x\n", "f: 3.0\n",
		"a: &x {b: 1}\nc: *x\n", "d: {<<: {x: 1}, y: 2}\n", "t: 2026-01-02\n", "s: '8080'\n", "- 1\n", "a: 1\n---\nb: 2\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := roundTrip(t, data, (*config.Config).LoadYAML, (*config.Config).SaveYAML)
		if c == nil {
			return
		}
		if err := c.Save(new(bytes.Buffer)); err != nil {
			t.Fatalf("Save of loaded content: %v", err)
		}
	})
}
