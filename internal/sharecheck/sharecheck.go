// Package sharecheck checks that a key-value store shares no mutable value
// with its callers: what a caller passed to Set, got from Get or a view, or
// received in a change notification, it may scribble on without changing
// what anyone else reads.
//
// Run drives a Store with writers, readers, snapshot takers, a subscriber
// and mutators of returned values, and checks the content of everything it
// reads: every value written is self-consistent (all its numbers equal), so
// a mutation that leaks into the store shows as an inconsistent value, a
// read that goes back in time, or a lost or repeated notification. Run it
// concurrently (under -race) and sequenced: sequenced, sharing cannot be a
// data race the detector flags, only a visible change these checks catch.
// NewNaive makes the controls: stores that share maps, which Run must
// catch.
//
// The config tests use it on *config.Config, the peer benchmark module on
// koanf. It imports only the standard library, so the tests inside the
// library packages may use it (see internal/deepdiff).
package sharecheck

import (
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
)

// A View reads values.
type View interface {
	Get(key string) (any, bool)
}

// A Store is what Run checks.
type Store interface {
	View
	Set(key string, v any) error
	View() View
	OnChange(fn func(v View, keys []string), keys ...string) (cancel func())
}

// Result is what a Run saw.
type Result struct {
	Violations int64    // visible changes and other broken promises
	First      []string // the first few, described
}

// harnessKeys are the keys Run writes.
var harnessKeys = []string{"k0", "k1", "k2", "k3"}

// Run drives s for steps rounds: concurrently (one goroutine per actor) or
// sequenced (the same actors round-robin in the calling goroutine).
func Run(s Store, steps int, concurrent bool) Result {
	h := &harness{s: s, steps: steps}
	if concurrent {
		h.runConcurrent()
	} else {
		h.runSequenced()
	}
	h.finish()
	return Result{Violations: h.violations.Load(), First: h.first}
}

// PlainCopy returns a deep copy of v's nested map[string]any and []any.
func PlainCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = PlainCopy(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = PlainCopy(e)
		}
		return s
	}
	return v
}

// Scribble mutates v in place, as deeply as it can: what a careless caller
// does to a map it passed to Set or got from a getter.
func Scribble(v any) {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			Scribble(e)
		}
		for k := range x {
			x[k] = "scribbled"
		}
		x["scribbled"] = true
	case []any:
		for _, e := range x {
			Scribble(e)
		}
		for i := range x {
			x[i] = "scribbled"
		}
	}
}

// NewNaive returns the unsafe pattern: a locked map that keeps what Set was
// given unless copyIn, and hands out what it keeps unless copyOut. Its view
// is a shallow clone of the top-level map, as such code usually does, so
// nested values stay shared.
func NewNaive(copyIn, copyOut bool) Store {
	return &naiveStore{copyIn: copyIn, copyOut: copyOut, m: map[string]any{}}
}

type naiveStore struct {
	copyIn, copyOut bool
	mu              sync.RWMutex
	m               map[string]any
	subs            []func(View, []string)
}

type naiveView struct {
	m       map[string]any
	copyOut bool
}

func (v naiveView) Get(key string) (any, bool) {
	x, ok := v.m[key]
	if v.copyOut {
		x = PlainCopy(x)
	}
	return x, ok
}

func (s *naiveStore) Get(key string) (any, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return naiveView{s.m, s.copyOut}.Get(key)
}

func (s *naiveStore) Set(key string, v any) error {
	if s.copyIn {
		v = PlainCopy(v)
	}
	s.mu.Lock()
	s.m[key] = v
	subs := s.subs
	s.mu.Unlock()
	for _, fn := range subs {
		fn(s.View(), []string{key})
	}
	return nil
}

func (s *naiveStore) View() View {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return naiveView{maps.Clone(s.m), s.copyOut}
}

func (s *naiveStore) OnChange(fn func(View, []string), _ ...string) func() {
	s.mu.Lock()
	s.subs = append(s.subs, fn)
	s.mu.Unlock()
	return func() {}
}

// genValue is a self-consistent value: every number in it is g. Any
// mutation that leaks into the store breaks that consistency.
func genValue(g int) map[string]any {
	return map[string]any{"gen": g, "list": []any{g, g}, "sub": map[string]any{"gen": g}}
}

