package config_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/agentstate/core/config"
	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

type (
	name   string
	small  int8
	ratio  float64
	toggle bool
)

// storedValue draws what a key may hold: the forms files load into, the Go
// types Set keeps, and strings that other types parse.
func storedValue() *rapid.Generator[any] {
	str := rapid.SampledFrom([]string{"", "x", "8", "+5", "-3", "2.5", "true", "0", "30s", "NaN",
		"9223372036854775808", "2026-01-02T03:04:05Z"})
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
		rapid.Map(rapid.SampledFrom([]float64{0, 3, -3, 2.5, -0.5, 0.25, 1e19, 1e300}), func(f float64) any { return f }),
		rapid.Map(rapid.Float64Range(-1000, 1000), func(f float64) any { return f }),
		rapid.Map(rapid.SampledFrom([]float64{3, 2.5, 1e19, math.Copysign(0, -1)}), func(f float64) any { return ratio(f) }),
		rapid.Map(rapid.SampledFrom([]string{"5", "2.5", "1e19"}), func(s string) any { return json.Number(s) }),
		rapid.Map(rapid.Uint64Range(0, 1<<40), func(n uint64) any { return uintptr(n) }),
		rapid.Map(rapid.Bool(), func(b bool) any { return b }),
		rapid.Map(rapid.Bool(), func(b bool) any { return toggle(b) }),
		rapid.Map(rapid.Int64Range(0, 1e12), func(n int64) any { return time.Duration(n) }),
		rapid.Just[any](time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
	)
	// Scalars are drawn as often as all the containers together.
	return rapid.OneOf(
		scalar, scalar, scalar, scalar, scalar, scalar, scalar, scalar,
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
		rapid.Map(rapid.MapOfN(str, str, 0, 3), func(m map[string]string) any {
			out := map[name]string{}
			for k, v := range m {
				out[name(k)] = v
			}
			return out
		}),
	)
}

// A reader is one way of reading a key as a type. It returns what it read
// and whether it could convert.
type reader func(s *config.Snapshot, key string) (any, bool)

// The ways of reading a key as a T, in order: the getter, Lookup, Decode of
// a T and Decode of a *T. The getter, Lookup and Decode of a T may take a
// path of their own for the getters' types; the last goes through the
// decoder's own, so it is the reference.
type ways [4]reader

func getter[T any](get func(*config.Snapshot, string) T) reader {
	return func(s *config.Snapshot, key string) (any, bool) { return get(s, key), true }
}

func lookup[T any](s *config.Snapshot, key string) (any, bool) {
	var x T
	err := s.Lookup(key, &x)
	return x, err == nil
}

func decode[T any](s *config.Snapshot, key string) (any, bool) {
	x, err := config.Decode[T](s, key)
	return x, err == nil
}

// decodePointer decodes into a *T, which the getters' path does not take;
// a stored nil gives a nil pointer, T's zero value.
func decodePointer[T any](s *config.Snapshot, key string) (any, bool) {
	p, err := config.Decode[*T](s, key)
	if err != nil {
		var zero T
		return zero, false
	}
	if p == nil {
		var zero T
		return zero, true
	}
	return *p, true
}

func waysOf[T any](get func(*config.Snapshot, string) T) ways {
	return ways{getter(get), lookup[T], decode[T], decodePointer[T]}
}

var byType = map[string]ways{
	"string":            waysOf((*config.Snapshot).String),
	"int":               waysOf((*config.Snapshot).Int),
	"int64":             waysOf((*config.Snapshot).Int64),
	"float64":           waysOf((*config.Snapshot).Float64),
	"bool":              waysOf((*config.Snapshot).Bool),
	"time.Duration":     waysOf((*config.Snapshot).Duration),
	"time.Time":         waysOf((*config.Snapshot).Time),
	"[]string":          waysOf((*config.Snapshot).StringSlice),
	"map[string]string": waysOf((*config.Snapshot).StringMap),
	"any": waysOf(func(s *config.Snapshot, key string) any {
		v, _ := s.Get(key)
		return v
	}),
}

// disagreement says how the ways of reading differ on v, or "": Lookup and
// both Decodes must all convert or all fail, to equal values, and the
// getter must give what they give, or the zero value when they fail.
func disagreement(v any, rs map[string]ways) string {
	c := config.New()
	if err := c.Set("k", v); err != nil {
		return ""
	}
	s := c.Snapshot()
	for _, typ := range slices.Sorted(maps.Keys(rs)) {
		r := rs[typ]
		ref, refOK := r[3](s, "k")
		for i, what := range []string{"Lookup", "Decode"} {
			got, ok := r[i+1](s, "k")
			if ok != refOK || !cmp.Equal(got, ref) {
				return fmt.Sprintf("%#v as %s: %s %#v (ok %v), the decoder %#v (ok %v)", v, typ, what, got, ok, ref, refOK)
			}
		}
		if got, _ := r[0](s, "k"); !cmp.Equal(got, ref) {
			return fmt.Sprintf("%#v as %s: getter %#v, the decoder %#v (ok %v)", v, typ, got, ref, refOK)
		}
	}
	return ""
}

// The getters, Lookup and Decode convert a stored value the same way: one
// set of rules, whichever a caller uses.
func TestReadersAgree(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		for _, v := range rapid.SliceOfN(storedValue(), 10, 10).Draw(t, "vs") {
			if d := disagreement(v, byType); d != "" {
				t.Fatal(d)
			}
		}
	})
}

// CONTROLS: a getter with its own table must be caught, whether it takes
// less than the decoder (a StringSlice of []string and plain strings only)
// or more (an Int that truncates fractions).
func TestReadersAgreeControl(t *testing.T) {
	narrow := func(s *config.Snapshot, key string) []string {
		switch x, _ := s.Get(key); x := x.(type) {
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
	wide := func(s *config.Snapshot, key string) int {
		if f, ok := s.Get(key); ok {
			if f, ok := f.(float64); ok && f > -1e9 && f < 1e9 {
				return int(f)
			}
		}
		return s.Int(key)
	}
	for what, rs := range map[string]map[string]ways{
		"a narrower StringSlice":      {"[]string": waysOf(narrow)},
		"an Int truncating fractions": {"int": waysOf(wide)},
	} {
		// Ten values a case, as in the property, so that a control is
		// caught in every run.
		found := false
		rapid.Check(t, func(t *rapid.T) {
			for _, v := range rapid.SliceOfN(storedValue(), 10, 10).Draw(t, "vs") {
				found = found || disagreement(v, rs) != ""
			}
		})
		if !found {
			t.Errorf("%s was not caught", what)
		}
	}
}
