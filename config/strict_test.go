package config_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentstate/core/config"
)

// fleet is a configuration as a fleet's YAML file leaves it.
func fleet(t *testing.T) *config.Config {
	t.Helper()
	c := config.New()
	if err := c.LoadYAML(strings.NewReader(`
dispatch:
  max_concurrent: 6
  timeout: 30s
  queues:
    - name: high
      weight: 3
db:
  host: localhost
`)); err != nil {
		t.Fatal(err)
	}
	return c
}

// unknownErrs returns the *Errors joined in err, each required to match
// ErrUnknownKey, as "Key Path" lines.
func unknownErrs(t *testing.T, err error) []string {
	t.Helper()
	if !errors.Is(err, config.ErrUnknownKey) {
		t.Fatalf("error %v does not match ErrUnknownKey", err)
	}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	var out []string
	for _, e := range errs {
		var ce *config.Error
		if !errors.As(e, &ce) || !errors.Is(e, config.ErrUnknownKey) {
			t.Fatalf("joined error %v is not an *Error matching ErrUnknownKey", e)
		}
		out = append(out, ce.Key+" "+ce.Path)
	}
	return out
}

// The typo case: a misspelt variable silently creates a key while the real
// value stays 6 (the CONTROL, without the option); strict, it is refused
// with the variable's name, and nothing is written.
func TestFromEnvRejectUnknownKeys(t *testing.T) {
	env := []string{"FLEET_DISPATCH__MAX_CONCURENT=8", "FLEET_DB__HOST=db1", "FLEET_CONFIG=fleet.yaml"}

	loose := fleet(t)
	if err := loose.FromEnv("FLEET", env); err != nil {
		t.Fatal(err)
	}
	s := loose.Snapshot()
	if got := s.Int("dispatch.max_concurrent"); got != 6 {
		t.Fatalf("CONTROL: max_concurrent = %d, want 6 (the typo does not reach it)", got)
	}
	if !s.Has("dispatch.max_concurent") || !s.Has("config") {
		t.Fatalf("CONTROL: the typo and FLEET_CONFIG should have become keys: %v", s.Keys())
	}

	c := fleet(t)
	before := c.Snapshot()
	err := c.FromEnv("FLEET", env, config.RejectUnknownKeys())
	if got, want := unknownErrs(t, err), []string{"FLEET_CONFIG config", "FLEET_DISPATCH__MAX_CONCURENT dispatch.max_concurent"}; !slices.Equal(got, want) {
		t.Errorf("unknown variables: got %q, want %q", got, want)
	}
	if !strings.Contains(err.Error(), "config: env FLEET_DISPATCH__MAX_CONCURENT: at dispatch.max_concurent: unknown key") {
		t.Errorf("message %q does not name the variable and the key", err)
	}
	if c.Snapshot() != before {
		t.Error("a refused FromEnv published a change")
	}

	// Named variables are skipped; known keys, in any case, override.
	err = c.FromEnv("FLEET", []string{"FLEET_DISPATCH__MAX_CONCURRENT=8", "FLEET_DB__HOST=db1", "FLEET_CONFIG=fleet.yaml"},
		config.RejectUnknownKeys(), config.IgnoreEnv("FLEET_CONFIG"))
	if err != nil {
		t.Fatal(err)
	}
	s = c.Snapshot()
	if s.Int("dispatch.max_concurrent") != 8 || s.String("db.host") != "db1" || s.Has("config") {
		t.Errorf("after a strict FromEnv: %v", s.All())
	}
}

