package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentstate/core/config"
)

// key returns a dotted key of n segments.
func key(n int) string { return strings.TrimSuffix(strings.Repeat("a.", n), ".") }

// nest returns v inside n levels of sections.
func nest(n int, v any) any {
	for range n {
		v = map[string]any{"a": v}
	}
	return v
}

// No stored key has more than 256 segments, whether the depth comes from
// the key, the value or both. Were a 40,000-segment key stored, the dotted
// index (every prefix) would make that Set and every later one quadratic.
func TestDepthLimitCoversDottedKeys(t *testing.T) {
	c := config.New()
	for _, k := range []string{key(257), key(40000)} {
		if err := c.Set(k, 1); !errors.Is(err, config.ErrInvalidKey) || !strings.Contains(err.Error(), "more than 256 segments") {
			t.Fatalf("Set(%d-segment key) = %.200v", strings.Count(k, ".")+1, err)
		}
		if c.Delete(k) || c.Snapshot().Has(k) {
			t.Fatal("a refused key is visible")
		}
	}
	if len(c.Snapshot().Keys()) != 0 {
		t.Fatal("a refused Set stored something")
	}
	// The boundary: 256 segments in all is fine, however they are split
	// between key and value; 257 is not.
	mustSet(t, c, key(256), 1)
	mustSet(t, c, "b", nest(255, 1))
	mustSet(t, c, "c."+key(200), nest(55, 1))
	for k, v := range map[string]any{
		"d":             nest(256, 1),
		"e." + key(200): nest(56, 1),
		key(256):        map[string]any{"x": 1},
		"f":             nest(255, []any{1}), // a non-empty list is a level too
	} {
		if err := c.Set(k, v); !errors.Is(err, config.ErrUnsupported) || !strings.Contains(err.Error(), "nested deeper than 256 levels") {
			t.Errorf("Set(%.20s…, too deep) = %.200v", k, err)
		}
	}
	for _, k := range c.Snapshot().Keys() {
		if n := strings.Count(k, ".") + 1; n > 256 {
			t.Fatalf("stored key with %d segments", n)
		}
	}
	if c.Snapshot().Int(key(256)) != 1 || c.Snapshot().Int("b."+key(255)) != 1 || c.Snapshot().Int("c."+key(200)+"."+key(55)) != 1 {
		t.Fatal("values at the limit are not readable")
	}
}

func TestLoadDepthLimit(t *testing.T) {
	deep := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	c := config.New()
	if err := c.Load(strings.NewReader(deep(256))); err != nil {
		t.Fatalf("256 levels: %v", err)
	}
	err := c.Load(strings.NewReader(deep(257)))
	if !errors.Is(err, config.ErrUnsupported) || !strings.Contains(err.Error(), "nested deeper than 256 levels") {
		t.Fatalf("257 levels: %.200v", err)
	}
	if err := c.Load(strings.NewReader(deep(9000))); err == nil {
		t.Fatal("9000 levels accepted")
	}
}
