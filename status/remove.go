package status

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentstate/core/status/internal/journal"
)

// Remove removes the status document at path and its lock file, under the
// lock; see [Store.Remove].
func Remove(ctx context.Context, path string) error {
	return NewStore[Status](path).Remove(ctx)
}

// Remove removes the document and then its lock file, under the lock and
// durably; a missing document is [os.ErrNotExist]. A Mutate after it starts
// from the zero T. Transactions a crash left pending on the document are
// completed first (docs/PROTOCOL.md, Removing a document). A backend that is
// not a [RemoveBackend] returns an error matching [ErrUnsupported].
func (s *Store[T]) Remove(ctx context.Context) error {
	if ctx == nil {
		return pathError("remove", s.b.Name(), errNilContext)
	}
	b, ok := s.b.(RemoveBackend)
	if !ok {
		return pathError("remove", s.b.Name(), unsupported("it is not a status.RemoveBackend"))
	}
	return b.Remove(ctx)
}

// Remove implements [RemoveBackend]; see [Store.Remove].
func (b *fileBackend) Remove(ctx context.Context) error {
	for {
		missing := false
		err := b.update(ctx, "remove", func(cur []byte) ([]byte, error) {
			missing = cur == nil
			return nil, nil
		})
		var pe *pendingError
		if !errors.As(err, &pe) {
			if err == nil && missing {
				err = pathError("remove", b.path, os.ErrNotExist)
			}
			return err
		}
		// Complete the rest of the transaction under the locks of its
		// documents, in the canonical order (as LoadAll does), then try
		// again.
		docs := []Backend{b}
		for _, doc := range pe.docs {
			docs = append(docs, newFileBackend(doc, b.perm, b.maxSize))
		}
		if err := b.UpdateAll(ctx, docs, func(cur [][]byte) ([][]byte, error) { return cur, nil }); err != nil {
			return pathError("remove", b.path, err)
		}
	}
}

// A pendingError stops a removal that would leave other documents of a
// committed transaction waiting for a journal in the removed document's
// directory, or leave them to a journal that the removal of the directory
// would delete: [Store.Remove] completes them and tries again.
type pendingError struct{ docs []string }

func (e *pendingError) Error() string {
	return "other documents of a committed transaction are still to be completed: " + strings.Join(e.docs, ", ")
}

// removeCompletes is false only in the control of a test that shows what
// removeDoc's check prevents.
var removeCompletes = true

// removeDoc removes the document file and then its lock file, whose flock
// the caller holds, and makes both removals durable. Callers that wait on
// the removed lock file find it gone when they get its lock, and start over
// with a new one.
//
// First, the transactions of the document must be complete: pending, the
// other documents of the one its recovery just completed, and any other
// that waits for a journal in its directory, are a *pendingError and
// nothing is removed.
func removeDoc(ctx context.Context, key string, pending []string) error {
	if removeCompletes {
		waiting, err := journal.Waiting(ctx, key)
		if err != nil {
			return err
		}
		for _, doc := range waiting {
			if !slices.Contains(pending, doc) {
				pending = append(pending, doc)
			}
		}
		if len(pending) > 0 {
			return &pendingError{docs: pending}
		}
	}
	if err := os.Remove(key); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.Remove(key + LockSuffix); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return syncDir(filepath.Dir(key))
}
