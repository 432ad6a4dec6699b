package fs_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	natefinch "github.com/natefinch/atomic"

	"github.com/agentstate/core/fs"
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
// the inline floor, ours (package-level, sandboxed, streaming) and the
// peers. Only "floor" and ours are durable (directory fsync); os.WriteFile
// is not even atomic. Each writer runs on its own, so on a busy machine
// compare times with BenchmarkReplaceInterleaved; this one gives B/op and
// allocs/op.
func BenchmarkReplace(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"1KiB", 1 << 10}, {"1MiB", 1 << 20}} {
		data := bytes.Repeat([]byte("0123456789abcdef"), size.n/16)
		for _, w := range replaceWriters(data) {
			b.Run(size.name+"/"+w.name, func(b *testing.B) {
				root := benchDir(b)
				dir := filepath.Join(root, "sub")
				if err := os.Mkdir(dir, 0o755); err != nil {
					b.Fatal(err)
				}
				fsys, err := fs.New(root)
				if err != nil {
					b.Fatal(err)
				}
				defer fsys.Close()
				if err := w.write(fsys, "sub", dir); err != nil { // the file exists in the loop, as in real use
					b.Fatal(err)
				}
				b.SetBytes(int64(size.n))
				b.ReportAllocs()
				for b.Loop() {
					if err := w.write(fsys, "sub", dir); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkReplaceInterleaved runs every writer of BenchmarkReplace once
// per iteration, rotating which goes first, each into its own directory,
// so that the noise of a shared machine and disk hits all of them alike.
// It reports each writer's mean time ("<writer>-µs") and, for ours, the
// ratio to the inline floor ("<writer>-x-floor"; goal <= 1.10). On a busy
// machine these are the figures to compare; BenchmarkReplace's separate
// runs give the allocations.
func BenchmarkReplaceInterleaved(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"1KiB", 1 << 10}, {"1MiB", 1 << 20}} {
		b.Run(size.name, func(b *testing.B) {
			data := bytes.Repeat([]byte("0123456789abcdef"), size.n/16)
			root := benchDir(b)
			fsys, err := fs.New(root)
			if err != nil {
				b.Fatal(err)
			}
			defer fsys.Close()
			writers := replaceWriters(data)
			dirs := make([]string, len(writers))
			for i, w := range writers {
				dirs[i] = filepath.Join(root, w.name)
				if err := os.Mkdir(dirs[i], 0o755); err != nil {
					b.Fatal(err)
				}
				if err := w.write(fsys, w.name, dirs[i]); err != nil {
					b.Fatal(err)
				}
			}
			spent := make([]time.Duration, len(writers))
			for i := 0; b.Loop(); i++ {
				for k := range writers {
					j := (i + k) % len(writers)
					start := time.Now()
					if err := writers[j].write(fsys, writers[j].name, dirs[j]); err != nil {
						b.Fatal(err)
					}
					spent[j] += time.Since(start)
				}
			}
			floor := spent[0]
			for j, w := range writers {
				b.ReportMetric(float64(spent[j].Microseconds())/float64(b.N), w.name+"-µs")
				if w.ours {
					b.ReportMetric(float64(spent[j])/float64(floor), w.name+"-x-floor")
				}
			}
		})
	}
}

// replaceWriter writes data to <dir>/status.json; fsName is dir relative
// to the Fs root.
type replaceWriter struct {
	name  string
	ours  bool
	write func(fsys *fs.Fs, fsName, dir string) error
}

// replaceWriters lists the floor first, then ours, then the peers.
func replaceWriters(data []byte) []replaceWriter {
	dest := func(dir string) string { return filepath.Join(dir, "status.json") }
	ws := []replaceWriter{
		{"floor", false, func(_ *fs.Fs, _, dir string) error { return floorWrite(dir, dest(dir), data) }},
		{"WriteAtomic", true, func(_ *fs.Fs, _, dir string) error { return fs.WriteAtomic(dest(dir), data, 0o644) }},
		{"Fs.WriteAtomic", true, func(fsys *fs.Fs, name, _ string) error { return fsys.WriteAtomic(name+"/status.json", data, 0o644) }},
		{"WriteAtomicFrom", true, func(_ *fs.Fs, _, dir string) error {
			_, err := fs.WriteAtomicFrom(context.Background(), dest(dir), bytes.NewReader(data), 0o644)
			return err
		}},
		{"natefinch", false, func(_ *fs.Fs, _, dir string) error { return natefinch.WriteFile(dest(dir), bytes.NewReader(data)) }},
		{"os.WriteFile", false, func(_ *fs.Fs, _, dir string) error { return os.WriteFile(dest(dir), data, 0o644) }},
	}
	if renameioWriteFile != nil { // renameio/v2 has no Windows build
		ws = append(ws, replaceWriter{"renameio", false, func(_ *fs.Fs, _, dir string) error {
			return renameioWriteFile(dest(dir), data, 0o644)
		}})
	}
	return ws
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
