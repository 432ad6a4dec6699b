package logger

import (
	"log/slog"
	"sync"
	"testing"
)

// Run: go test -run='^$' -bench=. -benchmem -cpu 1,2 ./logger
//
// Baselines in the same run: slog.Default (an atomic load in log/slog) and
// a *slog.Logger behind a sync.RWMutex.

var sinkLogger *slog.Logger

type rwDefault struct {
	mu sync.RWMutex
	l  *slog.Logger
}

func (d *rwDefault) get() *slog.Logger {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.l
}

func BenchmarkDefault(b *testing.B) {
	Default()
	rw := &rwDefault{l: slog.Default()}
	b.Run("impl=logger", func(b *testing.B) {
		for b.Loop() {
			sinkLogger = Default()
		}
	})
	b.Run("impl=slog.Default", func(b *testing.B) {
		for b.Loop() {
			sinkLogger = slog.Default()
		}
	})
	b.Run("impl=rwmutex", func(b *testing.B) {
		for b.Loop() {
			sinkLogger = rw.get()
		}
	})
}

func BenchmarkDefaultParallel(b *testing.B) {
	Default()
	rw := &rwDefault{l: slog.Default()}
	run := func(name string, get func() *slog.Logger) {
		b.Run(name, func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if get() == nil {
						b.Error("nil logger")
					}
				}
			})
		})
	}
	run("impl=logger", Default)
	run("impl=slog.Default", slog.Default)
	run("impl=rwmutex", rw.get)
}

// BenchmarkInfoDisabled: a filtered-out helper call must stay cheap.
func BenchmarkInfoDisabled(b *testing.B) {
	restore, _ := SetDefault(slog.New(slog.DiscardHandler))
	defer restore()
	for b.Loop() {
		Info("msg", "k", 1)
	}
}
