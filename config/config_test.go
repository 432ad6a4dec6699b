package config_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/agentstate/core/config"
	"github.com/agentstate/core/internal/deepdiff"
)

func mustSet(t *testing.T, c *config.Config, key string, v any) {
	t.Helper()
	if err := c.Set(key, v); err != nil {
		t.Fatalf("Set(%q): %v", key, err)
	}
}

func TestZeroValueIsUsable(t *testing.T) {
	var c config.Config
	if v, ok := c.Snapshot().Get("x"); ok || v != nil {
		t.Fatalf("Get on zero Config = %v, %v", v, ok)
	}
	if got := c.Snapshot().Keys(); len(got) != 0 {
		t.Fatalf("Keys = %v", got)
	}
	mustSet(t, &c, "x", 1)
	if c.Snapshot().Int("x") != 1 {
		t.Fatal("Set on zero Config lost the value")
	}
}

func TestCopyInCopyOut(t *testing.T) {
	c := config.New()
	in := map[string]any{
		"host":  "a",
		"ports": []any{1, 2},
		"tags":  []string{"x"},
		"env":   map[string]string{"k": "v"},
		"deep":  map[string]any{"list": []any{map[string]any{"n": 1}}},
	}
	mustSet(t, c, "db", in)
	want := c.Snapshot().All()

	// Mutate what was passed to Set.
	in["host"] = "mutated"
	in["ports"].([]any)[0] = 99
	in["tags"].([]string)[0] = "mutated"
	in["env"].(map[string]string)["k"] = "mutated"
	in["deep"].(map[string]any)["list"].([]any)[0].(map[string]any)["n"] = 99

	// Mutate what getters returned.
	got, _ := c.Snapshot().Get("db")
	got.(map[string]any)["host"] = "mutated"
	got.(map[string]any)["deep"].(map[string]any)["list"].([]any)[0] = "x"
	ss := c.Snapshot().StringSlice("db.tags")
	ss[0] = "mutated"
	sm := c.Snapshot().StringMap("db.env")
	sm["k"] = "mutated"
	all := c.Snapshot().All()
	all["db"].(map[string]any)["host"] = "mutated"
	ports, _ := config.Decode[[]any](c.Snapshot(), "db.ports")
	ports[0] = 99

	if diff := deepdiff.Diff(want, c.Snapshot().All()); diff != "" {
		t.Fatalf("stored value changed (-want +got):\n%s", diff)
	}
}

func TestDottedKeys(t *testing.T) {
	c := config.New()
	mustSet(t, c, "db", map[string]any{"host": "x", "opts": map[string]any{"tls": true}})
	if got := c.Snapshot().String("db.host"); got != "x" {
		t.Fatalf("db.host = %q", got)
	}
	if !c.Snapshot().Bool("db.opts.tls") {
		t.Fatal("db.opts.tls not visible")
	}
	mustSet(t, c, "db.port", 5432)
	mustSet(t, c, "db.opts.timeout", "3s")
	want := map[string]any{"db": map[string]any{
		"host": "x", "port": 5432,
		"opts": map[string]any{"tls": true, "timeout": "3s"},
	}}
	if diff := deepdiff.Diff(want, c.Snapshot().All()); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if diff := deepdiff.Diff([]string{"db.host", "db.opts.timeout", "db.opts.tls", "db.port"}, c.Snapshot().Keys()); diff != "" {
		t.Fatalf("Keys (-want +got):\n%s", diff)
	}
	// Set through a non-section: error, nothing changed.
	before := c.Snapshot()
	err := c.Set("db.host.name", "y")
	if !errors.Is(err, config.ErrNotSection) || !strings.Contains(err.Error(), `"db.host" holds a string`) {
		t.Fatalf("Set through a string: %v", err)
	}
	if c.Snapshot() != before {
		t.Fatal("failed Set published a snapshot")
	}
	// Missing sections are created.
	mustSet(t, c, "a.b.c", 1)
	if c.Snapshot().Int("a.b.c") != 1 || !c.Snapshot().Has("a.b") {
		t.Fatal("a.b.c not created")
	}
	// Delete of a child keeps the (now empty) section.
	if !c.Delete("a.b.c") {
		t.Fatal("Delete(a.b.c) = false")
	}
	if v, ok := c.Snapshot().Get("a.b"); !ok || len(v.(map[string]any)) != 0 {
		t.Fatalf("a.b after delete = %v, %v", v, ok)
	}
	if diff := deepdiff.Diff([]string{"a.b", "db.host", "db.opts.timeout", "db.opts.tls", "db.port"}, c.Snapshot().Keys()); diff != "" {
		t.Fatalf("Keys with an empty section (-want +got):\n%s", diff)
	}
	if c.Delete("a.b.c") || c.Delete("nope") || c.Delete("") || c.Delete("db.host.x") {
		t.Fatal("Delete of a missing key reported true")
	}
	if !c.Delete("db") || c.Snapshot().Has("db.host") {
		t.Fatal("Delete(db) left children")
	}
}

