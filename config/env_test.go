package config_test

import (
	"errors"
	"log/slog"
	"net"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentstate/core/config"
)

type mode string

// base returns a config as a file would leave it, plus Go-typed values
// stored by Set.
func base(t *testing.T) *config.Config {
	t.Helper()
	c := config.New()
	if err := c.LoadYAML(strings.NewReader(`
agents:
  dispatch:
    max_workers: 4
    ratio: 0.5
    verbose: false
    timeout: 30s
    queues: [high]
    limits: {cpu: 1}
  maxConns: 10
name: svc
`)); err != nil {
		t.Fatal(err)
	}
	mustSet(t, c, "typed", map[string]any{
		"i": 7, "u8": uint8(1), "f32": float32(1), "d": time.Second, "t": time.Time{},
		"m": mode("slow"), "ss": []string{"a"}, "sm": map[string]string{"k": "v"},
	})
	return c
}

func TestFromEnvNamesAndTypes(t *testing.T) {
	c := base(t)
	env := []string{
		"PATH=/usr/bin", "AGENTSX_NAME=ignored", "AGENTS=ignored", "=C:=C:\\",
		"AGENTS_AGENTS__DISPATCH__MAX_WORKERS=8",
		"AGENTS_AGENTS__DISPATCH__RATIO=0.25",
		"AGENTS_AGENTS__DISPATCH__VERBOSE=true",
		"AGENTS_AGENTS__DISPATCH__TIMEOUT=1m30s",
		"AGENTS_AGENTS__DISPATCH__QUEUES=[\"a\", \"b\"]",
		"AGENTS_AGENTS__DISPATCH__LIMITS={\"cpu\": 4, \"mem\": \"1Gi\"}",
		"AGENTS_AGENTS__MAXCONNS=20",
		"AGENTS_AGENTS__NEW_KEY=42",
		"AGENTS_NAME=other",
		"AGENTS_TYPED__I=-3", "AGENTS_TYPED__U8=255", "AGENTS_TYPED__F32=2.5",
		"AGENTS_TYPED__D=1500000000", "AGENTS_TYPED__T=2026-01-02T03:04:05Z",
		"AGENTS_TYPED__M=fast", "AGENTS_TYPED__SS=[\"x\"]", "AGENTS_TYPED__SM={\"k\": \"w\"}",
		"AGENTS_NEW__SECTION__KEY=v",
	}
	if err := c.FromEnv("AGENTS_", env); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"agents.dispatch.max_workers": int64(8),
		"agents.dispatch.ratio":       0.25,
		"agents.dispatch.verbose":     true,
		"agents.dispatch.timeout":     "1m30s", // was a string in the file
		"agents.dispatch.queues":      []any{"a", "b"},
		"agents.dispatch.limits":      map[string]any{"cpu": int64(4), "mem": "1Gi"},
		"agents.maxConns":             int64(20), // matched case-insensitively
		"agents.new_key":              "42",      // new: a string
		"name":                        "other",
		"typed.i":                     -3,
		"typed.u8":                    uint8(255),
		"typed.f32":                   float32(2.5),
		"typed.d":                     1500 * time.Millisecond,
		"typed.t":                     time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		"typed.m":                     mode("fast"),
		"typed.ss":                    []any{"x"},
		"typed.sm":                    map[string]any{"k": "w"},
		"new.section.key":             "v",
	}
	for key, w := range want {
		if got, _ := c.Snapshot().Get(key); !reflect.DeepEqual(got, w) {
			t.Errorf("%s = %#v, want %#v", key, got, w)
		}
	}
	if c.Snapshot().Has("agents.maxconns") || c.Snapshot().Has("agentsx") {
		t.Error("an override created a key it should have matched or ignored")
	}
	if c.Snapshot().Duration("agents.dispatch.timeout") != 90*time.Second || c.Snapshot().Int("agents.new_key") != 42 {
		t.Error("the typed getters do not read the overrides")
	}
}

