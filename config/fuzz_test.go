package config_test

import (
	"bytes"
	"io"
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
		roundTrip(t, data, (*config.Config).Load, (*config.Config).Save)
	})
}

// roundTrip loads data into a config that holds a previous value. A failed
// load must leave that content alone; accepted content must save, and the
// saved bytes must load and save again to the same bytes. It returns the
// loaded config, or nil if data was refused.
func roundTrip(t *testing.T, data []byte, load func(*config.Config, io.Reader) error, save func(*config.Config, io.Writer) error) *config.Config {
	t.Helper()
	c := config.New()
	if err := c.Set("previous", 1); err != nil {
		t.Fatal(err)
	}
	before := c.Snapshot()
	if err := load(c, bytes.NewReader(data)); err != nil {
		if c.Snapshot() != before {
			t.Fatalf("failed load changed the content: %v", err)
		}
		return nil
	}
	// Lookup and Decode check only the keys they do not find, so every
	// key that loaded content indexes must be one Set accepts.
	for _, k := range c.Snapshot().Keys() {
		if err := config.New().Set(k, 1); err != nil {
			t.Fatalf("loaded content indexes a key that is not one: %v", err)
		}
	}
	var first bytes.Buffer
	if err := save(c, &first); err != nil {
		t.Fatalf("save of loaded content: %v", err)
	}
	c2 := config.New()
	if err := load(c2, bytes.NewReader(first.Bytes())); err != nil {
		t.Fatalf("load of saved content: %v\n%s", err, first.Bytes())
	}
	var second bytes.Buffer
	if err := save(c2, &second); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Fatalf("save is not a fixed point:\n%s\n%s", first.Bytes(), second.Bytes())
	}
	return c
}
