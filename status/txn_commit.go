package status

import (
	"context"

	"github.com/agentstate/core/status/internal/journal"
)

// The commit of a transaction that changes two or more documents, and its
// recovery, follow the protocol of the package doc (Transactions); package
// journal keeps it, on paths and bytes.

// commitAll stores ws (two or more documents, whose locks the caller
// holds) all or nothing: see [journal.Commit].
func commitAll(ws []journal.Write) error { return journal.Commit(ws) }

// recoverDoc completes or undoes the transaction that a process which died
// during its commit left on the document at key, whose lock the caller
// holds (see [journal.Recover]). It does nothing (one lstat) when there is
// none. pending lists the transaction's other documents still waiting for
// their lockers.
var recoverDoc = func(ctx context.Context, key string, maxSize int64) (pending []string, err error) {
	return journal.Recover(ctx, key, maxSize)
}