// Every refused override names its variable, and a refused call applies
// none of its overrides, not even the valid ones.
func TestFromEnvErrorsChangeNothing(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want string
		is   error
	}{
		{[]string{"AGENTS_AGENTS__DISPATCH__MAX_WORKERS=eight"}, "env AGENTS_AGENTS__DISPATCH__MAX_WORKERS: at agents.dispatch.max_workers: cannot convert: want int64", config.ErrConversion},
		{[]string{"AGENTS_AGENTS__DISPATCH__VERBOSE=maybe"}, "want bool", config.ErrConversion},
		{[]string{"AGENTS_TYPED__U8=256"}, "want uint8", config.ErrConversion},
		{[]string{"AGENTS_TYPED__D=soon"}, "want a duration", config.ErrConversion},
		{[]string{"AGENTS_TYPED__T=today"}, "RFC 3339", config.ErrConversion},
		// Values that parse but that Set would refuse, as Save cannot write them.
		{[]string{"AGENTS_TYPED__F32=NaN"}, "env AGENTS_TYPED__F32: at typed.f32: unsupported value: NaN is not a finite number", config.ErrUnsupported},
		{[]string{"AGENTS_TYPED__F32=-Inf"}, "-Inf is not a finite number", config.ErrUnsupported},
		{[]string{"AGENTS_TYPED__T=2026-01-02T03:04:05+24:00"}, "timezone hour outside of range", config.ErrUnsupported},
		{[]string{"AGENTS_AGENTS__DISPATCH__QUEUES=high"}, "want JSON: an array", config.ErrConversion},
		{[]string{"AGENTS_AGENTS__DISPATCH__LIMITS=[1]"}, "want JSON: an object", config.ErrConversion},
		{[]string{"AGENTS_AGENTS__DISPATCH__LIMITS={\"a.b\": 1}"}, "contains '.'", config.ErrUnsupported},
		{[]string{"AGENTS_NAME__X=1"}, `"name" holds a string`, config.ErrNotSection},
		{[]string{"AGENTS_AGENTS____X=1"}, "empty segment", config.ErrInvalidKey},
		{[]string{"AGENTS_A.B=1"}, "contains '.'", config.ErrInvalidKey},
		{[]string{"AGENTS_NAME=a", "AGENTS_name=b"}, `names the key "name" as`, config.ErrInvalidKey},
		{[]string{"AGENTS_CASE__Ab=1"}, "Ab matches several keys: AB, ab", config.ErrInvalidKey},
		{[]string{"AGENTS_" + strings.Repeat("A__", 256) + "A=1"}, "more than 256 segments", config.ErrInvalidKey},
	} {
		c := base(t)
		mustSet(t, c, "case", map[string]any{"ab": 1, "AB": 2})
		before := c.Snapshot()
		env := append([]string{"AGENTS_AGENTS__DISPATCH__RATIO=0.9"}, tc.env...)
		err := c.FromEnv("AGENTS", env)
		if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "config: env AGENTS_") {
			t.Errorf("FromEnv(%.60q) = %v, want an env error matching %v containing %q", tc.env, err, tc.is, tc.want)
		}
		if c.Snapshot() != before {
			t.Errorf("FromEnv(%.60q) failed but changed the content", tc.env)
		}
	}
	if err := config.New().FromEnv("", []string{"A=1"}); !errors.Is(err, config.ErrInvalidKey) {
		t.Errorf("FromEnv with an empty prefix = %v", err)
	}
}

