package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentstate/core/fs"
)

// maxFileSize bounds what LoadFile reads: configuration is small, and a
// file that is not must not exhaust memory.
const maxFileSize = 64 << 20

// LoadFile is Load (or LoadYAML, for a name ending in .yaml or .yml, in
// any case) from the file at path; errors name the path. Only a regular
// file of at most 64 MiB is read: a FIFO, device or directory is refused
// at once, without blocking on it.
func (c *Config) LoadFile(path string) error {
	data, err := readFile(path)
	if err != nil {
		return &Error{Op: "load", Key: path, Err: err}
	}
	decode := decodeJSON
	if isYAML(path) {
		decode = decodeYAML
	}
	return c.load(bytes.NewReader(data), path, decode)
}

// SaveFile writes the content of c to path atomically ([fs.WriteAtomic]): a
// reader of path sees the old file or the new one, never a partial one.
// A name ending in .yaml or .yml gets SaveYAML's format, any other Save's
// JSON. perm applies when the file is created.
func (c *Config) SaveFile(path string, perm os.FileMode) error {
	marshal := (*Snapshot).marshal
	if isYAML(path) {
		marshal = (*Snapshot).marshalYAML
	}
	data, err := marshal(c.Snapshot())
	if err != nil {
		return &Error{Op: "save", Key: path, Err: err}
	}
	if err := fs.WriteAtomic(path, data, perm); err != nil {
		return &Error{Op: "save", Key: path, Err: err}
	}
	return nil
}

func isYAML(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".yaml" || ext == ".yml"
}

// readFile reads a regular file of at most maxFileSize bytes. The open
// does not block on a FIFO (see openFlags), and fstat refuses anything
// that is not a regular file before a read could block.
func readFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileSize {
		return nil, errors.New("larger than 64 MiB")
	}
	return data, nil
}
