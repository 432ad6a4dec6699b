package status

import (
	"context"
	"log/slog"
	"testing"
)

// BenchmarkObserver measures the cost of observability: a Mutate with no
// Observer (the context lookup and one atomic load), next to one whose
// context carries an Observer that logs through a discarding slog handler
// (clock reads, the Call, the handler). "noop" Mutates change nothing, so
// nothing is written and the engine's own overhead is not hidden behind a
// durable write; "write" Mutates increment runs and write durably.
func BenchmarkObserver(b *testing.B) {
	logger := slog.New(slog.DiscardHandler)
	observed := WithObserver(context.Background(), &Observer{Done: func(c CallReport) {
		logger.Debug("status", "call", c)
	}})
	for _, tc := range []struct {
		name string
		fn   func(*Status) error
	}{
		{"noop", func(*Status) error { return nil }},
		{"write", func(s *Status) error { s.Runs++; return nil }},
	} {
		for _, mode := range []struct {
			name string
			ctx  context.Context
		}{
			{"unobserved", context.Background()},
			{"observed", observed},
		} {
			b.Run(tc.name+"/"+mode.name, func(b *testing.B) {
				path := benchPath(b)
				b.ReportAllocs()
				for b.Loop() {
					if _, err := Mutate(mode.ctx, path, tc.fn); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
