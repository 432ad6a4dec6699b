//go:build !race

// The race detector makes sync.Pool drop items at random, so allocation
// counts are only meaningful without it.

package fs

import (
	"context"
	"testing"
)

// TestWriteAtomicFromAllocsIndependentOfSize: the streaming write copies
// through a pooled fixed-size buffer, so a 32 MiB write allocates no more
// than a 1 KiB one.
func TestWriteAtomicFromAllocsIndependentOfSize(t *testing.T) {
	fsys, _ := newFs(t)
	r := &zeroReader{}
	allocs := func(size int64) float64 {
		return testing.AllocsPerRun(5, func() {
			r.left = size
			if _, err := fsys.WriteAtomicFrom(context.Background(), "big.bin", r, 0o644); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, big := allocs(1<<10), allocs(32<<20)
	t.Logf("allocs/op: 1 KiB %.0f, 32 MiB %.0f", small, big)
	if big > small {
		t.Fatalf("allocations grow with size: 1 KiB %.0f, 32 MiB %.0f", small, big)
	}
}
