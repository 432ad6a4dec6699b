package status

import "github.com/agentstate/core/status/internal/journal"

var (
	// ErrTxUntrusted is matched ([errors.Is]) by the error of a
	// transaction file that recovery will not act on (docs/PROTOCOL.md,
	// What recovery trusts). The error names the file; every locker of the
	// document fails on it until an operator removes the file (corestate
	// fsck lists such files).
	ErrTxUntrusted = journal.ErrUntrusted

	// ErrTxConflict is matched by the error of a recovery that found a
	// committed transaction's document replaced or removed after the
	// commit point by a writer that does not recover transactions: the
	// document is kept, the transaction's copy moved aside (the error names
	// both), fn did not run, and a retry proceeds. docs/PROTOCOL.md (Basic
	// and conforming clients) says what an operator does next.
	ErrTxConflict = journal.ErrConflict
)
