package status

import "testing"

// Temporary: the engine benchmark with nested-call detection and
// transaction joining switched on and off, sub-benchmarks interleaved.
func BenchmarkMeasure(b *testing.B) {
	for _, on := range []bool{true, false} {
		name := "on"
		if !on {
			name = "off"
		}
		b.Run("detect="+name, func(b *testing.B) {
			old := detectNested
			detectNested = on
			defer func() { detectNested = old }()
			BenchmarkEngine(b)
		})
		b.Run("join="+name, func(b *testing.B) {
			old := joinTxs
			joinTxs = on
			defer func() { joinTxs = old }()
			BenchmarkEngine(b)
		})
	}
}

// The direct cost of detection: the stack check a call makes when a
// function runs on its entry, and the tracking around each function.
func BenchmarkNestedCheck(b *testing.B) {
	e := &entry{}
	e.fns.Add(1)
	b.Run("nested", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			nested(e)
		}
	})
	r := newRequest(nil, e, "mutate", nil, nil)
	r.apply = func(cur []byte) ([]byte, error) { return cur, nil }
	b.Run("runTracked", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			runTracked(r, nil)
		}
	})
	b.Run("untracked", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r.apply(nil)
		}
	})
}