func TestInvalidKeys(t *testing.T) {
	c := config.New()
	for _, k := range []string{"", ".", "a.", ".a", "a..b"} {
		if err := c.Set(k, 1); !errors.Is(err, config.ErrInvalidKey) {
			t.Errorf("Set(%q) = %v, want ErrInvalidKey", k, err)
		}
	}
	if len(c.Snapshot().Keys()) != 0 {
		t.Fatal("invalid keys stored something")
	}
}

func TestUnsupportedValues(t *testing.T) {
	type private struct{ x int }
	type Public struct {
		Name string
		Fn   func()
	}
	n := 1
	cyc := map[string]any{}
	cyc["self"] = cyc
	cycSlice := []any{nil}
	cycSlice[0] = cycSlice
	cases := []struct {
		name, path string
		v          any
	}{
		{"func", "k", func() {}},
		{"chan", "k", make(chan int)},
		{"pointer", "k", &n},
		{"unsafe", "k", unsafe.Pointer(&n)},
		{"nested func", "k.a[1]", map[string]any{"a": []any{1, func() {}}}},
		{"struct field", "k.Fn", Public{Name: "x", Fn: func() {}}},
		{"unexported", "k", private{1}},
		{"map cycle", "k.self", cyc},
		{"slice cycle", "k[0]", cycSlice},
		{"dot in section key", "k.a.b", map[string]any{"a.b": 1}},
		{"empty section key", "k.sub.", map[string]any{"sub": map[string]any{"": 1}}},
		// Containers with no elements are judged by their type, like
		// full ones: whether Set accepts a []func() must not depend on
		// its length.
		{"empty slice of funcs", "k", []func(){}},
		{"nil slice of pointers", "k", []*int(nil)},
		{"empty map of chans", "k", map[string]chan int{}},
		{"nil map with array keys", "k", map[[2]int]int(nil)},
		{"empty array of funcs", "k", [0]func(){}},
		{"nested empty", "k.Fns", struct{ Fns [][]func() }{}},
		{"empty slice of private structs", "k", []private{}},
		{"empty slice of complex", "k", []complex128{}},
	}
	c := config.New()
	mustSet(t, c, "k", "old")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Set("k", tc.v)
			var ce *config.Error
			if !errors.As(err, &ce) || !errors.Is(err, config.ErrUnsupported) {
				t.Fatalf("Set = %v, want *Error wrapping ErrUnsupported", err)
			}
			if ce.Key != "k" || ce.Path != tc.path {
				t.Fatalf("Key, Path = %q, %q; want k, %q (%v)", ce.Key, ce.Path, tc.path, err)
			}
			if c.Snapshot().String("k") != "old" {
				t.Fatal("failed Set changed the stored value")
			}
		})
	}
	// Empty and nil containers of supported types are fine.
	for _, v := range []any{[]any{}, []string(nil), map[string]any(nil), map[string][]int{}, [0]int{}, []time.Time(nil), []struct{ A []any }{}} {
		mustSet(t, c, "empty", v)
	}
	// A dotted key inside a map under a slice is fine: not a section.
	mustSet(t, c, "list", []any{map[string]any{"a.b": 1}})
	// A shared (non-cyclic) sub-value is fine and copied twice.
	shared := []any{1}
	mustSet(t, c, "dag", map[string]any{"x": shared, "y": shared})
}

