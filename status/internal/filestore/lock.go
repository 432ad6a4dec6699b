package filestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/agentstate/core/status/internal/flock"
)

// ErrNameTooLong is matched by the error of a document whose lock file
// name is too long for its file system (status.ErrNameTooLong).
var ErrNameTooLong = errors.New("document name too long for its lock file")

// lockFile takes the exclusive lock on the lock file name (creating it if
// needed; perm is the mode a new document will get) through an open file
// description of its own (fresh, or one this process kept: see Kept
// descriptors in docs/PROTOCOL.md), waiting until it is free or ctx ends.
// The returned function releases the lock.
func lockFile(ctx context.Context, name string, perm os.FileMode) (unlock func(), err error) {
	h, err := openLock(name, perm)
	if err != nil {
		return nil, err
	}
	if err := h.lock(ctx); err != nil {
		return nil, err
	}
	return h.close, nil
}

// A lockHandle is one acquisition's descriptor of a lock file.
type lockHandle struct{ f *flock.File }

// openLock opens the lock file name of the document it names without
// LockSuffix.
func openLock(name string, perm os.FileMode) (*lockHandle, error) {
	f, err := flock.Open(name, strings.TrimSuffix(name, LockSuffix), perm)
	if pe, ok := err.(*os.PathError); ok && errors.Is(pe.Err, syscall.ENAMETOOLONG) {
		pe.Err = fmt.Errorf("%w: %w", ErrNameTooLong, pe.Err)
	}
	if err != nil {
		return nil, err
	}
	return &lockHandle{f}, nil
}

// lock waits for the lock of h's file. On failure h is closed.
func (h *lockHandle) lock(ctx context.Context) error { return h.f.Lock(ctx) }

// close releases the lock, if h holds it, and the descriptor.
func (h *lockHandle) close() { h.f.Close() }

// A fileID identifies a lock file: device and inode (on Windows, volume
// and file index).
type fileID struct{ dev, ino uint64 }

// id returns the identity of the file h has open: the canonical order in
// which transactions take locks.
func (h *lockHandle) id() (fileID, error) {
	id, err := h.f.ID()
	return fileID{id.Dev, id.Ino}, err
}
