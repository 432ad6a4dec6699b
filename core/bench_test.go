package core

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// Peers of lockTable (a map under a Mutex) for Lock: sync.Map with a Load
// fast path and LoadOrStore, and a map under an RWMutex with a read-locked
// fast path. All three are correct; the benchmarks measure their cost.

type syncMapTable struct{ m sync.Map }

func (t *syncMapTable) get(name string) *sync.Mutex {
	if mu, ok := t.m.Load(name); ok {
		return mu.(*sync.Mutex)
	}
	mu, _ := t.m.LoadOrStore(name, new(sync.Mutex))
	return mu.(*sync.Mutex)
}

type rwMapTable struct {
	mu sync.RWMutex
	m  map[string]*sync.Mutex
}

func (t *rwMapTable) get(name string) *sync.Mutex {
	t.mu.RLock()
	mu, ok := t.m[name]
	t.mu.RUnlock()
	if ok {
		return mu
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if mu, ok := t.m[name]; ok {
		return mu
	}
	mu = new(sync.Mutex)
	t.m[name] = mu
	return mu
}

var lockImpls = []struct {
	name string
	get  func() func(string) *sync.Mutex
}{
	{"mutexMap", func() func(string) *sync.Mutex { return new(lockTable).get }}, // ours
	{"syncMap", func() func(string) *sync.Mutex { return new(syncMapTable).get }},
	{"rwMutexMap", func() func(string) *sync.Mutex {
		return (&rwMapTable{m: map[string]*sync.Mutex{}}).get
	}},
}

// BenchmarkLockHit: many goroutines look up names that exist (the steady
// state of a service: one name per workspace).
func BenchmarkLockHit(b *testing.B) {
	names := make([]string, 256)
	for i := range names {
		names[i] = "org/repo/task-" + strconv.Itoa(i)
	}
	for _, impl := range lockImpls {
		b.Run(impl.name, func(b *testing.B) {
			get := impl.get()
			for _, n := range names {
				get(n)
			}
			var seq atomic.Uint32
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				i := int(seq.Add(97))
				for pb.Next() {
					get(names[i%len(names)])
					i++
				}
			})
		})
	}
}

// BenchmarkLockMiss: every call creates a name (the first-call path). The
// table is replaced (timer stopped) each time the pre-built names run out.
func BenchmarkLockMiss(b *testing.B) {
	names := make([]string, 1<<16)
	for i := range names {
		names[i] = "task-" + strconv.Itoa(i)
	}
	for _, impl := range lockImpls {
		b.Run(impl.name, func(b *testing.B) {
			get := impl.get()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if i == len(names) {
					b.StopTimer()
					get, i = impl.get(), 0
					b.StartTimer()
				}
				get(names[i])
			}
		})
	}
}

// BenchmarkGo: cost of starting and finishing a tracked task, next to a bare
// goroutine counted by a sync.WaitGroup (what an untracked `go` costs).
func BenchmarkGo(b *testing.B) {
	b.Run("core.Go", func(b *testing.B) {
		g := newTaskGroup(discard())
		b.ReportAllocs()
		for b.Loop() {
			if err := g.start("bench", func(context.Context) {}); err != nil {
				b.Fatal(err)
			}
		}
		if err := g.shutdown(context.Background()); err != nil {
			b.Fatal(err)
		}
	})
	b.Run("WaitGroup.Go", func(b *testing.B) {
		var wg sync.WaitGroup
		ctx, cancel := context.WithCancel(context.Background())
		b.ReportAllocs()
		for b.Loop() {
			wg.Go(func() { _ = ctx })
		}
		cancel()
		wg.Wait()
	})
}
