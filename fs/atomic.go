package fs

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"time"
)

// WriteAtomic replaces the file at path with data, atomically and durably;
// perm is the permission of a new file (minus the umask). The [fs] package
// doc states the sequence and what it guarantees (modes, links, errors).
// path is a host path (absolute, or relative to the working directory);
// there is no sandbox ([Fs.WriteAtomic] has one). The parent directory must
// exist (see [MkdirAll]).
func WriteAtomic(path string, data []byte, perm os.FileMode) error {
	_, err := writeHost("write atomic", path, &source{data: data}, perm, followAny)
	return err
}

// WriteAtomicNoFollow is [WriteAtomic] for a path that must name a regular
// file itself: a symbolic link at path is refused with [ErrNotRegular] instead
// of followed, and one that appears during the write is replaced by the
// rename, never followed (rename(2) does not follow its final component).
// Use it in directories that other users can write, where a link planted at
// path could otherwise redirect the write to a file they cannot write
// themselves. Directories on the way to path are resolved as usual.
func WriteAtomicNoFollow(path string, data []byte, perm os.FileMode) error {
	_, err := writeHost("write atomic", path, &source{data: data}, perm, refuseLinks)
	return err
}

// WriteAtomicFrom is [WriteAtomic] with the content streamed from r through
// a fixed-size buffer: memory use does not grow with the size of the file.
// ctx is checked between chunks; when it is done, or when r fails, the
// destination is left untouched. It returns the number of bytes written.
func WriteAtomicFrom(ctx context.Context, path string, r io.Reader, perm os.FileMode) (int64, error) {
	src, err := streamSource(ctx, r)
	if err != nil {
		return 0, wrap("write atomic", path, err)
	}
	return writeHost("write atomic", path, src, perm, followAny)
}

func writeHost(op, path string, src *source, perm os.FileMode, links linkPolicy) (int64, error) {
	if path == "" {
		return 0, wrap(op, path, ErrInvalidName)
	}
	d, base, prev, err := pin(hostDirs{}, path, links)
	if err != nil {
		return 0, wrap(op, path, err)
	}
	defer d.Close()
	n, err := replace(d, base, prev, perm, src)
	return n, wrap(op, path, err)
}

// MkdirAll is [os.MkdirAll] made durable: every directory it creates, and the
// parent of the first one, is fsynced before it returns, so a file written
// into the new directories cannot vanish with them after a crash.
func MkdirAll(path string, perm os.FileMode) error {
	if path == "" {
		return wrap("mkdir all", path, ErrInvalidName)
	}
	return wrap("mkdir all", path, mkdirAll(hostDirs{}, path, perm))
}

// SweepTemp removes the temp files that interrupted writes left in the host
// directory dir, when older than olderThan. See [Fs.SweepTemp].
func SweepTemp(dir string, olderThan time.Duration) (removed []string, err error) {
	names, err := sweep(hostDirs{}, dir, olderThan)
	for _, n := range names {
		removed = append(removed, filepath.Join(dir, n))
	}
	return removed, wrap("sweep temp", dir, err)
}

// IsTemp reports whether name, a file's base name, has the shape of the
// temp files that writes create (".<base>.<16 hex digits>.tmp"): a file
// that a crash may have left behind, and that [SweepTemp] removes.
func IsTemp(name string) bool { return isTempName(name) }
