package linhist_test

import (
	"sync"
	"testing"

	"github.com/anishathalye/porcupine"
	"go.uber.org/goleak"

	"github.com/agentstate/core/internal/linhist"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type input struct{ client, i int }

// checkStamps fails t unless hist holds ops operations of each of clients
// clients, each op's call before its return, and each client's operations
// in order, each called after the previous one returned; stamps are unique.
func checkStamps(t *testing.T, hist []porcupine.Operation, clients, ops int) {
	t.Helper()
	if len(hist) != clients*ops {
		t.Fatalf("recorded %d operations, want %d", len(hist), clients*ops)
	}
	last := make([]int64, clients) // return stamp of the client's previous operation
	count := make([]int, clients)
	seen := map[int64]bool{}
	byClient := make([][]porcupine.Operation, clients)
	for _, op := range hist {
		if op.ClientId < 0 || op.ClientId >= clients {
			t.Fatalf("operation of unknown client %d", op.ClientId)
		}
		byClient[op.ClientId] = append(byClient[op.ClientId], op)
	}
	for c, h := range byClient {
		for i, op := range h {
			if in := op.Input.(input); in != (input{c, i}) {
				t.Fatalf("client %d: operation %d has input %+v (out of order?)", c, i, in)
			}
			if op.Output.(int) != c*1000+i {
				t.Fatalf("client %d: operation %d has output %v", c, i, op.Output)
			}
			if !(last[c] < op.Call && op.Call < op.Return) {
				t.Fatalf("client %d: operation %d stamped call %d return %d after a return at %d", c, i, op.Call, op.Return, last[c])
			}
			for _, s := range []int64{op.Call, op.Return} {
				if seen[s] {
					t.Fatalf("stamp %d used twice", s)
				}
				seen[s] = true
			}
			last[c] = op.Return
			count[c]++
		}
		if count[c] != ops {
			t.Fatalf("client %d: %d operations, want %d", c, count[c], ops)
		}
	}
}

func TestRecord(t *testing.T) {
	const clients, ops = 5, 40
	hist := linhist.Record(clients, ops,
		func(c, i int) input { return input{c, i} },
		func(c int, in input) int { return in.client*1000 + in.i })
	checkStamps(t, hist, clients, ops)
}

// TestRecordSeesRealTimeOrder: an operation that starts after another
// returned (here: waits for it) is stamped after it, the order porcupine
// relies on.
func TestRecordSeesRealTimeOrder(t *testing.T) {
	var r linhist.Recorder
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		<-done
		r.Do(1, input{1, 0}, func() any { return 1000 })
	})
	r.Do(0, input{0, 0}, func() any { return 0 })
	close(done)
	wg.Wait()
	hist := r.Operations()
	checkStamps(t, hist, 2, 1)
	first, second := hist[0], hist[1]
	if first.ClientId != 0 || !(first.Return < second.Call) {
		t.Fatalf("history %+v: client 1 was called after client 0 returned, but the stamps do not say so", hist)
	}
}
