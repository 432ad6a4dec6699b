package filestore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentstate/core/status/internal/journal"
)

// Remove removes the document and then its lock file, under the lock and
// durably (status.RemoveBackend; see status.Store.Remove).
func (d *Doc) Remove(ctx context.Context) error {
	for {
		missing := false
		err := d.update(ctx, "remove", func(cur []byte) ([]byte, error) {
			missing = cur == nil
			return nil, nil
		})
		var pe *pendingError
		if !errors.As(err, &pe) {
			if err == nil && missing {
				err = Error("remove", d.path, os.ErrNotExist)
			}
			return err
		}
		// Complete the rest of the transaction under the locks of its
		// documents, in the canonical order (as LoadAll does), then try
		// again.
		docs := []*Doc{d}
		for _, doc := range pe.docs {
			docs = append(docs, New(doc, d.perm, d.maxSize))
		}
		if err := UpdateAll(ctx, "mutate all", docs, func(cur [][]byte) ([][]byte, error) { return cur, nil }); err != nil {
			return Error("remove", d.path, err)
		}
	}
}

// A pendingError stops a removal that would leave other documents of a
// committed transaction waiting for a journal in the removed document's
// directory, or leave them to a journal that the removal of the directory
// would delete: [Doc.Remove] completes them and tries again.
type pendingError struct{ docs []string }

func (e *pendingError) Error() string {
	return "other documents of a committed transaction are still to be completed: " + strings.Join(e.docs, ", ")
}

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
	if s := TestSeams(); s == nil || !s.NoPendingCheck {
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