// generation returns g if v is exactly genValue(g).
func generation(v any) (int, bool) {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 3 {
		return 0, false
	}
	g, ok := m["gen"].(int)
	if !ok {
		return 0, false
	}
	l, ok := m["list"].([]any)
	if !ok || len(l) != 2 || l[0] != g || l[1] != g {
		return 0, false
	}
	sub, ok := m["sub"].(map[string]any)
	if !ok || len(sub) != 1 || sub["gen"] != g {
		return 0, false
	}
	return g, true
}

type harness struct {
	s          Store
	steps      int
	violations atomic.Int64
	mu         sync.Mutex
	first      []string

	writes    [4]atomic.Int64 // Sets per key
	delivered [4]int          // written only by the subscriber, whose calls never overlap
	lastSeen  [4]int          // likewise
}

func (h *harness) violate(format string, args ...any) {
	h.violations.Add(1)
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.first) < 5 {
		h.first = append(h.first, fmt.Sprintf(format, args...))
	}
}

// actor is one participant; step is called steps times.
type actor func(i int)

func (h *harness) writer(k int) actor {
	return func(i int) {
		v := genValue(i + 1)
		if err := h.s.Set(harnessKeys[k], v); err != nil {
			h.violate("Set: %v", err)
			return
		}
		h.writes[k].Add(1)
		Scribble(v) // mutate what was passed to Set
	}
}

func (h *harness) reader() actor {
	var last [4]int // per reader: reads of one key must not go back in time
	return func(int) {
		for k, key := range harnessKeys {
			v, ok := h.s.Get(key)
			if !ok {
				continue
			}
			g, ok := generation(v)
			if !ok {
				h.violate("reader: %s = %v", key, v)
			} else if g < last[k] {
				h.violate("reader: %s went back from %d to %d", key, last[k], g)
			} else {
				last[k] = g
			}
			Scribble(v) // mutate what a getter returned
		}
	}
}

func (h *harness) snapshotter() actor {
	return func(int) {
		view := h.s.View()
		for _, key := range harnessKeys {
			v1, ok := view.Get(key)
			if !ok {
				continue
			}
			g1, ok1 := generation(v1)
			Scribble(v1)
			v2, _ := view.Get(key)
			g2, ok2 := generation(v2)
			if !ok1 || !ok2 || g1 != g2 {
				h.violate("snapshot: %s read %v then %v", key, v1, v2)
			}
		}
	}
}

func (h *harness) mutator() actor {
	return func(i int) {
		key := harnessKeys[i%len(harnessKeys)]
		if v, ok := h.s.Get(key); ok {
			Scribble(v)
		}
		if v, ok := h.s.View().Get(key); ok {
			Scribble(v)
		}
	}
}

// subscribe checks every delivered change: well formed, in order, and
// (at the end) once per write.
func (h *harness) subscribe() (cancel func()) {
	return h.s.OnChange(func(v View, keys []string) {
		for _, key := range keys {
			k := int(key[1] - '0')
			x, _ := v.Get(key)
			g, ok := generation(x)
			switch {
			case !ok:
				h.violate("subscriber: %s = %v", key, x)
			case g <= h.lastSeen[k]:
				h.violate("subscriber: %s delivered %d after %d", key, g, h.lastSeen[k])
			default:
				h.lastSeen[k] = g
			}
			h.delivered[k]++
			Scribble(x)
		}
	}, harnessKeys...)
}

func (h *harness) actors() []actor {
	acts := []actor{h.reader(), h.reader(), h.snapshotter(), h.mutator()}
	for k := range harnessKeys {
		acts = append(acts, h.writer(k))
	}
	return acts
}

// runConcurrent gives every actor its own goroutine.
func (h *harness) runConcurrent() {
	cancel := h.subscribe()
	defer cancel()
	var wg sync.WaitGroup
	for _, a := range h.actors() {
		wg.Go(func() {
			for i := range h.steps {
				a(i)
			}
		})
	}
	wg.Wait()
}

// runSequenced interleaves the same actors round-robin in one goroutine.
func (h *harness) runSequenced() {
	cancel := h.subscribe()
	defer cancel()
	acts := h.actors()
	for i := range h.steps {
		for _, a := range acts {
			a(i)
		}
	}
}

// finish adds the end-of-run checks: every write delivered exactly once.
func (h *harness) finish() {
	for k := range harnessKeys {
		if w := h.writes[k].Load(); int64(h.delivered[k]) != w {
			h.violate("subscriber: %s got %d changes for %d writes", harnessKeys[k], h.delivered[k], w)
		}
	}
}
