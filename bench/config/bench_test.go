package config_test

import (
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"

	"github.com/agentstate/core/config"
	"github.com/knadh/koanf/v2"
)

// Benchmarks put Config next to two baselines in the same run:
//   - rwmutex: a map[string]any behind a sync.RWMutex, keyed by the
//     flattened dotted key (the usual hand-rolled store, at its best);
//   - koanf: github.com/knadh/koanf/v2, loaded through its Set.
//
// Run (in bench/): go test -run='^$' -bench=. -benchmem -cpu 1,2 ./config

var sinkInt int
var sinkString string
var sinkAny any
var sinkMap map[string]string
var sinkErr error

type rwStore struct {
	mu sync.RWMutex
	m  map[string]any
}

func (s *rwStore) get(key string) (any, bool) {
	s.mu.RLock()
	v, ok := s.m[key]
	s.mu.RUnlock()
	return v, ok
}

func (s *rwStore) int(key string) int {
	v, _ := s.get(key)
	n, _ := v.(int)
	return n
}

// stringMapCopy is the baseline's safe map getter: a copy under the lock.
func (s *rwStore) stringMapCopy(key string) map[string]string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	m, _ := s.m[key].(map[string]string)
	return maps.Clone(m)
}

func tenEntries() map[string]string {
	m := make(map[string]string, 10)
	for i := range 10 {
		m[fmt.Sprintf("key%d", i)] = fmt.Sprintf("value%d", i)
	}
	return m
}

type fixtures struct {
	c  *config.Config
	rw *rwStore
	k  *koanf.Koanf
}

// newFixtures stores the same content in all three: a flat int, a nested
// int, a 10-entry map of strings, and 20 filler keys.
func newFixtures(b *testing.B) fixtures {
	f := fixtures{c: config.New(), rw: &rwStore{m: map[string]any{}}, k: koanf.New(".")}
	set := func(key string, v any) {
		if err := f.c.Set(key, v); err != nil {
			b.Fatal(err)
		}
		if err := f.k.Set(key, v); err != nil {
			b.Fatal(err)
		}
		f.rw.m[key] = v
	}
	for i := range 20 {
		set(fmt.Sprintf("filler%d", i), i)
	}
	set("port", 8080)
	set("db.pool.size", 16)
	set("labels", tenEntries())
	if f.c.Snapshot().Int("port") != 8080 || f.k.Int("port") != 8080 || f.rw.int("port") != 8080 ||
		f.c.Snapshot().Int("db.pool.size") != 16 || f.k.Int("db.pool.size") != 16 ||
		len(f.c.Snapshot().StringMap("labels")) != 10 || len(f.k.StringMap("labels")) != 10 {
		b.Fatal("fixtures disagree")
	}
	return f
}

func BenchmarkScalarGet(b *testing.B) {
	f := newFixtures(b)
	for _, key := range []string{"port", "db.pool.size"} {
		b.Run("key="+key+"/impl=config", func(b *testing.B) {
			for b.Loop() {
				sinkInt = f.c.Snapshot().Int(key)
			}
		})
		b.Run("key="+key+"/impl=config-Get", func(b *testing.B) {
			for b.Loop() {
				sinkAny, _ = f.c.Snapshot().Get(key)
			}
		})
		b.Run("key="+key+"/impl=snapshot", func(b *testing.B) {
			s := f.c.Snapshot()
			for b.Loop() {
				sinkInt = s.Int(key)
			}
		})
		b.Run("key="+key+"/impl=rwmutex", func(b *testing.B) {
			for b.Loop() {
				sinkInt = f.rw.int(key)
			}
		})
		// The rejected alternative: no flat index, walk the tree per read.
		tree := f.c.Snapshot().All()
		b.Run("key="+key+"/impl=walk-tree", func(b *testing.B) {
			for b.Loop() {
				sinkInt, _ = walk(tree, key).(int)
			}
		})
		b.Run("key="+key+"/impl=koanf", func(b *testing.B) {
			for b.Loop() {
				sinkInt = f.k.Int(key)
			}
		})
	}
}

// walk finds a dotted key by descending the nested maps, without
// allocating (strings.Cut, not strings.Split).
func walk(m map[string]any, key string) any {
	for {
		seg, rest, more := strings.Cut(key, ".")
		v := m[seg]
		if !more {
			return v
		}
		if m, _ = v.(map[string]any); m == nil {
			return nil
		}
		key = rest
	}
}

func BenchmarkScalarGetParallel(b *testing.B) {
	f := newFixtures(b)
	run := func(name string, get func() int) {
		b.Run(name, func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				n := 0
				for pb.Next() {
					n += get()
				}
				if n < 0 {
					b.Error("impossible sum") // keeps n, and so the reads, alive
				}
			})
		})
	}
	run("impl=config", func() int { return f.c.Snapshot().Int("port") })
	run("impl=rwmutex", func() int { return f.rw.int("port") })
	run("impl=koanf", func() int { return f.k.Int("port") })
}

