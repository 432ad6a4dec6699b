package status

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// runN runs b.N calls of op spread over n goroutines.
func runN(b *testing.B, n int, op func() error) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	for range n {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if err := op(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkEngine measures Mutate on one document from 1 and 16 goroutines,
// and MutateAll of two documents (a registry and a task, as the services
// lay them out) from 1 and 16 goroutines, next to MutateAll2 of the same
// documents.
func BenchmarkEngine(b *testing.B) {
	for _, g := range []int{1, 16} {
		b.Run("Mutate/g="+itoa(g), func(b *testing.B) {
			path := benchPath(b)
			runN(b, g, func() error { return mutateIncrement(path) })
		})
	}
	for _, g := range []int{1, 16} {
		b.Run("MutateAll/g="+itoa(g), func(b *testing.B) {
			dir := b.TempDir()
			reg := NewStore[txReg](filepath.Join(dir, "registry.json"))
			task := NewStore[Status](filepath.Join(dir, "status.json"))
			ctx := context.Background()
			runN(b, g, func() error {
				_, err := MutateAll(ctx, []AnyStore{reg, task}, bumpIn(reg, task))
				return err
			})
		})
		b.Run("MutateAll2/g="+itoa(g), func(b *testing.B) {
			dir := b.TempDir()
			reg := NewStore[txReg](filepath.Join(dir, "registry.json"))
			task := NewStore[Status](filepath.Join(dir, "status.json"))
			ctx := context.Background()
			runN(b, g, func() error {
				_, _, err := MutateAll2(ctx, reg, task, bump)
				return err
			})
		})
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// BenchmarkJoin is BenchmarkEngine with and without the joining of
// transactions queued behind a transaction's turns (see joins), alternated.
func BenchmarkJoin(b *testing.B) {
	for _, on := range []bool{true, false} {
		b.Run("join="+map[bool]string{true: "on", false: "off"}[on], func(b *testing.B) {
			s := fileSeams(b)
			s.NoJoin = !on
			defer func() { s.NoJoin = false }()
			BenchmarkEngine(b)
		})
	}
}

// memTx is a TxBackend in memory: one mutex for every document, no I/O,
// so that BenchmarkTxForms measures what the API layer costs around the
// decode and encode of each document.
type memTx struct {
	mu   *sync.Mutex
	name string
	data []byte
}

func (m *memTx) Name() string { return m.name }
func (m *memTx) Load(context.Context) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.data, nil
}
func (m *memTx) Update(ctx context.Context, apply func([]byte) ([]byte, error)) error {
	return m.UpdateAll(ctx, []Backend{m}, func(cur [][]byte) ([][]byte, error) {
		out, err := apply(cur[0])
		return [][]byte{out}, err
	})
}
func (m *memTx) UpdateAll(_ context.Context, docs []Backend, apply func([][]byte) ([][]byte, error)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := make([][]byte, len(docs))
	for i, d := range docs {
		cur[i] = d.(*memTx).data
	}
	out, err := apply(cur)
	if err != nil {
		return err
	}
	for i, d := range docs {
		d.(*memTx).data = out[i]
	}
	return nil
}

// BenchmarkTxForms puts MutateAll2 next to MutateAll with In over the same
// two documents (a registry and a status document), on a backend without
// I/O: the difference is the API's own cost.
func BenchmarkTxForms(b *testing.B) {
	mu := new(sync.Mutex)
	open := func(path string) Backend { return &memTx{mu: mu, name: path} }
	reg := NewStore[txReg]("registry.json", WithBackend(open))
	task := NewStore[Status]("status.json", WithBackend(open))
	ctx := context.Background()
	b.Run("form=MutateAll", func(b *testing.B) {
		for b.Loop() {
			if _, err := MutateAll(ctx, []AnyStore{reg, task}, bumpIn(reg, task)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("form=MutateAll2", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := MutateAll2(ctx, reg, task, bump); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// bump is the benchmarks' change: one more active task, one more run.
func bump(r *txReg, t *Status) error {
	r.Active++
	t.Runs++
	return nil
}

// bumpIn is bump through Store.In, its errors checked, as MutateAll's
// function writes it.
func bumpIn(reg *Store[txReg], task *Store[Status]) func(*Tx) error {
	return func(tx *Tx) error {
		r, err := reg.In(tx)
		if err != nil {
			return err
		}
		t, err := task.In(tx)
		if err != nil {
			return err
		}
		return bump(r, t)
	}
}