func TestSupportedValuesRoundTrip(t *testing.T) {
	type Inner struct{ N []int }
	type S struct {
		Name  string
		Inner Inner
		M     map[int]string
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	vals := map[string]any{
		"nil": nil, "bool": true, "int": 1, "i8": int8(-1), "u64": uint64(1 << 63),
		"f32": float32(1.5), "str": "s", "dur": time.Second, "time": now,
		"bytes": []byte("ab"), "arr": [2]any{1, []int{2}}, "struct": S{"n", Inner{[]int{1}}, map[int]string{1: "a"}},
		"mapint": map[string]int{"a": 1}, "nested": []map[string][]string{{"a": {"b"}}},
	}
	c := config.New()
	for k, v := range vals {
		mustSet(t, c, k, v)
		got, ok := c.Snapshot().Get(k)
		if !ok {
			t.Fatalf("Get(%q) missing", k)
		}
		if diff := deepdiff.Diff(v, got); diff != "" {
			t.Fatalf("Get(%q) (-want +got):\n%s", k, diff)
		}
	}
	// Structs come back as copies too.
	s, _ := config.Decode[S](c.Snapshot(), "struct")
	s.Inner.N[0] = 99
	s.M[1] = "mutated"
	again, _ := config.Decode[S](c.Snapshot(), "struct")
	if again.Inner.N[0] != 1 || again.M[1] != "a" {
		t.Fatal("mutating a returned struct changed the stored one")
	}
}

func TestTypedGetters(t *testing.T) {
	c := config.New()
	type Mode string
	set := map[string]any{
		"s": "str", "mode": Mode("fast"), "i": 42, "i64": int64(1 << 40), "f": 2.5, "whole": 3.0,
		"big": 1e300, "neg": -7.0, "b": true, "bs": "true", "d": 30 * time.Second, "ds": "1m30s",
		"dn": int64(1500), "t": time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), "ts": "2026-01-01T00:00:00Z",
		"ss": []string{"a", "b"}, "sa": []any{"a", "b"}, "mixed": []any{"a", 1},
		"sm": map[string]string{"a": "b"}, "sma": map[string]any{"a": "b"}, "numstr": "8080",
		"u": uint64(math.MaxUint64),
	}
	for k, v := range set {
		mustSet(t, c, k, v)
	}
	check := func(name string, got, want any) {
		t.Helper()
		if diff := deepdiff.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	check("String", c.Snapshot().String("s"), "str")
	check("String named", c.Snapshot().String("mode"), "fast")
	check("String of int", c.Snapshot().String("i"), "")
	check("Int", c.Snapshot().Int("i"), 42)
	check("Int whole float", c.Snapshot().Int("whole"), 3)
	check("Int fraction", c.Snapshot().Int("f"), 0)
	check("Int huge float", c.Snapshot().Int("big"), 0)
	check("Int negative float", c.Snapshot().Int("neg"), -7)
	check("Int numeric string", c.Snapshot().Int("numstr"), 8080)
	check("Int uint64 overflow", c.Snapshot().Int64("u"), int64(0))
	check("Int64", c.Snapshot().Int64("i64"), int64(1<<40))
	check("Float64", c.Snapshot().Float64("f"), 2.5)
	check("Float64 of int", c.Snapshot().Float64("i"), 42.0)
	check("Bool", c.Snapshot().Bool("b"), true)
	check("Bool string", c.Snapshot().Bool("bs"), true)
	check("Bool of int", c.Snapshot().Bool("i"), false)
	check("Duration", c.Snapshot().Duration("d"), 30*time.Second)
	check("Duration string", c.Snapshot().Duration("ds"), 90*time.Second)
	check("Duration nanos", c.Snapshot().Duration("dn"), 1500*time.Nanosecond)
	check("Duration bad", c.Snapshot().Duration("s"), time.Duration(0))
	check("Time", c.Snapshot().Time("t"), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	check("Time string", c.Snapshot().Time("ts").Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), true)
	check("StringSlice", c.Snapshot().StringSlice("ss"), []string{"a", "b"})
	check("StringSlice any", c.Snapshot().StringSlice("sa"), []string{"a", "b"})
	check("StringSlice mixed", c.Snapshot().StringSlice("mixed"), []string(nil))
	check("StringMap", c.Snapshot().StringMap("sm"), map[string]string{"a": "b"})
	check("StringMap section", c.Snapshot().StringMap("sma"), map[string]string{"a": "b"})
	check("missing", c.Snapshot().Int("missing"), 0)

	var n int
	if err := c.Snapshot().Lookup("missing", &n); !errors.Is(err, config.ErrNotFound) {
		t.Errorf("Lookup(missing) = %v", err)
	}
	n = 5
	if err := c.Snapshot().Lookup("s", &n); !errors.Is(err, config.ErrConversion) || n != 5 {
		t.Errorf("Lookup(s, *int) = %v, n=%d", err, n)
	} else if !strings.Contains(err.Error(), "config: get s: cannot convert: string to int") {
		t.Errorf("error text: %v", err)
	}
	if err := c.Snapshot().Lookup("i", &n); err != nil || n != 42 {
		t.Errorf("Lookup(i) = %v, %d", err, n)
	}
	var d time.Duration
	if err := c.Snapshot().Lookup("ds", &d); err != nil || d != 90*time.Second {
		t.Errorf("Lookup(ds) = %v, %v", err, d)
	}
	var ch chan int
	if err := c.Snapshot().Lookup("i", &ch); !errors.Is(err, config.ErrUnsupported) {
		t.Errorf("Lookup into *chan = %v", err)
	}
	if err := c.Snapshot().Lookup("i", (*int)(nil)); !errors.Is(err, config.ErrUnsupported) {
		t.Errorf("Lookup into nil *int = %v", err)
	}
	if v, err := config.Decode[string](c.Snapshot(), "s"); err != nil || v != "str" {
		t.Errorf("Decode[string] on a Snapshot = %q, %v", v, err)
	}
}

func TestSnapshotIsImmutable(t *testing.T) {
	c := config.New()
	mustSet(t, c, "a", map[string]any{"b": 1})
	s := c.Snapshot()
	mustSet(t, c, "a.b", 2)
	mustSet(t, c, "c", 3)
	c.Delete("a")
	if s.Int("a.b") != 1 || s.Has("c") {
		t.Fatalf("snapshot changed: %v", s.All())
	}
	if s.Version() >= c.Snapshot().Version() {
		t.Fatal("version did not grow")
	}
}

func TestFeatureFlags(t *testing.T) {
	c := config.New()
	if c.Snapshot().Enabled("x") || c.Snapshot().Enabled("") {
		t.Fatal("unknown flag enabled")
	}
	c.Enable("b")
	c.Enable("a")
	c.Enable("a")
	s := c.Snapshot()
	c.Disable("b")
	c.Disable("unknown")
	if !c.Snapshot().Enabled("a") || c.Snapshot().Enabled("b") {
		t.Fatal("Enable/Disable")
	}
	if diff := deepdiff.Diff([]string{"a", "b"}, s.EnabledFeatures()); diff != "" {
		t.Fatal(diff)
	}
	got := c.Snapshot().EnabledFeatures()
	got[0] = "mutated"
	if diff := deepdiff.Diff([]string{"a"}, c.Snapshot().EnabledFeatures()); diff != "" {
		t.Fatal(diff)
	}
}

func TestLoadPreservesIntegers(t *testing.T) {
	c := config.New()
	in := `{"port": 8080, "ratio": 0.5, "exp": 1e3, "big": 20000000000000000000, "neg": -3,
	        "list": [1, 2.5], "db": {"host": "x", "max": 9007199254740993}}`
	if err := c.Load(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"port": int64(8080), "ratio": 0.5, "exp": 1000.0, "big": 2e19, "neg": int64(-3),
		"list": []any{int64(1), 2.5}, "db": map[string]any{"host": "x", "max": int64(9007199254740993)},
	}
	if diff := deepdiff.Diff(want, c.Snapshot().All()); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if c.Snapshot().Int("port") != 8080 || c.Snapshot().Int("exp") != 1000 || c.Snapshot().String("db.host") != "x" {
		t.Fatal("typed getters after Load")
	}
}

// A nil reader or writer is caller input like any other: an error, not a
// panic, and nothing changes.
func TestLoadSaveNilReaderWriter(t *testing.T) {
	c := config.New()
	mustSet(t, c, "keep", 1)
	for name, f := range map[string]func() error{
		"Load(nil)": func() error { return c.Load(nil) },
		"Save(nil)": func() error { return c.Save(nil) },
	} {
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic: %v", r)
				}
			}()
			err = f()
		}()
		var ce *config.Error
		if !errors.As(err, &ce) || strings.Contains(err.Error(), "panic") {
			t.Errorf("%s = %v, want a *config.Error", name, err)
		}
	}
	if c.Snapshot().Int("keep") != 1 || len(c.Snapshot().Keys()) != 1 {
		t.Fatal("a failed Load changed the content")
	}
}

