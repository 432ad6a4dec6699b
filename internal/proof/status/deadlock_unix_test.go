//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package status_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentstate/core/status"
)

// Deadlock freedom across processes. Four processes of two goroutines run
// transactions over overlapping sets of four documents, each listing its
// documents in the opposite order of its neighbour's, for a fixed number
// of rounds; each transaction has a deadline, and none may reach it. The
// CONTROL nests Mutate calls by hand in opposite orders in two processes
// (each holds its first document when the other asks for it): they
// deadlock until the deadline.

const deadlockDocs = 4

func deadlockStores(dir string) []*status.Store[counter] {
	ss := make([]*status.Store[counter], deadlockDocs)
	for i := range ss {
		ss[i] = status.NewStore[counter](filepath.Join(dir, fmt.Sprintf("d%d.json", i)))
	}
	return ss
}

// deadlockSets lists overlapping sets; odd processes use each reversed.
var deadlockSets = [][]int{{0, 1}, {1, 2, 3}, {3, 0}, {0, 1, 2, 3}, {2, 0}, {1, 3}}

var _ = cpRegister("txdeadlock", func(a cpArgs, out *cpReporter) error {
	ss := deadlockStores(a.Path)
	if err := cpGate(out); err != nil {
		return err
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var timeouts, done int
	for g := range a.Goroutines {
		rng := rand.New(rand.NewPCG(a.Seed, uint64(a.Client*a.Goroutines+g)))
		wg.Go(func() {
			for range a.Iterations {
				set := deadlockSets[rng.IntN(len(deadlockSets))]
				docs := make([]status.AnyStore, len(set))
				for i, j := range set {
					docs[i] = ss[j]
				}
				if (a.Client+g)%2 == 1 {
					for i, j := 0, len(docs)-1; i < j; i, j = i+1, j-1 {
						docs[i], docs[j] = docs[j], docs[i]
					}
				}
				// The deadline turns a deadlock into a count; nothing else
				// is timed.
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				_, err := status.MutateAll(ctx, docs, func(tx *status.Tx) error {
					for _, d := range docs {
						inTx(d.(*status.Store[counter]), tx).N++
					}
					return nil
				})
				cancel()
				mu.Lock()
				switch {
				case errors.Is(err, context.DeadlineExceeded):
					timeouts++
				case err != nil:
					mu.Unlock()
					out.line("error %v", err)
					return
				default:
					done++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return out.line("result %d %d", done, timeouts)
})

// The nested child holds document Proc%2 in a Mutate, reports "holding",
// waits for the parent's line, then asks for the other document with a
// short deadline: the CONTROL's hand-nested opposite order.
var _ = cpRegister("txnested", func(a cpArgs, out *cpReporter) error {
	ss := deadlockStores(a.Path)
	first, second := ss[a.Client%2], ss[1-a.Client%2]
	_, err := first.Mutate(context.Background(), func(c *counter) error {
		c.N++
		if err := out.line("holding"); err != nil {
			return err
		}
		if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := second.Mutate(ctx, func(c *counter) error { c.N++; return nil })
		if errors.Is(err, context.DeadlineExceeded) {
			return out.line("timeout")
		}
		if err != nil {
			return err
		}
		return out.line("ok")
	})
	return err
})

func TestTxNoDeadlockAcrossProcesses(t *testing.T) {
	t.Parallel()
	const procs, goroutines, rounds = 4, 2, 25
	dir := t.TempDir()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	var cs []*cpChild
	for p := range procs {
		cs = append(cs, cpStartGo(t, fmt.Sprintf("txdeadlock %d", p), "txdeadlock", cpArgs{Path: dir, Client: p, Goroutines: goroutines, Iterations: rounds, Seed: seed}))
	}
	cpRelease(t, cs)
	total := 0
	for _, c := range cs {
		var done, timeouts int
		if _, err := fmt.Sscanf(c.expect(t, "result"), "%d %d", &done, &timeouts); err != nil {
			t.Fatal(err)
		}
		c.mustExit(t)
		if timeouts > 0 || done != goroutines*rounds {
			t.Fatalf("%s: %d transactions done, %d reached their deadline; want %d done", c.name, done, timeouts, goroutines*rounds)
		}
		total += done
	}
	// Every transaction counted in each of its documents.
	tx, err := status.LoadAll(context.Background(), docsOf(deadlockStores(dir))...)
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, s := range deadlockStores(dir) {
		sum += inTx(s, tx).N
	}
	t.Logf("%d transactions over overlapping sets in opposite orders, %d document changes, no deadline reached", total, sum)
	if sum < 2*total {
		t.Fatalf("%d document changes for %d transactions of two or more documents", sum, total)
	}
}

func docsOf(ss []*status.Store[counter]) []status.AnyStore {
	ds := make([]status.AnyStore, len(ss))
	for i, s := range ss {
		ds[i] = s
	}
	return ds
}

// CONTROL: hand-nested Mutate calls in opposite orders deadlock; only the
// deadline ends the wait (then the other process gets through).
func TestTxDeadlockControlNestedMutates(t *testing.T) {
	dir := t.TempDir()
	cs := []*cpChild{cpStartGo(t, "txnested 0", "txnested", cpArgs{Path: dir, Client: 0}), cpStartGo(t, "txnested 1", "txnested", cpArgs{Path: dir, Client: 1})}
	for _, c := range cs {
		c.expect(t, "holding")
	}
	for _, c := range cs {
		io.WriteString(c.stdin, "go\n")
	}
	var results []string
	for _, c := range cs {
		l, _ := c.next()
		results = append(results, l)
		c.mustExit(t)
	}
	if !strings.Contains(strings.Join(results, " "), "timeout") {
		t.Fatalf("CONTROL: hand-nested Mutate calls in opposite orders gave %v, want a deadlock ended by a deadline", results)
	}
	t.Logf("hand-nested Mutate calls in opposite orders: %v", results)
}
