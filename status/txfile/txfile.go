// Package txfile names and checks the files that a [status.MutateAll]
// transaction leaves next to its documents until it commits or the next
// locker recovers it, and checks lock files, for tools that walk a tree
// (corestate fsck and sweep). docs/PROTOCOL.md describes the files and
// what recovery does with them.
package txfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/internal/flock"
	"github.com/agentstate/core/status/internal/journal"
)

// The suffixes of the files a transaction leaves: the marker PATH.txn, the
// new content PATH.txn.tmp and, after a conflict, the copy
// PATH.conflict-<UTC time>.
const (
	MarkerSuffix   = journal.MarkerSuffix
	TempSuffix     = journal.TempSuffix
	ConflictSuffix = journal.ConflictSuffix
)

// ErrOrphan is matched by [Check]'s error for a journal that no marker
// names, which is never needed again ([Sweep]).
var ErrOrphan = journal.ErrOrphan

// Is reports whether base, a file name, is one a transaction leaves:
// a marker, a new content, a journal or a transaction's copy kept after a
// conflict.
func Is(base string) bool {
	return strings.HasSuffix(base, MarkerSuffix) || strings.HasSuffix(base, TempSuffix) ||
		journal.IsJournalName(base) || isConflictName(base)
}

// isConflictName reports whether base ends in ConflictSuffix, a time in
// UTC ("20260102T150405Z") and perhaps "-2", "-3"...
func isConflictName(base string) bool {
	i := strings.LastIndex(base, ConflictSuffix)
	if i < 0 {
		return false
	}
	stamp, n, _ := strings.Cut(base[i+len(ConflictSuffix):], "-")
	if _, err := time.Parse("20060102T150405Z", stamp); err != nil {
		return false
	}
	_, err := strconv.Atoi(n)
	return n == "" || err == nil
}

// Check reports, changing nothing and taking no lock, whether the
// transaction file at name (see [Is]) needs an operator: nil if the
// next locker or commit deals with it; [status.ErrTxUntrusted] (or an I/O error)
// if it stops every locker of its document; [status.ErrTxConflict] for a conflict
// copy, or a marker whose recovery will keep one; [ErrOrphan] for a
// journal no marker names. maxSize bounds what it reads, as the Store's
// limit does (<= 0: no limit).
func Check(name string, maxSize int64) error {
	abs, err := filepath.Abs(name)
	if err != nil {
		return err
	}
	base := filepath.Base(abs)
	switch {
	case journal.IsJournalName(base):
		return journal.CheckJournal(abs)
	case strings.HasSuffix(base, TempSuffix):
		fi, err := os.Lstat(abs)
		if err == nil && fi.IsDir() {
			return &journal.Error{Role: "new content", Path: name, Err: fmt.Errorf("%w: a directory, which no commit or recovery removes", status.ErrTxUntrusted)}
		}
		return err
	case strings.HasSuffix(base, MarkerSuffix):
		return journal.Check(strings.TrimSuffix(abs, MarkerSuffix), maxSize)
	case isConflictName(base):
		return &journal.Error{Role: "copy", Path: name, Err: fmt.Errorf("%w: a committed transaction's copy of %s, kept because a writer that does not recover transactions replaced or removed it after the commit", status.ErrTxConflict, abs[:len(abs)-len(base)+strings.Index(base, ConflictSuffix)])}
	}
	return fmt.Errorf("%w: %s is not a transaction file", os.ErrInvalid, name)
}

// CheckLock reports, opening nothing, whether the writers of a document
// would refuse its lock file at name (the document's path and
// [status.LockSuffix]): [status.ErrLockUntrusted] for its owner, or
// fs.ErrNotRegular. A missing lock file matches os.ErrNotExist.
func CheckLock(name string) error {
	return flock.Check(name, strings.TrimSuffix(name, status.LockSuffix))
}

// Sweep removes from dir (not its subdirectories) the journals that
// no marker names ([ErrOrphan]) and returns their paths. A journal still
// needed is left; so is one it cannot trust or read, and its error, naming
// it, is joined into err.
func Sweep(dir string) (removed []string, err error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, e := range ents {
		if !journal.IsJournalName(e.Name()) {
			continue
		}
		name := filepath.Join(dir, e.Name())
		abs, err := filepath.Abs(name)
		ok := false
		if err == nil {
			ok, err = journal.RemoveOrphan(abs)
		}
		switch {
		case ok:
			removed = append(removed, name)
		case err != nil && !errors.Is(err, os.ErrNotExist):
			errs = append(errs, err)
		}
	}
	return removed, errors.Join(errs...)
}