func BenchmarkMapGet(b *testing.B) {
	f := newFixtures(b)
	b.Run("impl=config/StringMap", func(b *testing.B) {
		for b.Loop() {
			sinkMap = f.c.Snapshot().StringMap("labels")
		}
	})
	b.Run("impl=config/Get", func(b *testing.B) {
		for b.Loop() {
			sinkAny, _ = f.c.Snapshot().Get("labels")
		}
	})
	b.Run("impl=rwmutex/copy", func(b *testing.B) {
		for b.Loop() {
			sinkMap = f.rw.stringMapCopy("labels")
		}
	})
	b.Run("impl=rwmutex/by-reference-UNSAFE", func(b *testing.B) {
		for b.Loop() {
			sinkAny, _ = f.rw.get("labels")
		}
	})
	b.Run("impl=koanf/StringMap", func(b *testing.B) {
		for b.Loop() {
			sinkMap = f.k.StringMap("labels")
		}
	})
	b.Run("impl=koanf/Get", func(b *testing.B) {
		for b.Loop() {
			sinkAny = f.k.Get("labels")
		}
	})
}

func BenchmarkMapGetParallel(b *testing.B) {
	f := newFixtures(b)
	run := func(name string, get func() map[string]string) {
		b.Run(name, func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if len(get()) != 10 {
						b.Error("wrong map")
					}
				}
			})
		})
	}
	run("impl=config", func() map[string]string { return f.c.Snapshot().StringMap("labels") })
	run("impl=rwmutex/copy", func() map[string]string { return f.rw.stringMapCopy("labels") })
	run("impl=koanf", func() map[string]string { return f.k.StringMap("labels") })
}

// BenchmarkSet shows the price of copy-on-write: every Set rebuilds the
// flat index of a 23-key config.
func BenchmarkSet(b *testing.B) {
	f := newFixtures(b)
	b.Run("impl=config", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			_ = f.c.Set("db.pool.size", i)
		}
	})
	b.Run("impl=rwmutex", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			f.rw.mu.Lock()
			f.rw.m["db.pool.size"] = i
			f.rw.mu.Unlock()
		}
	})
	b.Run("impl=koanf", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			_ = f.k.Set("db.pool.size", i)
		}
	})
}

// BenchmarkConvert reads values in the forms a loaded file gives (an int64,
// a list of strings) through each of the ways a caller converts them; they
// share one set of rules (see config.Decode).
func BenchmarkConvert(b *testing.B) {
	c := config.New()
	if err := c.Load(strings.NewReader(`{"port": 8080, "queues": ["a", "b", "c"], "db": {"host": "h", "port": 5432}}`)); err != nil {
		b.Fatal(err)
	}
	type db struct {
		Host string
		Port int
	}
	b.Run("read=Int", func(b *testing.B) {
		for b.Loop() {
			sinkInt = c.Snapshot().Int("port")
		}
	})
	b.Run("read=Lookup-int", func(b *testing.B) {
		for b.Loop() {
			_ = c.Snapshot().Lookup("port", &sinkInt)
		}
	})
	b.Run("read=Decode-int", func(b *testing.B) {
		for b.Loop() {
			sinkInt, _ = config.Decode[int](c.Snapshot(), "port")
		}
	})
	b.Run("read=Lookup-missing", func(b *testing.B) {
		for b.Loop() {
			sinkErr = c.Snapshot().Lookup("db.missing", &sinkInt)
		}
	})
	b.Run("read=StringSlice", func(b *testing.B) {
		for b.Loop() {
			sinkAny = c.Snapshot().StringSlice("queues")
		}
	})
	b.Run("read=StringSlice-missing", func(b *testing.B) {
		for b.Loop() {
			sinkAny = c.Snapshot().StringSlice("missing")
		}
	})
	b.Run("read=StringMap-of-a-list", func(b *testing.B) {
		for b.Loop() {
			sinkMap = c.Snapshot().StringMap("queues")
		}
	})
	b.Run("read=Lookup-strings", func(b *testing.B) {
		var s []string
		for b.Loop() {
			_ = c.Snapshot().Lookup("queues", &s)
		}
		sinkAny = s
	})
	b.Run("read=Lookup-struct", func(b *testing.B) {
		var d db
		for b.Loop() {
			_ = c.Snapshot().Lookup("db", &d)
		}
		sinkAny = d
	})
	b.Run("read=Decode-struct", func(b *testing.B) {
		for b.Loop() {
			sinkAny, _ = config.Decode[db](c.Snapshot(), "db")
		}
	})
}
