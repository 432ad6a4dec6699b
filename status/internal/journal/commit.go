package journal

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/internal/syncshare"
)

// A Write is the new content of one document of a commit.
type Write struct {
	Path   string      // the document, absolute and clean
	Data   []byte      // its new content
	Before []byte      // its content as read under the lock; nil: it did not exist
	Perm   os.FileMode // for a document that does not exist yet
	Limit  int64       // the document's size limit, which recovery applies to Data; <= 0: none
}

// Commit stores ws (two or more documents, whose locks the caller holds)
// all or nothing, by the protocol of package status (Transactions,
// commit). An error before the commit point leaves every document as it
// was and nothing of the commit behind; after it, the commit is complete
// for every later locker, and the error matches [fs.ErrDurabilityUnknown].
// A commit that its recovery would refuse (see [CheckLimits]) is refused
// before anything is written.
func Commit(ws []Write) error {
	dirs := make([]string, len(ws))
	for i, w := range ws {
		if !validPath(w.Path) {
			return fmt.Errorf("%w: transaction document %q: not an absolute, clean path without a newline", os.ErrInvalid, w.Path)
		}
		dirs[i] = filepath.Dir(w.Path)
	}
	jpath := filepath.Join(dirs[0], journalPrefix+randHex()+journalSuffix)
	if err := CheckLimits(ws, jpath); err != nil {
		return err
	}
	// The journal is written to a temp file that fs.SweepTemp knows, made
	// durable with the markers, and renamed into place at the commit
	// point: a journal that exists is complete.
	jtemp := filepath.Join(dirs[0], "."+filepath.Base(jpath)+"."+randHex()+".tmp")

	// Step 1: markers, new contents and the journal's content, durable.
	prepared, renamed := 0, false
	abort := func(err error) error {
		// The journal goes first, and durably: once it is gone, a crash
		// during the rest leaves markers that undo.
		os.Remove(jtemp)
		if renamed && os.Remove(jpath) == nil {
			if d, derr := openDir(dirs[0]); derr == nil {
				d.sync()
				d.close()
			}
		}
		for _, w := range ws[:prepared] {
			os.Remove(w.Path + TempSuffix)
			os.Remove(w.Path + MarkerSuffix)
		}
		return err
	}
	sp, err := syncshare.BeginSync(dirs...)
	if err != nil {
		return err
	}
	files := make([]*os.File, 0, 2*len(ws)+1)
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for i, w := range ws {
		m, err := createExcl(w.Path+MarkerSuffix, 0o644)
		if err == nil {
			prepared++
			files = append(files, m)
			_, err = m.Write(formatMarker(jpath, Before(w.Before)))
		}
		if err != nil {
			sp.Close()
			return abort(err)
		}
		if crashAt("marker", i) {
			return ErrCrashed
		}
		t, err := createTemp(w)
		if err == nil {
			files = append(files, t)
			_, err = t.Write(w.Data)
		}
		if err != nil {
			sp.Close()
			return abort(err)
		}
		if crashAt("temp", i) {
			return ErrCrashed
		}
	}
	j, err := createExcl(jtemp, 0o644)
	if err == nil {
		files = append(files, j)
		_, err = j.Write(journalContent(ws))
	}
	if err != nil {
		sp.Close()
		return abort(err)
	}
	if err := sp.Sync(files...); err != nil {
		return abort(err)
	}
	if crashAt("prepared") {
		return ErrCrashed
	}

	// Step 2: the journal in place, durable: the commit point.
	if sp, err = syncshare.BeginSync(dirs[0]); err != nil {
		return abort(err)
	}
	if err := os.Rename(jtemp, jpath); err != nil {
		sp.Close()
		return abort(err)
	}
	renamed = true
	if crashAt("journal") {
		return ErrCrashed
	}
	if err := sp.Sync(); err != nil {
		return abort(err)
	}
	if crashAt("committed") {
		return ErrCrashed
	}

	// Step 3: install the new contents. From here on the transaction is
	// committed: a failure leaves the markers for the next locker.
	if sp, err = syncshare.BeginSync(dirs...); err != nil {
		return fmt.Errorf("%w: %w", fs.ErrDurabilityUnknown, err)
	}
	var errs []error
	for i, w := range ws {
		errs = append(errs, os.Rename(w.Path+TempSuffix, w.Path))
		if crashAt("renamed", i) {
			sp.Close()
			return ErrCrashed
		}
	}
	errs = append(errs, sp.Sync())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: %w", fs.ErrDurabilityUnknown, err)
	}
	if crashAt("installed") {
		return ErrCrashed
	}

	// Step 4: clean up, the journal first (see recovery.cleanup). No sync
	// is needed: a marker that comes back after a power loss undoes
	// nothing, its new content being installed.
	os.Remove(jpath)
	if crashAt("forgotten") {
		return ErrCrashed
	}
	for i, w := range ws {
		os.Remove(w.Path + MarkerSuffix)
		if crashAt("unmarked", i) {
			return ErrCrashed
		}
	}
	return nil
}

