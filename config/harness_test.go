package config_test

import (
	"fmt"
	"maps"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentstate/core/config"
	"github.com/knadh/koanf/v2"
)

// The harness drives a store with writers, readers, snapshot takers, a
// subscriber and mutators of returned values, and checks the *content* of
// everything it reads. It runs the real Config concurrently (under -race:
// zero races) and sequenced, and runs two naive controls sequenced, where
// sharing cannot be a data race the detector would flag, only a visible
// change that the content checks must catch.

type view interface {
	Get(key string) (any, bool)
}

type store interface {
	view
	Set(key string, v any) error
	View() view
	OnChange(fn func(v view, keys []string), keys ...string) (cancel func())
}

// configStore adapts *config.Config.
type configStore struct{ c *config.Config }

func (s configStore) Get(key string) (any, bool)  { return s.c.Get(key) }
func (s configStore) Set(key string, v any) error { return s.c.Set(key, v) }
func (s configStore) View() view                  { return s.c.Snapshot() }
func (s configStore) OnChange(fn func(view, []string), keys ...string) func() {
	return s.c.OnChange(func(ch config.Change) { fn(ch.New, ch.Keys) }, keys...)
}

// naiveStore is the unsafe pattern: a locked map that keeps what Set was
// given (copyIn false) and hands out what it keeps (copyOut false). Its
// "snapshot" is a shallow clone of the top-level map, as such code
// usually does, so nested values stay shared.
type naiveStore struct {
	copyIn, copyOut bool
	mu              sync.RWMutex
	m               map[string]any
	subs            []func(view, []string)
}

type naiveView struct {
	m       map[string]any
	copyOut bool
}

func (v naiveView) Get(key string) (any, bool) {
	x, ok := v.m[key]
	if v.copyOut {
		x = plainCopy(x)
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
		v = plainCopy(v)
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

func (s *naiveStore) View() view {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return naiveView{maps.Clone(s.m), s.copyOut}
}

func (s *naiveStore) OnChange(fn func(view, []string), _ ...string) func() {
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

var harnessKeys = []string{"k0", "k1", "k2", "k3"}

type harness struct {
	s          store
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
		scribble(v) // mutate what was passed to Set
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
			scribble(v) // mutate what a getter returned
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
			scribble(v1)
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
			scribble(v)
		}
		if v, ok := h.s.View().Get(key); ok {
			scribble(v)
		}
	}
}

// subscribe checks every delivered change: well formed, in order, and
// (at the end) once per write.
func (h *harness) subscribe() (cancel func()) {
	return h.s.OnChange(func(v view, keys []string) {
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
			scribble(x)
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

func harnessSteps() int {
	if os.Getenv("SOAK") != "" {
		return 20000
	}
	return 2000
}

func TestHarnessConfigConcurrent(t *testing.T) {
	h := &harness{s: configStore{config.New()}, steps: harnessSteps()}
	h.runConcurrent()
	h.finish()
	if n := h.violations.Load(); n != 0 {
		t.Fatalf("%d visible changes, first: %q", n, h.first)
	}
}

func TestHarnessConfigSequenced(t *testing.T) {
	h := &harness{s: configStore{config.New()}, steps: harnessSteps()}
	h.runSequenced()
	h.finish()
	if n := h.violations.Load(); n != 0 {
		t.Fatalf("%d visible changes, first: %q", n, h.first)
	}
}

// The controls prove the harness sees the bug: the same actors, against
// stores that share maps, must report visible changes.
func TestHarnessControlsAreCaught(t *testing.T) {
	for _, tc := range []struct {
		name            string
		copyIn, copyOut bool
	}{
		{"stores and returns by reference", false, false},
		{"copies on Set, returns by reference", true, false},
		{"stores by reference, copies on Get", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &harness{s: &naiveStore{copyIn: tc.copyIn, copyOut: tc.copyOut, m: map[string]any{}}, steps: 50}
			h.runSequenced()
			h.finish()
			if h.violations.Load() == 0 {
				t.Fatal("the harness did not detect the shared maps of the control")
			}
			t.Logf("control caught: %d visible changes, e.g. %s", h.violations.Load(), h.first[0])
		})
	}
}

// koanfStore adapts koanf v2 (the peer in the benchmarks) to the harness.
// koanf has no change callbacks; the adapter calls subscribers after Set.
type koanfStore struct {
	k    *koanf.Koanf
	subs []func(view, []string)
}

type koanfView struct{ k *koanf.Koanf }

func (v koanfView) Get(key string) (any, bool) {
	if !v.k.Exists(key) {
		return nil, false
	}
	return v.k.Get(key), true
}

func (s *koanfStore) Get(key string) (any, bool) { return koanfView{s.k}.Get(key) }
func (s *koanfStore) View() view                 { return koanfView{s.k.Copy()} }
func (s *koanfStore) Set(key string, v any) error {
	if err := s.k.Set(key, v); err != nil {
		return err
	}
	for _, fn := range s.subs {
		fn(s.View(), []string{key})
	}
	return nil
}
func (s *koanfStore) OnChange(fn func(view, []string), _ ...string) func() {
	s.subs = append(s.subs, fn)
	return func() {}
}

// TestHarnessKoanf pins down the fact the design relies on (see
// docs/RFC.md (config section)): koanf v2.4.1 copies on Get but keeps the map given
// to Set by reference, so mutating it afterwards changes what readers see.
// Run sequenced: koanf locks, so sharing, not a data race, is the question.
// If a koanf upgrade makes this fail, update the RFC.
func TestHarnessKoanf(t *testing.T) {
	h := &harness{s: &koanfStore{k: koanf.New(".")}, steps: 50}
	h.runSequenced()
	h.finish()
	if h.violations.Load() == 0 {
		t.Fatal("koanf no longer shares the map passed to Set; update docs/RFC.md (config section)")
	}
	t.Logf("koanf v2: %d visible changes, e.g. %s", h.violations.Load(), h.first[0])
}
