package status

import (
	"context"
	"errors"
	"os"
	"path/filepath"
)

// Remove removes the status document at path and its lock file, under the
// lock; see [Store.Remove].
func Remove(ctx context.Context, path string) error {
	return NewStore[Status](path).Remove(ctx)
}

// Remove removes the document and then its lock file, holding the lock
// throughout. Like os.Remove, it reports a missing document with an error
// matching [os.ErrNotExist] (and then changes nothing).
//
// It waits for the lock as [Mutate] does (honouring ctx), so it comes after
// every Mutate that holds or was granted the lock before it, and a Mutate
// that comes after it finds no document: fn sees the zero T, and if fn
// changes it, the document is created anew. Another process waiting for
// the lock when it is removed re-checks the lock file, finds it gone, and
// takes a new one (the protocol's identity check; see the package doc).
// The removal is durable (the directory is fsynced) when Remove returns
// nil.
//
// Backends other than the file backend return [errors.ErrUnsupported].
func (s *Store[T]) Remove(ctx context.Context) error {
	if ctx == nil {
		return pathError("remove", s.b.Name(), errNilContext)
	}
	b, ok := s.b.(*fileBackend)
	if !ok {
		return pathError("remove", s.b.Name(), errors.ErrUnsupported)
	}
	missing := false
	err := b.update(ctx, "remove", func(cur []byte) ([]byte, error) {
		missing = cur == nil
		return nil, nil
	})
	if err == nil && missing {
		err = pathError("remove", b.path, os.ErrNotExist)
	}
	return err
}

// removeDoc removes the document file and then its lock file, whose flock
// the caller holds, and makes both removals durable. Callers that wait on
// the removed lock file find it gone when they get its lock, and start over
// with a new one.
func removeDoc(key string) error {
	if err := os.Remove(key); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.Remove(key + LockSuffix); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return syncDir(filepath.Dir(key))
}
