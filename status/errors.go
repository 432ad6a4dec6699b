package status

import (
	"errors"
	"fmt"
	"strings"

	"github.com/agentstate/core/status/internal/filestore"
	"github.com/agentstate/core/status/internal/flock"
	"github.com/agentstate/core/status/internal/journal"
)

// ErrCorrupt is matched ([errors.Is]) by every error that reports a stored
// document which could not be decoded (a [*CorruptError]).
var ErrCorrupt = errors.New("corrupt document")

// ErrNameTooLong is matched ([errors.Is]) by the error of a document whose
// lock file name (its name plus [LockSuffix]) is too long for its file
// system: usually a name over 250 bytes. It matches syscall.ENAMETOOLONG too.
var ErrNameTooLong = filestore.ErrNameTooLong

var (
	// ErrTxUntrusted is matched ([errors.Is]) by the error, naming the file,
	// of a transaction file that recovery will not act on: every locker of
	// the document fails on it until an operator removes it
	// (docs/PROTOCOL.md, What recovery trusts).
	ErrTxUntrusted = journal.ErrUntrusted

	// ErrTxConflict is matched by the error of a recovery that found a
	// committed transaction's document replaced after the commit point by
	// a writer that does not recover: the document is kept, the copy moved
	// aside, fn did not run (docs/PROTOCOL.md, Basic and conforming clients).
	ErrTxConflict = journal.ErrConflict

	// ErrTxTooLarge is matched by the error of a [MutateAll] whose commit
	// would exceed a limit that recovery applies (docs/PROTOCOL.md,
	// Transactions): nothing was written.
	ErrTxTooLarge = journal.ErrTooLarge
)

// ErrLockUntrusted is matched ([errors.Is]) by the error, naming it, of a
// lock file that another user could replace at will, so that its lock
// would exclude nobody: in a sticky directory (1777, like /tmp), one owned
// by someone other than the document's owner, the caller or the
// directory's owner (docs/PROTOCOL.md, Files). Every call on the document
// fails with it until an operator removes the file.
var ErrLockUntrusted = flock.ErrUntrusted

// ErrConflict is matched ([errors.Is]) by the error a guarded transition
// returns when the current state does not allow the move.
var ErrConflict = errors.New("state conflict")

// A CorruptError reports a stored document that could not be decoded, which
// is never written over (see the package doc's Guarantees).
type CorruptError struct {
	Path   string // the document's name (file path or backend key)
	Offset int64  // byte offset at which decoding failed
	Err    error  // the decoder's error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("status: corrupt document %s at byte %d: %v", e.Path, e.Offset, e.Err)
}

// Unwrap returns the decoder's error.
func (e *CorruptError) Unwrap() error { return e.Err }

// Is reports whether target is [ErrCorrupt].
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// A ConflictError reports a guarded transition that the current state does
// not allow, e.g. moving a completed task back to running.
type ConflictError struct {
	Current State   // the state found in the document
	Want    State   // the state the caller asked for
	From    []State // the states the caller would have moved from
}

func (e *ConflictError) Error() string {
	from := "any non-final state"
	if len(e.From) > 0 {
		names := make([]string, len(e.From))
		for i, s := range e.From {
			names[i] = string(s)
			if s == "" {
				names[i] = `""` // no state: a missing document
			}
		}
		from = strings.Join(names, "|")
	}
	return fmt.Sprintf("status: cannot move from %q to %q (allowed from %s): %v",
		e.Current, e.Want, from, ErrConflict)
}

// Is reports whether target is [ErrConflict].
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }
