package fs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// ReadRegular returns the content of the regular file at path (a host path,
// as for [WriteAtomic]), for files that other users may have planted:
//
//   - anything that is not a regular file — a directory, named pipe,
//     device, socket, or a symbolic link, which is not followed — is refused
//     with [ErrNotRegular], without blocking (a named pipe with no writer) and
//     without reading from it (/dev/zero);
//   - a file larger than limit bytes is refused with [ErrTooLarge] after
//     reading at most limit+1 bytes (limit <= 0: no limit).
//
// A missing file is an error matching [os.ErrNotExist]. Directories on the way
// to path are resolved as usual.
func ReadRegular(path string, limit int64) ([]byte, error) {
	const op = "read"
	if path == "" {
		return nil, wrap(op, path, ErrInvalidName)
	}
	// Lstat first so that a device is refused without being opened (opening
	// some devices has effects); the fstat below closes the race.
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, wrap(op, path, cause(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, wrap(op, path, notRegular(fi.Mode()))
	}
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow|oNonblock, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) { // replaced by a link since the Lstat
			err = notRegular(os.ModeSymlink)
		}
		return nil, wrap(op, path, cause(err))
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, wrap(op, path, cause(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, wrap(op, path, notRegular(fi.Mode()))
	}
	if limit > 0 && fi.Size() > limit {
		return nil, wrap(op, path, tooLarge(fi.Size(), limit))
	}
	data, err := readUpTo(f, fi.Size(), limit)
	return data, wrap(op, path, err)
}

// readUpTo reads f to its end, or fails once more than limit bytes
// (limit > 0) arrive: the file may grow after its size was taken.
func readUpTo(f *os.File, size, limit int64) ([]byte, error) {
	data := make([]byte, 0, size+1) // +1: see EOF without growing
	for {
		if limit > 0 && int64(len(data)) > limit {
			return nil, tooLarge(int64(len(data)), limit)
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, cause(err)
		}
	}
}

func notRegular(m os.FileMode) error { return fmt.Errorf("%w: %s", ErrNotRegular, kind(m)) }

func tooLarge(size, limit int64) error {
	return fmt.Errorf("%w: at least %d bytes, limit %d", ErrTooLarge, size, limit)
}

// cause strips the *os.PathError that the os package wraps around a system
// call's error: our *PathError names the operation and the path once.
func cause(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
