package config_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentstate/core/config"
)

const agentsYAML = `# agents.yaml
defaults: &defaults
  timeout: 30s
  retries: 3
agents:
  dispatch:
    <<: *defaults
    max_workers: 8
    ratio: 0.75
    big: 18446744073709551615
    hex: 0x1F
    sep: 1_000
    since: 2026-01-02
    port: "8080"
    enabled: true
    owner: ~
    queues: [high, low]
    limits: {cpu: 2, mem: 512Mi}
`

// The same content as agentsYAML, merge key expanded, in JSON.
const agentsJSON = `{
  "defaults": {"timeout": "30s", "retries": 3},
  "agents": {"dispatch": {
    "timeout": "30s", "retries": 3, "max_workers": 8, "ratio": 0.75,
    "big": 18446744073709551615, "hex": 31, "sep": 1000, "since": "2026-01-02",
    "port": "8080", "enabled": true, "owner": null,
    "queues": ["high", "low"], "limits": {"cpu": 2, "mem": "512Mi"}
  }}
}`

// YAML and JSON of the same configuration load into the same values:
// integers int64, timestamps the strings they were written as.
func TestLoadYAMLMatchesJSON(t *testing.T) {
	y, j := config.New(), config.New()
	if err := y.LoadYAML(strings.NewReader(agentsYAML)); err != nil {
		t.Fatal(err)
	}
	if err := j.Load(strings.NewReader(agentsJSON)); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(y.Snapshot().All(), j.Snapshot().All()) {
		t.Fatalf("YAML and JSON differ:\nYAML %#v\nJSON %#v", y.Snapshot().All(), j.Snapshot().All())
	}
	for key, want := range map[string]any{
		"agents.dispatch.max_workers": int64(8),
		"agents.dispatch.retries":     int64(3),
		"agents.dispatch.hex":         int64(31),
		"agents.dispatch.big":         1.8446744073709552e19,
		"agents.dispatch.since":       "2026-01-02",
		"agents.dispatch.port":        "8080",
	} {
		if got, _ := y.Snapshot().Get(key); got != want {
			t.Errorf("%s = %#v (%T), want %#v (%T)", key, got, got, want, want)
		}
	}
}

func TestLoadYAMLRefusesWhatConfigCannotHold(t *testing.T) {
	for in, want := range map[string]string{
		"":                              "empty YAML document",
		"- 1\n":                         "want a mapping",
		"a: 1\n---\nb: 2\n":             "more than one YAML document",
		"a:\n  80: http\n":              `line 2: mapping key "80" is a YAML !!int, not a string`,
		"a:\n  true: x\n":               `mapping key "true" is a YAML !!bool`,
		"? [1, 2]\n: x\n":               "is a YAML !!seq, not a string",
		"a: .inf\n":                     "at a: unsupported value: +Inf is not a finite number",
		"a:\n  b: [1, .nan]\n":          "at a.b[1]",
		"a: !!binary aGVsbG8=\n":        "line 1: YAML !!binary values are not supported",
		"a: !vault secret\n":            "YAML !vault values are not supported",
		"a.b: 1\n":                      "contains '.'",
		"s:\n  \"\": 1\n":               "empty key inside a section",
		"a: 1\na: 2\n":                  `mapping key "a" already defined`,
		"a: [1\n":                       "yaml:",
		"a: &x [*x]\n":                  "contains itself",
		"a: " + nested(257) + "\n":      "nested deeper than 256 levels",
		"a:\n  - " + nested(256) + "\n": "nested deeper than 256 levels",
	} {
		c := config.New()
		mustSet(t, c, "keep", 1)
		before := c.Snapshot()
		err := c.LoadYAML(strings.NewReader(in))
		var ce *config.Error
		if !errors.As(err, &ce) || ce.Op != "load" || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadYAML(%.40q) = %v, want a load *Error containing %q", in, err, want)
		}
		if c.Snapshot() != before {
			t.Errorf("LoadYAML(%.40q) changed the content", in)
		}
	}
	c := config.New()
	if err := c.LoadYAML(strings.NewReader("a: " + nested(255) + "\n")); err != nil {
		t.Fatalf("255 levels below a key (256 in all) refused: %v", err)
	}
}

// nested returns a flow mapping n levels deep: {a: {a: ... 1}}.
func nested(n int) string {
	return strings.Repeat("{a: ", n) + "1" + strings.Repeat("}", n)
}

// A "billion laughs": nine levels of ten aliases each would expand to 10^9
// strings. It is refused, quickly and without the memory.
func TestLoadYAMLRefusesAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [lol]\n")
	for i := 1; i <= 9; i++ {
		b.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	err := config.New().LoadYAML(strings.NewReader(b.String()))
	if err == nil || !strings.Contains(err.Error(), "excessive aliasing") {
		t.Fatalf("alias bomb: %v", err)
	}
}

