package config_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/agentstate/core/config"
	"github.com/agentstate/core/internal/sharecheck"
	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// model is the plain-map specification of Config: a nested map[string]any
// manipulated by the simplest possible code, with no sharing (it keeps its
// own copies of everything).
type model struct{ root map[string]any }

func (m *model) set(key string, v any) bool {
	segs := strings.Split(key, ".")
	cur := m.root
	for _, s := range segs[:len(segs)-1] {
		next, exists := cur[s]
		if !exists {
			n := map[string]any{}
			cur[s] = n
			cur = n
			continue
		}
		sub, ok := next.(map[string]any)
		if !ok {
			return false
		}
		cur = sub
	}
	cur[segs[len(segs)-1]] = sharecheck.PlainCopy(v)
	return true
}

// walk returns the section holding the last segment of key, if any.
func (m *model) walk(key string) (map[string]any, string) {
	segs := strings.Split(key, ".")
	cur := m.root
	for _, s := range segs[:len(segs)-1] {
		sub, ok := cur[s].(map[string]any)
		if !ok {
			return nil, ""
		}
		cur = sub
	}
	return cur, segs[len(segs)-1]
}

func (m *model) get(key string) (any, bool) {
	sec, last := m.walk(key)
	if sec == nil {
		return nil, false
	}
	v, ok := sec[last]
	return sharecheck.PlainCopy(v), ok
}

func (m *model) del(key string) bool {
	sec, last := m.walk(key)
	if sec == nil {
		return false
	}
	_, ok := sec[last]
	delete(sec, last)
	return ok
}

func (m *model) keys() []string {
	var out []string
	var rec func(prefix string, sec map[string]any)
	rec = func(prefix string, sec map[string]any) {
		for k, v := range sec {
			if prefix != "" {
				k = prefix + "." + k
			}
			if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
				rec(k, sub)
			} else {
				out = append(out, k)
			}
		}
	}
	rec("", m.root)
	slices.Sort(out)
	if out == nil {
		out = []string{}
	}
	return out
}

var (
	keyGen  = rapid.SampledFrom([]string{"a", "b", "a.x", "a.y", "b.x", "a.x.y", "a.x.z"})
	segGen  = rapid.SampledFrom([]string{"x", "y", "z"})
	leafGen = rapid.OneOf(
		rapid.Int().AsAny(),
		rapid.SampledFrom([]string{"", "s", "t"}).AsAny(),
		rapid.Bool().AsAny(),
		rapid.Float64().AsAny(),
	)
)

func valueGen(depth int) *rapid.Generator[any] {
	if depth == 0 {
		return leafGen
	}
	return rapid.OneOf(
		leafGen,
		rapid.Custom(func(t *rapid.T) any {
			return rapid.SliceOfN(valueGen(depth-1), 0, 3).Draw(t, "slice")
		}).AsAny(),
		rapid.Custom(func(t *rapid.T) any {
			return rapid.MapOfN(segGen, valueGen(depth-1), 0, 3).Draw(t, "map")
		}).AsAny(),
	)
}

// slices from rapid are []any already; maps map[string]any.

type savedSnapshot struct {
	snap *config.Snapshot
	want map[string]any
}

func TestConfigStateMachine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := config.New()
		m := &model{root: map[string]any{}}
		var snaps []savedSnapshot
		// NaN != NaN in cmp; equal floats are what we compare.
		opts := cmp.Options{cmp.Comparer(func(a, b float64) bool { return a == b || a != a && b != b })}

		t.Repeat(map[string]func(*rapid.T){
			"set": func(t *rapid.T) {
				key := keyGen.Draw(t, "key")
				v := valueGen(2).Draw(t, "value")
				err := c.Set(key, v)
				if ok := m.set(key, v); ok != (err == nil) {
					t.Fatalf("Set(%q) error %v, model ok=%v", key, err, ok)
				}
				if err != nil && !errors.Is(err, config.ErrNotSection) {
					t.Fatalf("Set(%q): unexpected error %v", key, err)
				}
				if rapid.Bool().Draw(t, "mutate passed value") {
					sharecheck.Scribble(v)
				}
			},
			"get": func(t *rapid.T) {
				key := keyGen.Draw(t, "key")
				got, ok := c.Snapshot().Get(key)
				want, wantOK := m.get(key)
				if ok != wantOK {
					t.Fatalf("Get(%q) ok=%v, model %v", key, ok, wantOK)
				}
				if diff := cmp.Diff(want, got, opts); diff != "" {
					t.Fatalf("Get(%q) (-model +config):\n%s", key, diff)
				}
				if rapid.Bool().Draw(t, "mutate returned value") {
					sharecheck.Scribble(got)
				}
			},
			"value": func(t *rapid.T) {
				key := keyGen.Draw(t, "key")
				if got, err := config.Decode[map[string]any](c.Snapshot(), key); err == nil {
					sharecheck.Scribble(got)
				}
				if got, err := config.Decode[[]any](c.Snapshot(), key); err == nil {
					sharecheck.Scribble(got)
				}
			},
			"all": func(t *rapid.T) {
				sharecheck.Scribble(c.Snapshot().All())
			},
			"delete": func(t *rapid.T) {
				key := keyGen.Draw(t, "key")
				if got, want := c.Delete(key), m.del(key); got != want {
					t.Fatalf("Delete(%q) = %v, model %v", key, got, want)
				}
			},
			"snapshot": func(t *rapid.T) {
				snaps = append(snaps, savedSnapshot{c.Snapshot(), sharecheck.PlainCopy(m.root).(map[string]any)})
				if len(snaps) > 4 {
					snaps = snaps[1:]
				}
			},
			"": func(t *rapid.T) {
				if diff := cmp.Diff(m.root, c.Snapshot().All(), opts); diff != "" {
					t.Fatalf("content (-model +config):\n%s", diff)
				}
				if diff := cmp.Diff(m.keys(), c.Snapshot().Keys()); diff != "" {
					t.Fatalf("Keys (-model +config):\n%s", diff)
				}
				for i, s := range snaps {
					if diff := cmp.Diff(s.want, s.snap.All(), opts); diff != "" {
						t.Fatalf("snapshot %d changed (-taken +now):\n%s", i, diff)
					}
				}
			},
		})
	})
}
