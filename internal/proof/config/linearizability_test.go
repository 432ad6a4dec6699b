package config_test

import (
	"sync"
	"testing"

	"github.com/agentstate/core/config"
	"github.com/agentstate/core/internal/linhist"
	"github.com/anishathalye/porcupine"
)

// Linearizability of Set, Get and multi-key Snapshot reads, checked by
// porcupine against a sequential model of three integer registers. A
// snapshot read returns all three values, so a torn snapshot (values from
// two versions) is as illegal as a stale Get.

const linKeys = 3

type linInput struct {
	op    string // "set", "get", "snap"
	key   int
	value int
}

type linState [linKeys]int

var linModel = porcupine.Model{
	Init: func() any { return linState{} },
	Step: func(state, input, output any) (bool, any) {
		s, in := state.(linState), input.(linInput)
		switch in.op {
		case "set":
			s[in.key] = in.value
			return true, s
		case "get":
			return output.(int) == s[in.key], s
		default:
			return output.(linState) == s, s
		}
	},
}

type linStore interface {
	Set(key string, v any) error
	Int(key string) int
	snap() linState
}

type linConfig struct{ *config.Config }

func (c linConfig) Int(key string) int { return c.Snapshot().Int(key) }

var linNames = [linKeys]string{"r0", "r1", "r2"}

func (c linConfig) snap() linState {
	s := c.Snapshot()
	var out linState
	for i, k := range linNames {
		out[i] = s.Int(k)
	}
	return out
}

// linRecord runs clients concurrently and records their history on a
// shared logical clock.
func linRecord(s linStore, clients, opsPerClient int) []porcupine.Operation {
	next := func(c, i int) linInput {
		in := linInput{op: []string{"set", "get", "snap"}[i%3], key: (c + i/3) % linKeys}
		if in.op == "set" {
			in.value = c*100000 + i + 1 // unique: keeps the search small
		}
		return in
	}
	return linhist.Record(clients, opsPerClient, next, func(_ int, in linInput) any {
		switch in.op {
		case "set":
			_ = s.Set(linNames[in.key], in.value)
			return nil
		case "get":
			return s.Int(linNames[in.key])
		default:
			return s.snap()
		}
	})
}

func TestLinearizable(t *testing.T) {
	hist := linRecord(linConfig{config.New()}, 6, 300)
	if res := porcupine.CheckOperationsTimeout(linModel, hist, 0); res != porcupine.Ok {
		t.Fatalf("history of %d operations is %s", len(hist), res)
	}
}

// staleStore is the control: reads are served from a copy refreshed only
// on every fourth write, the "copy taken at the wrong moment" bug. A client
// that writes then reads sees its own write missing, which porcupine must
// reject whatever the interleaving.
type staleStore struct {
	mu     sync.Mutex
	live   linState
	cached linState
	writes int
}

func (s *staleStore) Set(key string, v any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, k := range linNames {
		if k == key {
			s.live[i] = v.(int)
		}
	}
	if s.writes++; s.writes%4 == 0 {
		s.cached = s.live
	}
	return nil
}

func (s *staleStore) Int(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, k := range linNames {
		if k == key {
			return s.cached[i]
		}
	}
	return 0
}

func (s *staleStore) snap() linState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cached
}

func TestLinearizableControlIsCaught(t *testing.T) {
	hist := linRecord(&staleStore{}, 6, 300)
	if res := porcupine.CheckOperationsTimeout(linModel, hist, 0); res != porcupine.Illegal {
		t.Fatalf("porcupine did not reject the stale-read control: %s", res)
	}
}
