package etcdstore

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/agentstate/core/status"
)

// txPair returns two documents on one With.
func txPair(t *testing.T, opt status.Option) (*status.Store[counter], *status.Store[counter]) {
	return status.NewStore[counter](docPath(t), opt), status.NewStore[counter](docPath(t), opt)
}

func addBoth(a, b *status.Store[counter], calls *int) func(*status.Tx) error {
	return func(tx *status.Tx) error {
		*calls++
		for _, s := range []*status.Store[counter]{a, b} {
			c, err := s.In(tx)
			if err != nil {
				return err
			}
			c.N++
		}
		return nil
	}
}

// TestTxExactlyOnce: a transaction whose commit request or response is
// lost is applied exactly once, its last fn call being the one committed.
func TestTxExactlyOnce(t *testing.T) {
	endpoint := sharedServer(t).Endpoint()
	direct := newClient(t, endpoint)
	for _, tc := range []struct {
		name              string
		loseReq, loseResp int64
		wantCalls         int
	}{
		{"response lost", 0, 1, 1},
		{"request lost", 1, 0, 2},
		{"two requests, then a response lost", 2, 1, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &faults{}
			f.loseRequest.Store(tc.loseReq)
			f.loseResponse.Store(tc.loseResp)
			cli := newFaultyClient(t, []string{endpoint}, f)
			a, b := txPair(t, With(cli, WithBackoff(time.Microsecond, time.Millisecond)))
			calls := 0
			tx, err := status.MutateAll(testCtx(t), []status.AnyStore{a, b}, addBoth(a, b, &calls))
			if err != nil {
				t.Fatal(err)
			}
			if f.injected.Load() != tc.loseReq+tc.loseResp {
				t.Fatalf("injected %d faults", f.injected.Load())
			}
			for _, s := range []*status.Store[counter]{a, b} {
				got, err := status.NewStore[counter](s.Name(), With(direct)).Load(testCtx(t))
				c, cerr := s.In(tx)
				if err != nil || cerr != nil || got.N != 1 || got != *c {
					t.Fatalf("%s stored %+v (%v), returned %+v (%v): want n=1 once", s.Name(), got, err, *c, cerr)
				}
			}
			if calls != tc.wantCalls {
				t.Errorf("fn ran %d times, want %d", calls, tc.wantCalls)
			}
		})
	}
}

// TestTxOverlappingContended: transactions over overlapping sets listed in
// opposite orders, from several Withs (each its own turn lease and queue
// entries, like processes), mixed with Updates on the same keys: every
// change is kept exactly, none waits for another in a cycle (each call has
// a deadline; none may reach it), and the turns were used.
func TestTxOverlappingContended(t *testing.T) {
	endpoint := sharedServer(t).Endpoint()
	const withs, workers, rounds = 3, 4, 10
	paths := make([]string, 4)
	for i := range paths {
		paths[i] = docPath(t)
	}
	sets := [][]int{{0, 1}, {1, 2}, {2, 3, 0}, {3, 1}}
	var wg sync.WaitGroup
	var mu sync.Mutex
	txs, updates := 0, 0
	for w := range withs {
		opt := With(newClient(t, endpoint))
		for g := range workers {
			wg.Go(func() {
				stores := make([]*status.Store[counter], len(paths))
				for i, p := range paths {
					stores[i] = status.NewStore[counter](p, opt)
				}
				for r := range rounds {
					set := sets[(w+g+r)%len(sets)]
					docs := make([]status.AnyStore, len(set))
					for i, j := range set {
						docs[i] = stores[j]
					}
					if (w+g)%2 == 1 {
						for i, j := 0, len(docs)-1; i < j; i, j = i+1, j-1 {
							docs[i], docs[j] = docs[j], docs[i]
						}
					}
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					_, err := status.MutateAll(ctx, docs, func(tx *status.Tx) error {
						for _, d := range docs {
							c, err := d.(*status.Store[counter]).In(tx)
							if err != nil {
								return err
							}
							c.N++
						}
						return nil
					})
					if err == nil {
						_, err = stores[set[0]].Mutate(ctx, func(c *counter) error { c.N += 1000; return nil })
					}
					cancel()
					if err != nil {
						t.Errorf("with %d worker %d round %d: %v", w, g, r, err)
						return
					}
					mu.Lock()
					txs += len(set)
					updates++
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	stores := make([]status.AnyStore, len(paths))
	opt := With(newClient(t, endpoint))
	for i, p := range paths {
		stores[i] = status.NewStore[counter](p, opt)
	}
	tx, err := status.LoadAll(testCtx(t), stores...)
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, s := range stores {
		c, err := s.(*status.Store[counter]).In(tx)
		if err != nil {
			t.Fatal(err)
		}
		sum += c.N
	}
	if want := txs + 1000*updates; sum != want {
		t.Fatalf("documents sum to %d, want %d (%d transaction changes, %d Updates)", sum, want, txs, updates)
	}
}

// TestTxRefusesOtherClients: the documents of one transaction share one
// client; a document of another backend or client is refused.
func TestTxRefusesOtherClients(t *testing.T) {
	endpoint := sharedServer(t).Endpoint()
	a := status.NewStore[counter](docPath(t), With(newClient(t, endpoint)))
	b := status.NewStore[counter](docPath(t), With(newClient(t, endpoint)))
	file := status.NewStore[counter](docPath(t))
	root := status.NewStore[counter](docPath(t), With(newClient(t, endpoint), WithRoot(t.TempDir())))
	for _, docs := range [][]status.AnyStore{{a, b}, {a, file}, {root, a}} {
		calls := 0
		_, err := status.MutateAll(testCtx(t), docs, addBoth(a, a, &calls))
		if err == nil || calls > 0 {
			t.Fatalf("MutateAll over %s and %s: %v (fn ran %d times)", docs[0].Name(), docs[1].Name(), err, calls)
		}
		if !errors.Is(err, os.ErrInvalid) && !errors.Is(err, ErrOutsideRoot) {
			t.Errorf("error %v matches neither os.ErrInvalid nor ErrOutsideRoot", err)
		}
	}
}
