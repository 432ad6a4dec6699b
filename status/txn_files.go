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

// The files a transaction leaves next to its documents while it commits,
// and after a crash until the next locker recovers it (see Transactions in
// the package doc): the marker PATH.txn, the new content PATH.txn.tmp, the
// journal .txn-<16 hex digits>.journal, and after a conflict the
// transaction's copy PATH.conflict-<UTC time>.
const (
	TxMarkerSuffix = journal.MarkerSuffix
	TxTempSuffix   = journal.TempSuffix
	ConflictSuffix = journal.ConflictSuffix
)

var (
	// ErrTxUntrusted is matched ([errors.Is]) by the error of a
	// transaction file that recovery will not act on: not a regular file,
	// too large, malformed, a journal that does not list the document,
	// more than one hard link, or in a sticky directory a file owned by
	// someone other than the document's owner, the caller or the
	// directory's owner. The error names the file; the document is left as
	// it is, and every locker fails on it until an operator removes the
	// file (corestate fsck lists it).
	ErrTxUntrusted = journal.ErrUntrusted

	// ErrTxConflict is matched by the error of a recovery that found a
	// committed transaction's document replaced or removed after the
	// commit point, by a writer that does not recover transactions. The
	// document is kept as that writer left it, the transaction's copy is
	// moved to PATH.conflict-<UTC time> (the error names both), and the
	// transaction's files are gone: the call's fn did not run, and a
	// retry proceeds. See Transactions in the package doc for what an
	// operator does next.
	ErrTxConflict = journal.ErrConflict

	// ErrTxOrphan is matched by [CheckTxFile]'s error for a journal that no
	// marker names: it can never be needed again, and [SweepJournals]
	// removes it.
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
// transaction file at name (see [IsTxFile]) needs an operator. It returns
// nil for a file the next locker of its documents completes or undoes,
// or that the next commit replaces; an error matching [ErrTxUntrusted]
// (or an I/O error) for one that stops every locker of its document until
// it is removed; [ErrTxConflict] for a transaction's copy kept after a
// conflict, or a marker whose recovery will keep one; [ErrTxOrphan] for a
// journal that no marker names. maxSize bounds the documents and new
// contents it reads, as [WithMaxSize] does (<= 0: no limit).
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
// no marker names ([ErrTxOrphan]), which a crash between the last two
// steps of a recovery can leave, and returns the paths it removed. A
// journal that is still needed is left; one it cannot trust (in a sticky
// directory, a journal of another user than the caller or the directory's
// owner) or read is left too, and its error, naming it, is joined into
// err.
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