func TestFromEnvStrictDetails(t *testing.T) {
	c := fleet(t)
	for _, tc := range []struct {
		name string
		env  string
		ok   bool
	}{
		{"section", `FLEET_DISPATCH={"max_concurrent": 2}`, true},
		{"list", `FLEET_DISPATCH__QUEUES=[]`, true},
		{"case-insensitive", "FLEET_DiSpAtCh__TIMEOUT=1m", true},
		{"new section", "FLEET_CACHE__SIZE=1", false},
		{"below a value", "FLEET_DB__HOST__PORT=1", false},
		{"into a list", "FLEET_DISPATCH__QUEUES__0=1", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := fleet(t).FromEnv("FLEET", []string{tc.env}, config.RejectUnknownKeys())
			if tc.ok != (err == nil) || err != nil && !errors.Is(err, config.ErrUnknownKey) {
				t.Errorf("FromEnv(%s) = %v", tc.env, err)
			}
		})
	}
	// Without RejectUnknownKeys, IgnoreEnv alone keeps the variable out.
	if err := c.FromEnv("FLEET", []string{"FLEET_CONFIG=x"}, config.IgnoreEnv("FLEET_CONFIG")); err != nil || c.Snapshot().Has("config") {
		t.Errorf("IgnoreEnv: err %v, keys %v", err, c.Snapshot().Keys())
	}
	// A nil option is no option.
	if err := c.FromEnv("FLEET", []string{"FLEET_X=1"}, nil); err != nil || !c.Snapshot().Has("x") {
		t.Errorf("nil option: err %v, keys %v", err, c.Snapshot().Keys())
	}
}

type queue struct {
	Name   string
	Weight int
}

type dispatch struct {
	MaxConcurrent int           `config:"max_concurrent"`
	Timeout       time.Duration `config:"timeout"`
	Queues        []queue       `config:"queues"`
}

// The typo case through the file: Decode ignores the unknown key (the
// CONTROL) and, with RejectUnknownKeys, names it.
func TestDecodeRejectUnknownKeys(t *testing.T) {
	c := fleet(t)
	if err := c.FromEnv("FLEET", []string{"FLEET_DISPATCH__MAX_CONCURENT=8", "FLEET_DISPATCH__QUEUES=[{\"name\": \"low\", \"wieght\": 1}]"}); err != nil {
		t.Fatal(err)
	}
	s := c.Snapshot()

	d, err := config.Decode[dispatch](s, "dispatch")
	if err != nil || d.MaxConcurrent != 6 {
		t.Fatalf("CONTROL: Decode = %+v, %v; want max 6 and the typo ignored", d, err)
	}

	d, err = config.Decode[dispatch](s, "dispatch", config.RejectUnknownKeys())
	if got, want := unknownErrs(t, err), []string{"dispatch dispatch.max_concurent", "dispatch dispatch.queues[0].wieght"}; !slices.Equal(got, want) {
		t.Errorf("unknown keys: got %q, want %q", got, want)
	}
	if !reflect.DeepEqual(d, dispatch{}) {
		t.Errorf("a refused Decode returned %+v, want the zero value", d)
	}
	if want := "config: decode dispatch.max_concurent: unknown key: no field of config_test.dispatch takes it"; !strings.Contains(err.Error(), want) {
		t.Errorf("message %q, want it to contain %q", err, want)
	}

	type all struct {
		Dispatch dispatch
		DB       struct{ Host string }
	}
	_, err = config.DecodeAll[all](s, config.RejectUnknownKeys())
	if got, want := unknownErrs(t, err), []string{" dispatch.max_concurent", " dispatch.queues[0].wieght"}; !slices.Equal(got, want) {
		t.Errorf("DecodeAll unknown keys: got %q, want %q", got, want)
	}
	// An option that does not apply to Decode changes nothing.
	if _, err := config.DecodeAll[all](s, config.IgnoreEnv("X")); err != nil {
		t.Errorf("DecodeAll with IgnoreEnv: %v", err)
	}
}