func TestLoadRejectsBadInputAndKeepsContent(t *testing.T) {
	for _, in := range []string{``, `[1]`, `null`, `{"a": 1} {"b": 2}`, `{"a": 1`, `{"a.b": 1}`, `{"s": {"": 1}}`, `"x"`, `{"n": [1e400]}`} {
		c := config.New()
		mustSet(t, c, "keep", 1)
		before := c.Snapshot()
		err := c.Load(strings.NewReader(in))
		var ce *config.Error
		if !errors.As(err, &ce) || ce.Op != "load" {
			t.Errorf("Load(%q) = %v, want *Error", in, err)
		}
		if c.Snapshot() != before {
			t.Errorf("Load(%q) changed the content", in)
		}
	}
}

func TestSaveIsDeterministicAndRoundTrips(t *testing.T) {
	c := config.New()
	mustSet(t, c, "z", 1)
	mustSet(t, c, "a", map[string]any{"y": []any{1, "two"}, "b": true})
	mustSet(t, c, "d", 1500*time.Millisecond)
	mustSet(t, c, "t", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var first bytes.Buffer
	if err := c.Save(&first); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"a\": {\n    \"b\": true,\n    \"y\": [\n      1,\n      \"two\"\n    ]\n  },\n" +
		"  \"d\": 1500000000,\n  \"t\": \"2026-01-01T00:00:00Z\",\n  \"z\": 1\n}\n"
	if diff := deepdiff.Diff(want, first.String()); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	for range 5 {
		var again bytes.Buffer
		if err := c.Save(&again); err != nil || again.String() != first.String() {
			t.Fatal("Save is not deterministic")
		}
	}
	c2 := config.New()
	if err := c2.Load(&first); err != nil {
		t.Fatal(err)
	}
	if c2.Snapshot().Duration("d") != 1500*time.Millisecond || !c2.Snapshot().Time("t").Equal(c.Snapshot().Time("t")) || c2.Snapshot().Int("z") != 1 {
		t.Fatalf("round trip: %v", c2.Snapshot().All())
	}
}

func TestSaveFileAndLoadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	c := config.New()
	mustSet(t, c, "port", 8080)
	if err := c.SaveFile(path, 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 && os.Getenv("GOOS") != "windows" {
		t.Fatalf("mode = %v", fi.Mode().Perm())
	}
	c2 := config.New()
	if err := c2.LoadFile(path); err != nil || c2.Snapshot().Int("port") != 8080 {
		t.Fatalf("LoadFile = %v, port=%d", err, c2.Snapshot().Int("port"))
	}
	err = c2.LoadFile(filepath.Join(dir, "missing.json"))
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "missing.json") {
		t.Fatalf("LoadFile(missing) = %v", err)
	}
	if strings.Count(err.Error(), "missing.json") != 1 {
		t.Errorf("LoadFile(missing) names the file more than once: %v", err)
	}
	// A save that fails names the file once too, and leaves the old one.
	blocked := filepath.Join(path, "sub.json") // path is a file, not a directory
	err = c.SaveFile(blocked, 0o600)
	if err == nil || strings.Count(err.Error(), blocked) != 1 {
		t.Fatalf("SaveFile(%s) = %v, want an error naming the path once", blocked, err)
	}
	if c2.LoadFile(path) != nil || c2.Snapshot().Int("port") != 8080 {
		t.Fatal("failed SaveFile damaged the file")
	}
}