// Overrides win over the file they follow, a section override and a key
// inside it both apply whatever their order in environ, and the whole call
// is one change.
func TestFromEnvPrecedenceAndOneChange(t *testing.T) {
	for _, env := range [][]string{
		{"AGENTS_DB={\"host\": \"a\", \"port\": 1}", "AGENTS_DB__PORT=5433"},
		{"AGENTS_DB__PORT=5433", "AGENTS_DB={\"host\": \"a\", \"port\": 1}"},
	} {
		c := config.New()
		if err := c.LoadYAML(strings.NewReader("db: {host: file, port: 5432}\nkeep: 1\n")); err != nil {
			t.Fatal(err)
		}
		changes := 0
		cancel := c.OnChange(func(config.Change) { changes++ })
		if err := c.FromEnv("AGENTS", env); err != nil {
			t.Fatal(err)
		}
		cancel()
		if c.Snapshot().String("db.host") != "a" || c.Snapshot().Int64("db.port") != 5433 || c.Snapshot().Int("keep") != 1 || changes != 1 {
			t.Errorf("env %q: host=%q port=%d keep=%d changes=%d", env, c.Snapshot().String("db.host"), c.Snapshot().Int64("db.port"), c.Snapshot().Int("keep"), changes)
		}
		if err := c.FromEnv("AGENTS", nil); err != nil || c.Snapshot().Version() != 2 {
			t.Errorf("an empty environment published a change: %v", err)
		}
	}
}

// The real process environment, through os.Environ (t.Setenv: this test
// is not parallel).
func TestFromEnvProcessEnvironment(t *testing.T) {
	t.Setenv("CORE_CONFIG_TEST_DISPATCH__MAX", "9")
	c := config.New()
	mustSet(t, c, "dispatch.max", int64(1))
	if err := c.FromEnv("CORE_CONFIG_TEST", os.Environ()); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.Snapshot().Get("dispatch.max"); got != int64(9) {
		t.Fatalf("dispatch.max = %#v", got)
	}
}

// color is a string type that checks its text.
type color string

func (c *color) UnmarshalText(b []byte) error {
	if s := string(b); s != "red" && s != "blue" {
		return errors.New("unknown color " + strconv.Quote(s))
	}
	*c = color(b)
	return nil
}

// A value whose type parses text (slog.Level, net.IP) takes an override as
// Decode takes a string, through UnmarshalText, and only so.
func TestFromEnvTextUnmarshaler(t *testing.T) {
	c := config.New()
	mustSet(t, c, "log.level", slog.LevelInfo)
	mustSet(t, c, "net.ip", net.IPv4(127, 0, 0, 1))
	mustSet(t, c, "ui.color", color("red"))
	for _, tc := range []struct {
		env  string
		key  string
		want any
	}{
		{"APP_LOG__LEVEL=debug", "log.level", slog.LevelDebug},
		{"APP_LOG__LEVEL=WARN+1", "log.level", slog.LevelWarn + 1},
		{"APP_LOG__LEVEL=DEBUG-2", "log.level", slog.LevelDebug - 2},
		{"APP_NET__IP=10.0.0.1", "net.ip", net.ParseIP("10.0.0.1")},
		{"APP_UI__COLOR=blue", "ui.color", color("blue")},
	} {
		if err := c.FromEnv("APP", []string{tc.env}); err != nil {
			t.Fatalf("FromEnv(%s): %v", tc.env, err)
		}
		if got, _ := c.Snapshot().Get(tc.key); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("FromEnv(%s): %s = %#v, want %#v", tc.env, tc.key, got, tc.want)
		}
	}
	// The type's own rules are not bypassed by its kind: a number its text
	// does not name, a string type that refuses the text, a list type that
	// refuses it (it does not become a list of another type).
	for env, want := range map[string]string{
		"APP_LOG__LEVEL=loud":  "env APP_LOG__LEVEL: at log.level: cannot convert: want slog.Level",
		"APP_LOG__LEVEL=-2":    "env APP_LOG__LEVEL: at log.level: cannot convert: want slog.Level",
		"APP_UI__COLOR=purple": `env APP_UI__COLOR: at ui.color: cannot convert: want config_test.color: unknown color "purple"`,
		"APP_NET__IP=[1,2]":    "env APP_NET__IP: at net.ip: cannot convert: want net.IP",
	} {
		err := c.FromEnv("APP", []string{env})
		if !errors.Is(err, config.ErrConversion) || !strings.Contains(err.Error(), want) {
			t.Errorf("FromEnv(%s) = %v, want an error containing %q", env, err, want)
		}
	}
}