// CheckLimits refuses, with an error matching ErrTooLarge, a commit of ws
// with the journal jpath that recovery would refuse: more than
// MaxDocuments documents, a journal over MaxJournal bytes, a marker over
// MaxMarker, or a new content over its document's size limit.
func CheckLimits(ws []Write, jpath string) error {
	if s := TestSeams(); s != nil && s.NoLimits {
		return nil
	}
	if len(ws) > MaxDocuments {
		return tooMany("%d documents, limit %d", len(ws), MaxDocuments)
	}
	if n := len(journalContent(ws)); n > MaxJournal {
		return tooMany("a journal of %d bytes, limit %d", n, MaxJournal)
	}
	for _, w := range ws {
		if n := len(formatMarker(jpath, Before(w.Before))); n > MaxMarker {
			return tooMany("%s: a marker of %d bytes (its journal's path has %d), limit %d", w.Path, n, len(jpath), MaxMarker)
		}
		if w.Limit > 0 && int64(len(w.Data)) > w.Limit {
			return tooMany("%s: new content of %d bytes, limit %d: %w", w.Path, len(w.Data), w.Limit, fs.ErrTooLarge)
		}
	}
	return nil
}

func tooMany(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrTooLarge}, args...)...)
}

// journalContent is the journal of ws.
func journalContent(ws []Write) []byte {
	doc, _ := json.Marshal(journalDoc{Documents: paths(ws)}) // strings always encode
	return append(doc, '\n')
}

func paths(ws []Write) []string {
	ps := make([]string, len(ws))
	for i, w := range ws {
		ps[i] = w.Path
	}
	return ps
}

func randHex() string {
	b := make([]byte, journalHex/2)
	rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// createExcl creates a new file; a link at name is never followed.
func createExcl(name string, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, perm)
}

// createTemp creates the file for w's new content, with the owner and mode
// of the document it will replace (owner-only until both are set), or
// with w.Perm for a new document. A file left at its name by a commit
// that a power loss interrupted before its marker was durable is garbage:
// we hold the lock, and no marker names it. A directory there is not
// removed: the commit fails.
func createTemp(w Write) (*os.File, error) {
	name := w.Path + TempSuffix
	prev, err := os.Lstat(w.Path)
	if err != nil || !prev.Mode().IsRegular() {
		prev = nil
	}
	perm := w.Perm
	if prev != nil {
		perm = prev.Mode().Perm() & 0o700
	}
	f, err := createExcl(name, perm)
	if errors.Is(err, os.ErrExist) {
		if fi, lerr := os.Lstat(name); lerr == nil && fi.IsDir() {
			return nil, untrusted("new content", name, "a directory")
		}
		os.Remove(name)
		f, err = createExcl(name, perm)
	}
	if err != nil || prev == nil {
		return f, err
	}
	if err := copyOwnerMode(f, prev); err != nil {
		f.Close()
		os.Remove(name)
		return nil, err
	}
	return f, nil
}
