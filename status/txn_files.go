package status

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentstate/core/status/internal/journal"
)

// The files a transaction leaves next to its documents until it commits or
// the next locker recovers it: the marker PATH.txn, the new content
// PATH.txn.tmp and, after a conflict, the copy PATH.conflict-<UTC time>.
const (
	TxMarkerSuffix = journal.MarkerSuffix
	TxTempSuffix   = journal.TempSuffix
	ConflictSuffix = journal.ConflictSuffix
)

var (
	// ErrTxUntrusted is matched ([errors.Is]) by the error of a
	// transaction file that recovery will not act on (docs/PROTOCOL.md,
	// What recovery trusts). The error names the file; every locker of the
	// document fails on it until an operator removes the file.
	ErrTxUntrusted = journal.ErrUntrusted

	// ErrTxConflict is matched by the error of a recovery that found a
	// committed transaction's document replaced or removed after the
	// commit point by a writer that does not recover transactions: the
	// document is kept, the transaction's copy moved aside (the error names
	// both), fn did not run, and a retry proceeds. docs/PROTOCOL.md (Basic
	// and conforming clients) says what an operator does next.
	ErrTxConflict = journal.ErrConflict

	// ErrTxOrphan is matched by [CheckTxFile]'s error for a journal that no
	// marker names, which is never needed again ([SweepJournals]).
	ErrTxOrphan = journal.ErrOrphan
)

// IsTxFile reports whether base, a file name, is one a transaction leaves:
// a marker, a new content, a journal or a transaction's copy kept after a
// conflict.
func IsTxFile(base string) bool {
	return strings.HasSuffix(base, TxMarkerSuffix) || strings.HasSuffix(base, TxTempSuffix) ||
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

// CheckTxFile reports, changing nothing and taking no lock, whether the
// transaction file at name (see [IsTxFile]) needs an operator: nil if the
// next locker or commit deals with it; [ErrTxUntrusted] (or an I/O error)
// if it stops every locker of its document; [ErrTxConflict] for a conflict
// copy, or a marker whose recovery will keep one; [ErrTxOrphan] for a
// journal no marker names. maxSize bounds what it reads, as [WithMaxSize]
// does (<= 0: no limit).
func CheckTxFile(name string, maxSize int64) error {
	abs, err := filepath.Abs(name)
	if err != nil {
		return err
	}
	base := filepath.Base(abs)
	switch {
	case journal.IsJournalName(base):
		return journal.CheckJournal(abs)
	case strings.HasSuffix(base, TxTempSuffix):
		fi, err := os.Lstat(abs)
		if err == nil && fi.IsDir() {
			return &journal.Error{Role: "new content", Path: name, Err: fmt.Errorf("%w: a directory, which no commit or recovery removes", ErrTxUntrusted)}
		}
		return err
	case strings.HasSuffix(base, TxMarkerSuffix):
		return journal.Check(strings.TrimSuffix(abs, TxMarkerSuffix), maxSize)
	case isConflictName(base):
		return &journal.Error{Role: "copy", Path: name, Err: fmt.Errorf("%w: a committed transaction's copy of %s, kept because a writer that does not recover transactions replaced or removed it after the commit", ErrTxConflict, abs[:len(abs)-len(base)+strings.Index(base, ConflictSuffix)])}
	}
	return fmt.Errorf("%w: %s is not a transaction file", os.ErrInvalid, name)
}

// SweepJournals removes from dir (not its subdirectories) the journals that
// no marker names ([ErrTxOrphan]) and returns their paths. A journal still
// needed is left; so is one it cannot trust or read, and its error, naming
// it, is joined into err.
func SweepJournals(dir string) (removed []string, err error) {
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