// SaveYAML writes what LoadYAML reads back unchanged, deterministically,
// quoting strings that would read back as other types.
func TestSaveYAMLRoundTrips(t *testing.T) {
	c := config.New()
	if err := c.LoadYAML(strings.NewReader(agentsYAML)); err != nil {
		t.Fatal(err)
	}
	mustSet(t, c, "tricky", map[string]any{"n": "8080", "b": "true", "d": "2026-01-02", "null": "~", "e": "", "ml": "a\nb: c"})
	var first bytes.Buffer
	if err := c.SaveYAML(&first); err != nil {
		t.Fatal(err)
	}
	for _, quoted := range []string{`"n": "8080"`, `b: "true"`, `d: "2026-01-02"`, `"null": "~"`} {
		if !strings.Contains(first.String(), quoted) {
			t.Errorf("SaveYAML output lacks %s:\n%s", quoted, first.String())
		}
	}
	c2 := config.New()
	if err := c2.LoadYAML(bytes.NewReader(first.Bytes())); err != nil {
		t.Fatalf("%v\n%s", err, first.String())
	}
	if !reflect.DeepEqual(c.Snapshot().All(), c2.Snapshot().All()) {
		t.Fatalf("round trip changed the content:\n%#v\n%#v", c.Snapshot().All(), c2.Snapshot().All())
	}
	var second bytes.Buffer
	if err := c2.SaveYAML(&second); err != nil || second.String() != first.String() {
		t.Fatalf("SaveYAML is not deterministic (%v):\n%s\n%s", err, first.String(), second.String())
	}
	if err := c.SaveYAML(nil); err == nil {
		t.Fatal("SaveYAML(nil) succeeded")
	}
	if err := c.LoadYAML(nil); err == nil {
		t.Fatal("LoadYAML(nil) succeeded")
	}
}

// LoadFile and SaveFile choose the format by extension.
func TestFilesChooseFormatByExtension(t *testing.T) {
	dir := t.TempDir()
	c := config.New()
	mustSet(t, c, "agents", map[string]any{"dispatch": map[string]any{"max": 8}})
	for _, name := range []string{"a.yaml", "b.YML", "c.json", "d.conf"} {
		path := filepath.Join(dir, name)
		if err := c.SaveFile(path, 0o600); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		wantYAML := strings.HasSuffix(strings.ToLower(name), "ml")
		if gotYAML := !bytes.HasPrefix(data, []byte("{")); gotYAML != wantYAML {
			t.Errorf("%s written as YAML=%v, want %v:\n%s", name, gotYAML, wantYAML, data)
		}
		c2 := config.New()
		if err := c2.LoadFile(path); err != nil || c2.Snapshot().Int64("agents.dispatch.max") != 8 {
			t.Errorf("LoadFile(%s) = %v, max = %d", name, err, c2.Snapshot().Int64("agents.dispatch.max"))
		}
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("agents:\n  1: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := c.LoadFile(bad)
	if err == nil || !strings.Contains(err.Error(), "config: load "+bad+": at agents: ") || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("LoadFile(bad.yaml) = %v, want the file, the key and the line", err)
	}
	if err := c.LoadFile(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("LoadFile(a directory) = %v", err)
	}
}

// Whole floats are written with a fraction in both formats, so that they
// load back as float64, not int64: Save then Load is exact for everything
// Load produces.
func TestSaveKeepsWholeFloats(t *testing.T) {
	in := map[string]any{
		"three": 3.0, "big": 5e18, "bigger": 2e19, "huge": 1e21, "neg": -0.0, "frac": 2.5,
		"int": int64(3), "list": []any{1.0, int64(1)}, "sec": map[string]any{"f": 100.0},
	}
	c := config.New()
	mustSet(t, c, "v", in)
	for _, format := range []struct {
		save func(*config.Config, *bytes.Buffer) error
		load func(*config.Config, *bytes.Buffer) error
	}{
		{func(c *config.Config, b *bytes.Buffer) error { return c.Save(b) }, func(c *config.Config, b *bytes.Buffer) error { return c.Load(b) }},
		{func(c *config.Config, b *bytes.Buffer) error { return c.SaveYAML(b) }, func(c *config.Config, b *bytes.Buffer) error { return c.LoadYAML(b) }},
	} {
		var buf bytes.Buffer
		if err := format.save(c, &buf); err != nil {
			t.Fatal(err)
		}
		text := buf.String()
		c2 := config.New()
		if err := format.load(c2, &buf); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(c2.Snapshot().All(), c.Snapshot().All()) {
			t.Errorf("round trip changed types:\n%s\n got %#v\nwant %#v", text, c2.Snapshot().All(), c.Snapshot().All())
		}
	}
}
