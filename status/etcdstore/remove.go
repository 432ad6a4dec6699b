package etcdstore

import (
	"context"
	"fmt"
	"os"

	"github.com/agentstate/core/status"
)

var (
	_ status.RemoveBackend = (*Backend)(nil)
	_ status.WatchBackend  = (*Backend)(nil)
)

// Remove deletes the document's key; see [status.Store.Remove]. It is an
// Update whose apply removes the document, so it queues, batches and
// commits (exactly once) as Updates do, in their order. A missing key is
// an error matching [os.ErrNotExist].
func (b *Backend) Remove(ctx context.Context) error {
	missing := false
	err := b.Update(ctx, func(cur []byte) ([]byte, error) {
		missing = cur == nil // the last run is the one that committed
		return nil, nil
	})
	if err == nil && missing {
		err = fmt.Errorf("etcdstore: remove %s: %w", b.id(), os.ErrNotExist)
	}
	return err
}
