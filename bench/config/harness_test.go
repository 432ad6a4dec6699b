package config_test

import (
	"testing"

	"github.com/knadh/koanf/v2"

	"github.com/agentstate/core/internal/sharecheck"
)

// koanfStore adapts koanf v2 (the peer in the benchmarks) to the harness
// of internal/sharecheck.
// koanf has no change callbacks; the adapter calls subscribers after Set.
type koanfStore struct {
	k    *koanf.Koanf
	subs []func(sharecheck.View, []string)
}

type koanfView struct{ k *koanf.Koanf }

func (v koanfView) Get(key string) (any, bool) {
	if !v.k.Exists(key) {
		return nil, false
	}
	return v.k.Get(key), true
}

func (s *koanfStore) Get(key string) (any, bool) { return koanfView{s.k}.Get(key) }
func (s *koanfStore) View() sharecheck.View      { return koanfView{s.k.Copy()} }
func (s *koanfStore) Set(key string, v any) error {
	if err := s.k.Set(key, v); err != nil {
		return err
	}
	for _, fn := range s.subs {
		fn(s.View(), []string{key})
	}
	return nil
}
func (s *koanfStore) OnChange(fn func(sharecheck.View, []string), _ ...string) func() {
	s.subs = append(s.subs, fn)
	return func() {}
}

// TestHarnessKoanf pins down the fact the design relies on (see
// docs/RFC.md (config section)): koanf v2.4.1 copies on Get but keeps the map given
// to Set by reference, so mutating it afterwards changes what readers see.
// Run sequenced: koanf locks, so sharing, not a data race, is the question.
// If a koanf upgrade makes this fail, update the RFC.
func TestHarnessKoanf(t *testing.T) {
	r := sharecheck.Run(&koanfStore{k: koanf.New(".")}, 50, false)
	if r.Violations == 0 {
		t.Fatal("koanf no longer shares the map passed to Set; update docs/RFC.md (config section)")
	}
	t.Logf("koanf v2: %d visible changes, e.g. %s", r.Violations, r.First[0])
}
