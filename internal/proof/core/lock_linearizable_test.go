package core_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/anishathalye/porcupine"

	"github.com/agentstate/core/core"
	"github.com/agentstate/core/internal/linhist"
)

// lockModel is the sequential specification of Lock: the first call for a
// name may return any mutex; every later call returns that one. Histories are
// partitioned by name, so the state is just the mutex of one name.
var lockModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		byName := map[string][]porcupine.Operation{}
		var order []string
		for _, op := range h {
			n := op.Input.(string)
			if _, ok := byName[n]; !ok {
				order = append(order, n)
			}
			byName[n] = append(byName[n], op)
		}
		out := make([][]porcupine.Operation, 0, len(order))
		for _, n := range order {
			out = append(out, byName[n])
		}
		return out
	},
	Init: func() any { return (*sync.Mutex)(nil) },
	Step: func(state, input, output any) (bool, any) {
		cur, got := state.(*sync.Mutex), output.(*sync.Mutex)
		if cur == nil {
			return got != nil, got
		}
		return got == cur, cur
	},
	DescribeOperation: func(input, output any) string {
		return fmt.Sprintf("Lock(%q) -> %p", input, output)
	},
}

// lockHistory records Lock calls of clients goroutines, each calling get for
// the names of a round in its own random order, released together; the call
// and return of every operation are stamped with a logical clock. Each round
// has a clock of its own: names are unique to their round and lockModel
// checks each name apart, so stamps are only ever compared within a round.
func lockHistory(get func(string) *sync.Mutex, clients, rounds, namesPerRound int) []porcupine.Operation {
	var hist []porcupine.Operation
	for r := range rounds {
		names := make([]string, namesPerRound)
		for i := range names {
			names[i] = fmt.Sprintf("r%d/n%d", r, i)
		}
		orders := make([][]int, clients)
		for c := range orders {
			orders[c] = rand.Perm(len(names))
		}
		hist = append(hist, linhist.Record(clients, namesPerRound,
			func(c, i int) string { return names[orders[c][i]] },
			func(_ int, name string) *sync.Mutex { return get(name) })...)
	}
	return hist
}

// TestLockLinearizable checks the history of Core.Lock against lockModel
// with porcupine. (The test inside package core, TestLockFirstCallersShareOneMutex,
// also widens the window between miss and create with a yield.)
func TestLockLinearizable(t *testing.T) {
	rounds := 50
	if os.Getenv("SOAK") == "1" {
		rounds = 1000
	}
	c, err := core.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Shutdown(context.Background())
	h := lockHistory(c.Lock, 8, rounds, 4)
	if res := porcupine.CheckOperations(lockModel, h); !res {
		t.Fatalf("history of %d Lock calls is not linearizable", len(h))
	}
}

// checkThenCreate is the unsafe pattern, kept as the control: look the
// name up, and if it is missing create a mutex and store it, with a yield
// in between. Two first callers can both miss, and each returns its own
// mutex.
type checkThenCreate struct{ m sync.Map }

func (t *checkThenCreate) get(name string) *sync.Mutex {
	if mu, ok := t.m.Load(name); ok {
		return mu.(*sync.Mutex)
	}
	mu := new(sync.Mutex)
	runtime.Gosched()
	t.m.Store(name, mu)
	return mu
}

// TestLockLinearizableControl: a check-then-create fails the same
// check.
func TestLockLinearizableControl(t *testing.T) {
	var tab checkThenCreate
	h := lockHistory(tab.get, 8, 50, 4)
	if porcupine.CheckOperations(lockModel, h) {
		t.Fatalf("control: check-then-create produced a linearizable history of %d calls; the checker cannot see the bug", len(h))
	}
}
