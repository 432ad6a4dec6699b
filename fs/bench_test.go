package fs

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	natefinch "github.com/natefinch/atomic"
)

// floorWrite is the durable replace sequence written inline with nothing
// else: temp + write + fsync + close + rename + directory fsync. No mode
// handling, no symlink check, a fixed temp name. It is the physical floor
// WriteAtomic is measured against.
func floorWrite(dir, dest string, data []byte) error {
	tmp := filepath.Join(dir, ".floor.tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, dest); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		return err
	}
	return d.Close()
}

// renameioWriteFile is renameio/v2's WriteFile where it builds (not on Windows).
var renameioWriteFile func(filename string, data []byte, perm os.FileMode) error

// BenchmarkReplace compares, in one run, every way to write a whole file:
// ours (package-level, sandboxed, streaming), the inline floor, and the
// peers. Only "floor" and ours are durable (directory fsync); os.WriteFile
// is not even atomic.
func BenchmarkReplace(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"1KiB", 1 << 10}, {"1MiB", 1 << 20}} {
		data := bytes.Repeat([]byte("0123456789abcdef"), size.n/16)
		writers := []struct {
			name  string
			write func(dir, dest string, fsys *Fs) error
		}{
			{"floor", func(dir, dest string, _ *Fs) error { return floorWrite(dir, dest, data) }},
			{"WriteAtomic", func(_, dest string, _ *Fs) error { return WriteAtomic(dest, data, 0o644) }},
			{"Fs.WriteAtomic", func(_, _ string, fsys *Fs) error { return fsys.WriteAtomic("sub/status.json", data) }},
			{"WriteAtomicFrom", func(_, dest string, _ *Fs) error {
				_, err := WriteAtomicFrom(context.Background(), dest, bytes.NewReader(data), 0o644)
				return err
			}},
			{"natefinch", func(_, dest string, _ *Fs) error { return natefinch.WriteFile(dest, bytes.NewReader(data)) }},
			{"os.WriteFile", func(_, dest string, _ *Fs) error { return os.WriteFile(dest, data, 0o644) }},
		}
		if renameioWriteFile != nil { // renameio/v2 has no Windows build
			writers = append(writers, struct {
				name  string
				write func(dir, dest string, fsys *Fs) error
			}{"renameio", func(_, dest string, _ *Fs) error { return renameioWriteFile(dest, data, 0o644) }})
		}
		for _, w := range writers {
			b.Run(size.name+"/"+w.name, func(b *testing.B) {
				root := benchDir(b)
				dir := filepath.Join(root, "sub")
				if err := os.Mkdir(dir, 0o755); err != nil {
					b.Fatal(err)
				}
				dest := filepath.Join(dir, "status.json")
				fsys, err := New(root)
				if err != nil {
					b.Fatal(err)
				}
				defer fsys.Close()
				if err := w.write(dir, dest, fsys); err != nil { // the file exists in the loop, as in real use
					b.Fatal(err)
				}
				b.SetBytes(int64(size.n))
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					if err := w.write(dir, dest, fsys); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

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

// BenchmarkOverheadVsFloor alternates the inline floor and WriteAtomic in
// the same loop, so that the noise of a shared disk hits both alike, and
// reports the ratio of their total times as "x-floor" (goal: <= 1.10).
func BenchmarkOverheadVsFloor(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"1KiB", 1 << 10}, {"1MiB", 1 << 20}} {
		data := bytes.Repeat([]byte("0123456789abcdef"), size.n/16)
		for _, ours := range []struct {
			name  string
			write func(fsys *Fs, dest string) error
		}{
			{"WriteAtomic", func(_ *Fs, dest string) error { return WriteAtomic(dest, data, 0o644) }},
			{"Fs.WriteAtomic", func(fsys *Fs, _ string) error { return fsys.WriteAtomic("sub/status.json", data) }},
		} {
			b.Run(size.name+"/"+ours.name, func(b *testing.B) {
				root := benchDir(b)
				dir := filepath.Join(root, "sub")
				if err := os.Mkdir(dir, 0o755); err != nil {
					b.Fatal(err)
				}
				dest := filepath.Join(dir, "status.json")
				floorDest := filepath.Join(dir, "floor.json")
				fsys, err := New(root)
				if err != nil {
					b.Fatal(err)
				}
				defer fsys.Close()
				var tFloor, tOurs time.Duration
				for i := 0; b.Loop(); i++ {
					// Alternate which goes first, so neither always follows the other's fsync.
					for j := range 2 {
						start := time.Now()
						if (i+j)%2 == 0 {
							err = floorWrite(dir, floorDest, data)
							tFloor += time.Since(start)
						} else {
							err = ours.write(fsys, dest)
							tOurs += time.Since(start)
						}
						if err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(tOurs)/float64(tFloor), "x-floor")
				b.ReportMetric(float64(tFloor.Microseconds())/float64(b.N), "floor-µs/op")
				b.ReportMetric(float64(tOurs.Microseconds())/float64(b.N), "ours-µs/op")
			})
		}
	}
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
