package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentstate/core/config"
)

// DecodeAll decodes the whole configuration, as viper's and koanf's
// Unmarshal do; Decode of "" (or any invalid key) is the invalid-key error
// its doc promises, not "not found".
func TestDecodeAll(t *testing.T) {
	c := loadDispatch(t)
	mustSet(t, c, "db", map[string]any{"host": "a", "port": 5432})
	type DB struct {
		Host string
		Port int
	}
	type All struct {
		Agents struct {
			Dispatch Dispatch `config:"dispatch"`
		}
		DB DB `config:"db"`
	}
	s := c.Snapshot()
	all, err := config.DecodeAll[All](s)
	if err != nil {
		t.Fatal(err)
	}
	if all.DB != (DB{"a", 5432}) || all.Agents.Dispatch.MaxWorkers != 8 || all.Agents.Dispatch.Queues[1] != "low" {
		t.Errorf("DecodeAll: %+v", all)
	}
	m, err := config.DecodeAll[map[string]any](s)
	if err != nil || m["db"].(map[string]any)["port"] != 5432 {
		t.Errorf("DecodeAll into a map: %v, %v", m, err)
	}
	// A copy: changing the result changes nothing stored.
	m["db"].(map[string]any)["port"] = 1
	if c.Snapshot().Int("db.port") != 5432 {
		t.Error("DecodeAll shares state with the config")
	}
	// Errors name the path from the top.
	mustSet(t, c, "db.port", "high")
	if _, err := config.DecodeAll[All](c.Snapshot()); !errors.Is(err, config.ErrConversion) || !strings.Contains(err.Error(), "config: decode: at db.port: cannot convert") {
		t.Errorf("DecodeAll with a bad port: %v", err)
	}
	if all, err := config.DecodeAll[All](config.New().Snapshot()); err != nil || all.DB != (DB{}) {
		t.Errorf("DecodeAll of an empty config: %+v, %v", all, err)
	}
	if m, err := config.DecodeAll[map[string]any](new(config.Snapshot)); err != nil || m == nil || len(m) != 0 {
		t.Errorf("DecodeAll of a zero Snapshot into a map: %#v, %v; want an empty map", m, err)
	}
	if _, err := config.DecodeAll[All](nil); !errors.Is(err, config.ErrNotFound) {
		t.Errorf("DecodeAll(nil): %v", err)
	}
	for _, key := range []string{"", "a..b", ".a", strings.Repeat("a.", 256) + "a"} {
		_, err := config.Decode[All](c.Snapshot(), key)
		if !errors.Is(err, config.ErrInvalidKey) {
			t.Errorf("Decode(%q) = %v, want ErrInvalidKey", key, err)
		}
		if err := c.Snapshot().Lookup(key, new(All)); !errors.Is(err, config.ErrInvalidKey) {
			t.Errorf("Lookup(%q) = %v, want ErrInvalidKey", key, err)
		}
	}
	// CONTROL: a valid key that holds nothing is not found.
	if _, err := config.Decode[All](c.Snapshot(), "nothing.here"); !errors.Is(err, config.ErrNotFound) {
		t.Errorf("Decode of a missing key: %v", err)
	}
	if err := c.Snapshot().Lookup("nothing.here", new(All)); !errors.Is(err, config.ErrNotFound) {
		t.Errorf("Lookup of a missing key: %v", err)
	}
}