func TestDecodeRejectUnknownKeysShapes(t *testing.T) {
	c := config.New()
	mustSet(t, c, "a", map[string]any{
		"Name": "x", "name": "y", // the exact match wins: "Name" is left over
		"labels": map[string]any{"any": "thing"},           // a map takes every key
		"extra":  map[string]any{"deep": map[string]any{}}, // anything under it: one key
		"ptr":    map[string]any{"n": 1, "m": 2},
		"at":     "2026-01-02T03:04:05Z",
		"level":  "debug",
		"free":   map[string]any{"whatever": 1},
		"Embed":  1,
	})
	type inner struct{ N int }
	type Embedded struct{ Embed int }
	type shape struct {
		Embedded
		Name   string `config:"name"`
		Labels map[string]string
		Ptr    *inner
		At     time.Time
		Level  levelText
		Free   any
	}
	_, err := config.Decode[shape](c.Snapshot(), "a", config.RejectUnknownKeys())
	if got, want := unknownErrs(t, err), []string{"a a.Name", "a a.extra", "a a.ptr.m"}; !slices.Equal(got, want) {
		t.Errorf("unknown keys: got %q, want %q", got, want)
	}
	// Scalars and getter types have no keys to leave over.
	mustSet(t, c, "n", 3)
	if _, err := config.Decode[int](c.Snapshot(), "n", config.RejectUnknownKeys()); err != nil {
		t.Error(err)
	}
}

// levelText decodes from a string through UnmarshalText, as slog.Level does.
type levelText struct{ s string }

func (l *levelText) UnmarshalText(b []byte) error { l.s = string(b); return nil }

// Every method of a nil *Snapshot reads as an empty Snapshot, without
// panicking. The methods are found by reflection, so a new getter is
// covered (and must take this shape of arguments) or fails the test.
func TestNilSnapshotGetters(t *testing.T) {
	var nilSnap *config.Snapshot
	empty := config.New().Snapshot()
	typ := reflect.TypeOf(nilSnap)
	if typ.NumMethod() < 17 {
		t.Fatalf("found %d methods of *Snapshot, want every getter", typ.NumMethod())
	}
	for i := range typ.NumMethod() {
		m := typ.Method(i)
		t.Run(m.Name, func(t *testing.T) {
			args := func(recv *config.Snapshot) []reflect.Value {
				in := []reflect.Value{reflect.ValueOf(recv)}
				for j := 1; j < m.Type.NumIn(); j++ {
					switch at := m.Type.In(j); at.Kind() {
					case reflect.String:
						in = append(in, reflect.ValueOf("db.port"))
					case reflect.Interface: // Lookup's dst
						in = append(in, reflect.ValueOf(new(int)))
					default:
						t.Fatalf("%s takes a %s: teach this test to call it", m.Name, at)
					}
				}
				return in
			}
			var got []reflect.Value
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("%s on a nil *Snapshot panicked: %v", m.Name, r)
					}
				}()
				got = m.Func.Call(args(nilSnap))
			}()
			want := m.Func.Call(args(empty))
			for j := range got {
				g, w := got[j].Interface(), want[j].Interface()
				if err, ok := w.(error); ok {
					if !errors.Is(g.(error), config.ErrNotFound) || !errors.Is(err, config.ErrNotFound) {
						t.Errorf("%s: error %v, an empty Snapshot's %v", m.Name, g, err)
					}
					continue
				}
				if !equalOrEmpty(g, w) {
					t.Errorf("%s: result %d = %#v, an empty Snapshot's %#v", m.Name, j, g, w)
				}
			}
		})
	}
	if _, err := config.Decode[int](nilSnap, "db.port"); !errors.Is(err, config.ErrNotFound) {
		t.Errorf("Decode of a nil Snapshot: %v", err)
	}
}

// equalOrEmpty is reflect.DeepEqual, except that a nil and an empty slice
// or map are equal.
func equalOrEmpty(a, b any) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.IsValid() && vb.IsValid() && va.Type() == vb.Type() {
		switch va.Kind() {
		case reflect.Slice, reflect.Map:
			if va.Len() == 0 && vb.Len() == 0 {
				return true
			}
		}
	}
	return reflect.DeepEqual(a, b)
}
