package config_test

import (
	"os"
	"testing"

	"github.com/agentstate/core/config"
	"github.com/agentstate/core/internal/sharecheck"
)

// The harness (internal/sharecheck) drives a store with writers, readers,
// snapshot takers, a subscriber and mutators of returned values, and checks
// the *content* of everything it reads. It runs the real Config
// concurrently (under -race: zero races) and sequenced, and runs naive
// controls sequenced, where sharing cannot be a data race the detector
// would flag, only a visible change that the content checks must catch.

// configStore adapts *config.Config.
type configStore struct{ c *config.Config }

func (s configStore) Get(key string) (any, bool)  { return s.c.Snapshot().Get(key) }
func (s configStore) Set(key string, v any) error { return s.c.Set(key, v) }
func (s configStore) View() sharecheck.View       { return s.c.Snapshot() }
func (s configStore) OnChange(fn func(sharecheck.View, []string), keys ...string) func() {
	return s.c.OnChange(func(ch config.Change) { fn(ch.New, ch.Keys) }, keys...)
}

func harnessSteps() int {
	if os.Getenv("SOAK") != "" {
		return 20000
	}
	return 2000
}

func TestHarnessConfigConcurrent(t *testing.T) {
	r := sharecheck.Run(configStore{config.New()}, harnessSteps(), true)
	if r.Violations != 0 {
		t.Fatalf("%d visible changes, first: %q", r.Violations, r.First)
	}
}

func TestHarnessConfigSequenced(t *testing.T) {
	r := sharecheck.Run(configStore{config.New()}, harnessSteps(), false)
	if r.Violations != 0 {
		t.Fatalf("%d visible changes, first: %q", r.Violations, r.First)
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
			r := sharecheck.Run(sharecheck.NewNaive(tc.copyIn, tc.copyOut), 50, false)
			if r.Violations == 0 {
				t.Fatal("the harness did not detect the shared maps of the control")
			}
			t.Logf("control caught: %d visible changes, e.g. %s", r.Violations, r.First[0])
		})
	}
}
