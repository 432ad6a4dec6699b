package fs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrDurabilityUnknown reports that the new content replaced the destination
// but the parent directory could not be synced: the rename may not survive a
// power loss. The write must not be retried blindly.
var ErrDurabilityUnknown = errors.New("replaced, durability unknown")

// WriteAtomic replaces the file at path with data so that a concurrent reader
// sees either the old content or the new, and so that, once it returns nil,
// the new content survives a crash. perm applies to a new file (minus umask);
// an existing file keeps its permission bits.
//
// Minimal version written for the module skeleton; the fs issue owns it.
func WriteAtomic(path string, data []byte, perm os.FileMode) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(dir, "."+base+"."+hex.EncodeToString(rnd[:])+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("fs: write atomic %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("fs: write atomic %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("fs: write atomic %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("fs: write atomic %s: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("fs: write atomic %s: %w", path, err)
	}
	d, derr := os.Open(dir)
	if derr == nil {
		derr = d.Sync()
		d.Close()
	}
	if derr != nil {
		return fmt.Errorf("fs: write atomic %s: %w: %w", path, ErrDurabilityUnknown, derr)
	}
	return nil
}
