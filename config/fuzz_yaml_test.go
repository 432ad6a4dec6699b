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
		agentsYAML, dispatchYAML, "a: 1\n", "a: {b: [1, 2.5, x, ~, true]}\n", "a: .inf\n", "80: x\n",
		"a: &x {b: 1}\nc: *x\n", "d: {<<: {x: 1}, y: 2}\n", "t: 2026-01-02\n", "s: '8080'\n", "- 1\n", "a: 1\n---\nb: 2\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := config.New()
		if err := c.Set("previous", 1); err != nil {
			t.Fatal(err)
		}
		before := c.Snapshot()
		if err := c.LoadYAML(bytes.NewReader(data)); err != nil {
			if c.Snapshot() != before {
				t.Fatalf("failed LoadYAML changed the content: %v", err)
			}
			return
		}
		var first bytes.Buffer
		if err := c.SaveYAML(&first); err != nil {
			t.Fatalf("SaveYAML of loaded content: %v", err)
		}
		if err := c.Save(new(bytes.Buffer)); err != nil {
			t.Fatalf("Save of loaded content: %v", err)
		}
		c2 := config.New()
		if err := c2.LoadYAML(bytes.NewReader(first.Bytes())); err != nil {
			t.Fatalf("LoadYAML of saved content: %v\n%s", err, first.Bytes())
		}
		var second bytes.Buffer
		if err := c2.SaveYAML(&second); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first.Bytes(), second.Bytes()) {
			t.Fatalf("SaveYAML is not a fixed point:\n%s\n%s", first.Bytes(), second.Bytes())
		}
	})
}
