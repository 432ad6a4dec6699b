//go:build linux

package status_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentstate/core/status"
	"github.com/anishathalye/porcupine"
	"golang.org/x/sys/unix"
)

// Linearizability of histories over two documents a and b, across
// processes: transactions that add to both, Mutate calls that add to one,
// and LoadAll reads of both. Each operation is stamped with
// CLOCK_MONOTONIC (one clock for the machine) just before it starts and
// just after it returns, so its real interval lies within the recorded one.
// The model is the pair of counts; a transaction must appear atomic. The
// CONTROL makes each transaction two Mutate calls (a, then b): the
// checker must find the history not linearizable.

type txLinIn struct {
	Op     string // "tx", "a", "b" or "read"
	DA, DB int
}

type txLinOut struct {
	A, B int
	Err  string
}

type txLinRecord struct {
	Client       int
	In           txLinIn
	Out          txLinOut
	Call, Return int64
}

func monotonic() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err) // cannot fail with a valid clock and pointer
	}
	return ts.Nano()
}

type txLinDocs struct{ a, b *status.Store[counter] }

func openTxLinDocs(dir string) txLinDocs {
	return txLinDocs{status.NewStore[counter](filepath.Join(dir, "a.json")), status.NewStore[counter](filepath.Join(dir, "b.json"))}
}

func (d txLinDocs) do(ctx context.Context, variant string, in txLinIn) txLinOut {
	var out txLinOut
	var err error
	switch in.Op {
	case "tx":
		if variant == "two" {
			var ca, cb counter
			if ca, err = d.a.Mutate(ctx, func(c *counter) error { c.N += in.DA; return nil }); err == nil {
				cb, err = d.b.Mutate(ctx, func(c *counter) error { c.N += in.DB; return nil })
			}
			out = txLinOut{A: ca.N, B: cb.N}
			break
		}
		var ca, cb counter
		cb, ca, err = status.MutateAll2(ctx, d.b, d.a, func(b, a *counter) error {
			a.N += in.DA
			b.N += in.DB
			return nil
		})
		if err == nil {
			out = txLinOut{A: ca.N, B: cb.N}
		}
	case "a", "b":
		s := d.a
		if in.Op == "b" {
			s = d.b
		}
		var c counter
		c, err = s.Mutate(ctx, func(c *counter) error { c.N += in.DA; return nil })
		out = txLinOut{A: c.N}
	case "read":
		var tx *status.Tx
		if tx, err = status.LoadAll(ctx, d.a, d.b); err == nil {
			out = txLinOut{A: inTx(d.a, tx).N, B: inTx(d.b, tx).N}
		}
	}
	if err != nil {
		out.Err = err.Error()
	}
	return out
}

var _ = cpRegister("txlin", func(a cpArgs, out *cpReporter) error {
	d := openTxLinDocs(a.Path)
	ctx := context.Background()
	if err := cpGate(out); err != nil {
		return err
	}
	var wg sync.WaitGroup
	for g := range a.Goroutines {
		client := a.Client*a.Goroutines + g
		rng := rand.New(rand.NewPCG(a.Seed, uint64(client)))
		wg.Go(func() {
			for range a.Iterations {
				in := txLinIn{Op: []string{"tx", "tx", "a", "b", "read"}[rng.IntN(5)], DA: 1 + rng.IntN(5), DB: 1 + rng.IntN(5)}
				call := monotonic()
				o := d.do(ctx, a.Writer, in)
				ret := monotonic()
				out.json("op", txLinRecord{Client: client, In: in, Out: o, Call: call, Return: ret})
			}
		})
	}
	wg.Wait()
	return out.line("done")
})

var txLinModel = porcupine.Model{
	Init: func() any { return [2]int{} },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.([2]int), input.(txLinIn), output.(txLinOut)
		if out.Err != "" {
			return false, s
		}
		switch in.Op {
		case "tx":
			n := [2]int{s[0] + in.DA, s[1] + in.DB}
			return out.A == n[0] && out.B == n[1], n
		case "a":
			return out.A == s[0]+in.DA, [2]int{s[0] + in.DA, s[1]}
		case "b":
			return out.A == s[1]+in.DA, [2]int{s[0], s[1] + in.DA}
		}
		return out.A == s[0] && out.B == s[1], s
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(txLinIn), output.(txLinOut)
		return fmt.Sprintf("%s(%d,%d) -> (%d,%d) %s", in.Op, in.DA, in.DB, out.A, out.B, out.Err)
	},
}

// txLinHistory runs procs children of goroutines clients, and the
// children that each of extra starts in the documents' directory (with the
// seed and the first client ID left to them), and returns the merged
// history.
func txLinHistory(t *testing.T, variant string, procs, goroutines, ops int, extra ...func(t *testing.T, dir string, seed uint64, client int) *cpChild) []porcupine.Operation {
	dir := t.TempDir()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	var cs []*cpChild
	for p := range procs {
		cs = append(cs, cpStartGo(t, fmt.Sprintf("txlin %d", p), "txlin", cpArgs{Path: dir, Writer: variant, Client: p, Goroutines: goroutines, Iterations: ops, Seed: seed}))
	}
	for i, start := range extra {
		cs = append(cs, start(t, dir, seed, procs*goroutines+i))
	}
	cpRelease(t, cs)
	var hist []porcupine.Operation
	for _, c := range cs {
		for {
			l, ok := c.next()
			if !ok || l == "done" {
				break
			}
			var r txLinRecord
			if err := json.Unmarshal([]byte(l[len("op "):]), &r); err != nil {
				t.Fatalf("%s: %q: %v", c.name, l, err)
			}
			if r.Out.Err != "" {
				t.Fatalf("%s: operation failed: %+v", c.name, r)
			}
			hist = append(hist, porcupine.Operation{ClientId: r.Client, Input: r.In, Call: r.Call, Output: r.Out, Return: r.Return})
		}
		c.mustExit(t)
	}
	return hist
}

func TestTxLinearizableAcrossProcesses(t *testing.T) {
	hist := txLinHistory(t, "tx", 4, 2, 30)
	res := porcupine.CheckOperationsTimeout(txLinModel, hist, time.Minute)
	if res != porcupine.Ok {
		t.Fatalf("history of %d operations over two documents: %v, want linearizable", len(hist), res)
	}
	t.Logf("%d operations: linearizable", len(hist))
}

// CONTROL: the same history with each transaction as two Mutate calls.
func TestTxLinearizableControlTwoMutates(t *testing.T) {
	hist := txLinHistory(t, "two", 4, 2, 30)
	res := porcupine.CheckOperationsTimeout(txLinModel, hist, time.Minute)
	if res != porcupine.Illegal {
		t.Fatalf("CONTROL: two Mutate calls per transaction gave a history that checks as %v, want Illegal: the checker cannot see a torn transaction", res)
	}
	t.Logf("%d operations with two Mutate calls per transaction: not linearizable, as expected", len(hist))
}
