package fs

import (
	"context"
	"io"
	"os"
	"testing"
)

// The peer comparisons of whole-file writes (BenchmarkReplace and
// BenchmarkReplaceInterleaved: ours next to an inline floor, natefinch/atomic,
// renameio and os.WriteFile) are in the nested module bench/ (bench/fs), so
// that the peers never become requirements of this module's importers.

// BenchmarkWriteAtomicFromAllocs shows the streaming variant's memory does
// not grow with the payload: allocs/op and B/op are the same for 1 KiB and
// 64 MiB (the source is a reader that produces bytes without holding them).
func BenchmarkWriteAtomicFromAllocs(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int64
	}{{"1KiB", 1 << 10}, {"1MiB", 1 << 20}, {"64MiB", 64 << 20}} {
		b.Run(size.name, func(b *testing.B) {
			fsys, _ := newBenchFs(b)
			r := &zeroReader{}
			b.SetBytes(size.n)
			b.ReportAllocs()
			for b.Loop() {
				r.left = size.n
				if _, err := fsys.WriteAtomicFrom(context.Background(), "big.bin", r, 0o644); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func newBenchFs(b *testing.B) (*Fs, string) {
	dir := benchDir(b)
	fsys, err := New(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { fsys.Close() })
	return fsys, dir
}

// zeroReader yields left zero bytes, then EOF, without allocating.
type zeroReader struct{ left int64 }

func (r *zeroReader) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	n := int64(len(p))
	if n > r.left {
		n = r.left
	}
	clear(p[:n])
	r.left -= n
	return int(n), nil
}

// benchDir returns a fresh directory for a benchmark: under FS_BENCH_DIR if
// set (e.g. a tmpfs, to isolate CPU and system-call overhead from the
// disk), else under the default temp dir.
func benchDir(b *testing.B) string {
	parent := os.Getenv("FS_BENCH_DIR")
	if parent == "" {
		return b.TempDir()
	}
	dir, err := os.MkdirTemp(parent, "bench")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
