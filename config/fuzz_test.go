package config_test

import (
	"bytes"
	"testing"

	"github.com/agentstate/core/config"
)

// FuzzLoad: Load never panics; content it accepts saves, and the saved
// bytes are a fixed point (Load then Save gives the same bytes again).
// Bad input leaves the previous content untouched.
func FuzzLoad(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"a": 1}`, `{"a": {"b": [1, 2.5, "x", null, true]}}`, `{"n": 1e400}`,
		`{"big": 123456789012345678901234567890}`, `{"a.b": 1}`, `[1]`, `{"a": 1} x`, `{"": 1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := config.New()
		if err := c.Set("previous", 1); err != nil {
			t.Fatal(err)
		}
		before := c.Snapshot()
		if err := c.Load(bytes.NewReader(data)); err != nil {
			if c.Snapshot() != before {
				t.Fatalf("failed Load changed the content: %v", err)
			}
			return
		}
		var first bytes.Buffer
		if err := c.Save(&first); err != nil {
			t.Fatalf("Save of loaded content: %v", err)
		}
		c2 := config.New()
		if err := c2.Load(bytes.NewReader(first.Bytes())); err != nil {
			t.Fatalf("Load of saved content: %v\n%s", err, first.Bytes())
		}
		var second bytes.Buffer
		if err := c2.Save(&second); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first.Bytes(), second.Bytes()) {
			t.Fatalf("Save is not a fixed point:\n%s\n%s", first.Bytes(), second.Bytes())
		}
	})
}