// What JSON and YAML files and the environment must not bring in: a
// number beyond float64 (YAML used to load 1e400 as the string "1e400",
// which JSON refuses), bytes that are not UTF-8 and lone surrogates
// (encoding/json read them as U+FFFD), and NUL. Each error names the key;
// CONTROL: the same documents with ordinary values load.
func TestLoadRefusesStringsOtherProgramsReadDifferently(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, json, fixed string
		want                    string
	}{
		{name: "1e400", yaml: "db:\n  ratio: 1e400\n", fixed: "db:\n  ratio: 1e300\n", want: "at db.ratio: unsupported value: line 2: number 1e400 is out of the float64 range"},
		{name: "-1e400", yaml: "db: {ratio: -1_0e400}\n", fixed: "db: {ratio: '-1_0e400'}\n", want: "at db.ratio: unsupported value: line 1: number -1_0e400 is out of the float64 range"},
		{name: "1e400 JSON", json: `{"db": {"ratio": 1e400}}`, fixed: `{"db": {"ratio": "1e400"}}`, want: "at db.ratio: unsupported value: number 1e400 is out of the float64 range"},
		{name: "NUL YAML", yaml: "db:\n  host: \"a\\0b\"\n", fixed: "db:\n  host: \"a\\tb\"\n", want: "at db.host: unsupported value: line 2: string holds a NUL character"},
		{name: "NUL JSON", json: `{"db": {"host": "a\u0000b"}}`, fixed: `{"db": {"host": "a\u0009b"}}`, want: "at db.host: unsupported value: string holds a NUL character"},
		{name: "NUL key", json: `{"db": {"h\u0000": 1}}`, fixed: `{"db": {"h": 1}}`, want: `at db: unsupported value: key "h\x00": string holds a NUL character`},
		{name: "not UTF-8", json: "{\"db\": {\"hosts\": [\"a\", \"b\xffc\"]}}", fixed: `{"db": {"hosts": ["a", "bc"]}}`, want: "at db.hosts[1]: unsupported value: string holds invalid UTF-8"},
		{name: "lone surrogate", json: `{"db": {"host": "\ud800"}}`, fixed: `{"db": {"host": "\ud83d\ude00"}}`, want: `at db.host: unsupported value: string holds lone surrogate \ud800`},
		{name: "key not UTF-8", json: "{\"db\": {\"h\xff\": 1}}", fixed: `{"db": {"h": 1}}`, want: "at db: unsupported value: a key holds invalid UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			load := func(c *config.Config, s string) error {
				if tc.yaml != "" {
					return c.LoadYAML(strings.NewReader(s))
				}
				return c.Load(strings.NewReader(s))
			}
			c := config.New()
			mustSet(t, c, "keep", 1)
			before := c.Snapshot()
			err := load(c, tc.yaml+tc.json)
			if !errors.Is(err, config.ErrUnsupported) || !strings.Contains(err.Error(), "config: load: "+tc.want) {
				t.Errorf("load = %v\nwant an ErrUnsupported load error containing %q", err, tc.want)
			}
			if c.Snapshot() != before {
				t.Error("a refused load changed the content")
			}
			if err := load(c, tc.fixed); err != nil {
				t.Errorf("CONTROL: the fixed document %q: %v", tc.fixed, err)
			}
		})
	}
}

// Environment values obey the same rule, with the variable and the key
// named; CONTROL: ordinary values apply.
func TestFromEnvRefusesStringsOtherProgramsReadDifferently(t *testing.T) {
	for env, want := range map[string]string{
		"AGENTS_DB__HOST=a\x00b":             "config: env AGENTS_DB__HOST: at db.host: unsupported value: string holds a NUL character",
		"AGENTS_DB__HOST=a\xffb":             "config: env AGENTS_DB__HOST: at db.host: unsupported value: string holds invalid UTF-8",
		"AGENTS_NEW=\xff":                    "config: env AGENTS_NEW: at new: unsupported value: string holds invalid UTF-8",
		`AGENTS_DB={"host": "\ud800"}`:       `config: env AGENTS_DB: at db: unsupported value: at host: string holds lone surrogate \ud800`,
		`AGENTS_DB={"host": "a\u0000b"}`:     "config: env AGENTS_DB: at db: unsupported value: at host: string holds a NUL character",
		`AGENTS_LIST=["a", "\udc00", 1]`:     `at list: unsupported value: at [1]: string holds lone surrogate \udc00`,
		"AGENTS_DB__PORT=1\x00":              "config: env AGENTS_DB__PORT: at db.port: unsupported value: string holds a NUL character",
		`AGENTS_DB={"host": "a", "port": 1}`: "",
	} {
		c := config.New()
		mustSet(t, c, "db", map[string]any{"host": "x", "port": 5432})
		mustSet(t, c, "list", []any{"a"})
		before := c.Snapshot()
		err := c.FromEnv("AGENTS", []string{env})
		if want == "" {
			if err != nil || c.Snapshot().String("db.host") != "a" {
				t.Errorf("CONTROL: FromEnv(%q) = %v, db.host %q", env, err, c.Snapshot().String("db.host"))
			}
			continue
		}
		if !errors.Is(err, config.ErrUnsupported) || !strings.Contains(err.Error(), want) {
			t.Errorf("FromEnv(%q) = %v\nwant an ErrUnsupported error containing %q", env, err, want)
		}
		if c.Snapshot() != before {
			t.Errorf("FromEnv(%q) failed but changed the content", env)
		}
	}
}
