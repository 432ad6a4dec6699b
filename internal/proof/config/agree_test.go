package config_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/agentstate/core/config"
	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

type (
	name  string
	small int8
)

// storedValue draws what a key may hold: the forms files load into, the Go
// types Set keeps, and strings that other types parse.
func storedValue() *rapid.Generator[any] {
	str := rapid.SampledFrom([]string{"", "x", "8", "-3", "2.5", "true", "0", "30s", "2026-01-02T03:04:05Z"})
	scalar := rapid.OneOf(
		rapid.Just[any](nil),
		rapid.Map(str, func(s string) any { return s }),
		rapid.Map(str, func(s string) any { return name(s) }),
		rapid.Map(rapid.IntRange(-300, 300), func(n int) any { return n }),
		rapid.Map(rapid.Int64Range(-1<<40, 1<<40), func(n int64) any { return n }),
		rapid.Map(rapid.IntRange(-128, 127), func(n int) any { return small(n) }),
		rapid.Map(rapid.Uint64(), func(n uint64) any { return n }),
		rapid.Map(rapid.Uint8(), func(n uint8) any { return n }),
		rapid.Map(rapid.Float32(), func(f float32) any { return f }),
		rapid.Map(rapid.SampledFrom([]float64{0, 3, -3, 2.5, 1e300}), func(f float64) any { return f }),
		rapid.Map(rapid.Bool(), func(b bool) any { return b }),
		rapid.Map(rapid.Int64Range(0, 1e12), func(n int64) any { return time.Duration(n) }),
		rapid.Just[any](time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
	)
	return rapid.OneOf(
		scalar,
		rapid.Map(rapid.SliceOfN(str, 0, 3), func(s []string) any { return s }),
		rapid.Map(rapid.SliceOfN(scalar, 0, 3), func(s []any) any { return s }),
		rapid.Map(rapid.SliceOfN(str, 0, 3), func(s []string) any {
			out := make([]name, len(s))
			for i := range s {
				out[i] = name(s[i])
			}
			return out
		}),
		rapid.Map(str, func(s string) any { return [2]string{s, s} }),
		rapid.Map(rapid.MapOfN(str, str, 0, 3), func(m map[string]string) any { return m }),
		rapid.Map(rapid.MapOfN(str, scalar, 0, 3), func(m map[string]any) any { return m }),
		rapid.Map(rapid.MapOfN(str, str, 0, 3), func(m map[string]string) any {
			out := map[string]name{}
			for k, v := range m {
				out[k] = name(v)
			}
			return out
		}),
	)
}

// A reader is one way of reading a key as a type: the getter, Lookup or
// Decode. It returns what it read and whether it could convert.
type reader func(c *config.Config, key string) (any, bool)

// readers lists, per target type, the three ways of reading it.
type readers map[string][3]reader

func getter[T any](get func(*config.Config, string) T) reader {
	return func(c *config.Config, key string) (any, bool) { return get(c, key), true }
}

func lookup[T any](c *config.Config, key string) (any, bool) {
	var x T
	err := c.Lookup(key, &x)
	return x, err == nil
}

func decode[T any](c *config.Config, key string) (any, bool) {
	x, err := config.Decode[T](c, key)
	return x, err == nil
}

func three[T any](get func(*config.Config, string) T) [3]reader {
	return [3]reader{getter(get), lookup[T], decode[T]}
}

var byType = readers{
	"string":            three((*config.Config).String),
	"int":               three((*config.Config).Int),
	"int64":             three((*config.Config).Int64),
	"float64":           three((*config.Config).Float64),
	"bool":              three((*config.Config).Bool),
	"time.Duration":     three((*config.Config).Duration),
	"time.Time":         three((*config.Config).Time),
	"[]string":          three((*config.Config).StringSlice),
	"map[string]string": three((*config.Config).StringMap),
	"any": three(func(c *config.Config, key string) any {
		v, _ := c.Get(key)
		return v
	}),
}

// disagreement says how the readers differ on v, or "": Lookup and Decode
// must both convert or both fail, to equal values, and the getter must give
// what they give, or the zero value when they fail.
func disagreement(v any, rs readers) string {
	c := config.New()
	if err := c.Set("k", v); err != nil {
		return ""
	}
	for _, typ := range slices.Sorted(maps.Keys(rs)) {
		r := rs[typ]
		got, _ := r[0](c, "k")
		lv, lok := r[1](c, "k")
		dv, dok := r[2](c, "k")
		if lok != dok || !cmp.Equal(lv, dv) {
			return fmt.Sprintf("%T %v as %s: Lookup %v (ok %v), Decode %v (ok %v)", v, v, typ, lv, lok, dv, dok)
		}
		if !cmp.Equal(got, lv) {
			return fmt.Sprintf("%T %v as %s: getter %v, Lookup and Decode %v (ok %v)", v, v, typ, got, lv, lok)
		}
	}
	return ""
}

// The getters, Lookup and Decode convert a stored value the same way: one
// set of rules, whichever a caller uses.
func TestReadersAgree(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		if d := disagreement(storedValue().Draw(t, "v"), byType); d != "" {
			t.Fatal(d)
		}
	})
}

// CONTROL: a StringSlice that takes only []string and lists of plain
// strings, as a separate conversion table would, must be caught.
func TestReadersAgreeControl(t *testing.T) {
	narrow := func(c *config.Config, key string) []string {
		switch x, _ := c.Get(key); x := x.(type) {
		case []string:
			return x
		case []any:
			out := []string{}
			for _, e := range x {
				s, ok := e.(string)
				if !ok {
					return nil
				}
				out = append(out, s)
			}
			return out
		}
		return nil
	}
	rs := readers{"[]string": three(narrow)}
	found := false
	rapid.Check(t, func(t *rapid.T) {
		found = found || disagreement(storedValue().Draw(t, "v"), rs) != ""
	})
	if !found {
		t.Fatal("a StringSlice with its own narrower rules was not caught")
	}
}
