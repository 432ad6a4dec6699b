package status

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentstate/core/fs"
)

// The commit of a transaction that changes two or more documents, and its
// recovery, follow the protocol of the package doc (Transactions). A
// commit writes, for every changed document PATH, the marker PATH.txn
// (naming the journal) and the new content PATH.txn.tmp, syncs them, then
// creates the journal (its commit point), syncs it, renames each
// PATH.txn.tmp over PATH, syncs the renames, and removes the journal and
// the markers. Whoever next takes the lock of a document
// with a marker completes the commit (journal present) or undoes it
// (journal absent).
const (
	markerSuffix  = ".txn"
	txTempSuffix  = ".txn.tmp"
	journalPrefix = ".txn-"
	journalSuffix = ".journal"
	maxMarkerSize = 8 << 10
	maxJournal    = 1 << 20
)

// A txWrite is the new content of one document of a commit.
type txWrite struct {
	key  string      // docPath of the document
	data []byte      // the new document
	perm os.FileMode // for a document that does not exist yet
}

// journal is the content of a journal file.
type journal struct {
	Documents []string `json:"documents"` // the documents' absolute paths
}

// txCrash, when not nil, is called after each step of a commit (see
// commitAll); when it returns true the commit stops there as if its process
// had died, leaving everything in place. Tests set it (setTxCrash in
// export_test.go) to stop or kill a commit at every step, which no outside
// fault can hit reliably; production leaves it nil.
var txCrash func(step string) bool

var errCrashed = errors.New("commit abandoned at a simulated crash")

func crashAt(step string, i ...int) bool {
	if txCrash == nil {
		return false
	}
	for _, n := range i {
		step += fmt.Sprintf(" %d", n)
	}
	return txCrash(step)
}

// commitAll stores ws (two or more documents, whose locks the caller
// holds) all or nothing. An error before the commit point leaves every
// document as it was and nothing of the commit behind; after it, the
// commit is complete for every later locker, and the error matches
// [fs.ErrDurabilityUnknown].
func commitAll(ws []txWrite) error {
	dirs := make([]string, len(ws))
	for i, w := range ws {
		dirs[i] = filepath.Dir(w.key)
	}
	name := make([]byte, 8)
	rand.Read(name) // never fails (crypto/rand)
	jpath := filepath.Join(dirs[0], journalPrefix+hex.EncodeToString(name)+journalSuffix)

	// Step 1: markers and new contents, durable.
	prepared := 0
	abort := func(err error) error {
		// The journal goes first, and durably: once it is gone, a crash
		// during the rest leaves markers that undo.
		if os.Remove(jpath) == nil {
			syncDir(dirs[0])
		}
		for _, w := range ws[:prepared] {
			os.Remove(w.key + txTempSuffix)
			os.Remove(w.key + markerSuffix)
		}
		return err
	}
	sp, err := fs.BeginSync(dirs...)
	if err != nil {
		return err
	}
	files := make([]*os.File, 0, 2*len(ws))
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for i, w := range ws {
		m, err := createExcl(w.key+markerSuffix, 0o644)
		if err == nil {
			prepared++
			files = append(files, m)
			_, err = m.WriteString(jpath + "\n")
		}
		if err != nil {
			sp.Close()
			return abort(err)
		}
		if crashAt("marker", i) {
			return errCrashed
		}
		t, err := createTemp(w)
		if err == nil {
			files = append(files, t)
			_, err = t.Write(w.data)
		}
		if err != nil {
			sp.Close()
			return abort(err)
		}
		if crashAt("temp", i) {
			return errCrashed
		}
	}
	if err := sp.Sync(files...); err != nil {
		return abort(err)
	}
	if crashAt("prepared") {
		return errCrashed
	}

	// Step 2: the journal, durable: the commit point.
	doc, _ := json.Marshal(journal{Documents: keys(ws)}) // strings always encode
	sp, err = fs.BeginSync(dirs[0])
	if err != nil {
		return abort(err)
	}
	j, err := createExcl(jpath, 0o644)
	if err == nil {
		files = append(files, j)
		_, err = j.Write(append(doc, '\n'))
	}
	if err != nil {
		sp.Close()
		return abort(err)
	}
	if crashAt("journal") {
		return errCrashed
	}
	if err := sp.Sync(j); err != nil {
		return abort(err)
	}
	if crashAt("committed") {
		return errCrashed
	}

	// Step 3: install the new contents. From here on the transaction is
	// committed: a failure leaves the markers for the next locker.
	sp, err = fs.BeginSync(dirs...)
	if err != nil {
		return fmt.Errorf("%w: %w", fs.ErrDurabilityUnknown, err)
	}
	var errs []error
	for i, w := range ws {
		errs = append(errs, os.Rename(w.key+txTempSuffix, w.key))
		if crashAt("renamed", i) {
			sp.Close()
			return errCrashed
		}
	}
	errs = append(errs, sp.Sync())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: %w", fs.ErrDurabilityUnknown, err)
	}
	if crashAt("installed") {
		return errCrashed
	}

	// Step 4: clean up, the journal first (see recoverDoc). No sync is
	// needed: a marker that comes back after a power loss undoes nothing,
	// its new content being installed.
	os.Remove(jpath)
	if crashAt("forgotten") {
		return errCrashed
	}
	for i, w := range ws {
		os.Remove(w.key + markerSuffix)
		if crashAt("unmarked", i) {
			return errCrashed
		}
	}
	return nil
}

func keys(ws []txWrite) []string {
	ks := make([]string, len(ws))
	for i, w := range ws {
		ks[i] = w.key
	}
	return ks
}

// createExcl creates a new file; a link at name is never followed.
func createExcl(name string, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
}

// createTemp creates the file for w's new content, with the owner and mode
// of the document it will replace (owner-only until both are set), or
// with w.perm for a new document. A file left at its name by a commit
// that a power loss interrupted before its marker was durable is garbage:
// we hold the lock, and no marker names it.
func createTemp(w txWrite) (*os.File, error) {
	name := w.key + txTempSuffix
	prev, err := os.Lstat(w.key)
	if err != nil || !prev.Mode().IsRegular() {
		prev = nil
	}
	perm := w.perm
	if prev != nil {
		perm = prev.Mode().Perm() & 0o700
	}
	f, err := createExcl(name, perm)
	if errors.Is(err, os.ErrExist) {
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

// recoverDoc completes or undoes the transaction that a process which died
// during its commit left on the document at key, whose lock the caller
// holds; it does nothing (one lstat) when there is none. See the package
// doc (Transactions, recovery).
func recoverDoc(key string) error {
	m := key + markerSuffix
	if ok, err := lexists(m); !ok {
		return err
	}
	mfi, err := os.Lstat(m)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	data, err := fs.ReadRegular(m, maxMarkerSize)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // named once, here
		}
		return fmt.Errorf("transaction marker %s: %w", m, err)
	}
	jpath := strings.TrimSuffix(string(data), "\n")
	docs, committed, torn, err := readJournal(jpath, mfi)
	if err != nil {
		return fmt.Errorf("transaction marker %s: %w", m, err)
	}
	if committed {
		if err := syncCommit(jpath, docs); err != nil {
			return err
		}
		err := os.Rename(key+txTempSuffix, key)
		if err == nil {
			err = syncDir(filepath.Dir(key))
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err // installed before, if ErrNotExist
		}
	} else if err := os.Remove(key + txTempSuffix); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	// The journal goes before the marker when no other document needs it:
	// a marker without its journal undoes, which is a no-op once installed,
	// while a journal without markers would be left behind.
	if torn || committed && !othersPending(docs, jpath, mfi) {
		os.Remove(jpath)
	}
	return os.Remove(m)
}

// othersPending reports whether a document of the journal other than the
// one whose marker is mfi still has a marker naming it.
func othersPending(docs []string, jpath string, mfi os.FileInfo) bool {
	for _, doc := range docs {
		m := doc + markerSuffix
		if fi, err := os.Lstat(m); err == nil && !os.SameFile(fi, mfi) && names(m, jpath) {
			return true
		}
	}
	return false
}

// readJournal reads the journal a marker names. committed: it is complete
// and lists the marker's document (found by mfi, the marker's identity).
// torn: it exists but is incomplete (a crash while it was written), which
// like a missing journal means "not committed"; it may be removed. A
// journal that cannot be read (permissions, I/O) is an error: the outcome
// cannot be known.
func readJournal(jpath string, mfi os.FileInfo) (docs []string, committed, torn bool, err error) {
	base := filepath.Base(jpath)
	if !filepath.IsAbs(jpath) || !strings.HasPrefix(base, journalPrefix) || !strings.HasSuffix(base, journalSuffix) {
		return nil, false, false, nil // not a marker of ours: undo
	}
	data, err := fs.ReadRegular(jpath, maxJournal)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, false, nil
	}
	if err != nil {
		return nil, false, false, err
	}
	var j journal
	if json.Unmarshal(data, &j) != nil {
		return nil, false, true, nil
	}
	for _, doc := range j.Documents {
		if fi, err := os.Lstat(doc + markerSuffix); err == nil && os.SameFile(fi, mfi) {
			return j.Documents, true, false, nil
		}
	}
	return nil, false, false, nil // another transaction's: undo ours
}

// names reports whether the marker m names the journal jpath.
func names(m, jpath string) bool {
	data, err := fs.ReadRegular(m, maxMarkerSize)
	return err == nil && strings.TrimSuffix(string(data), "\n") == jpath
}

// syncCommit makes a committed transaction's journal and every new content
// and marker it still has durable, before the first document is installed
// on its behalf: the process that wrote them may have died before it synced
// them, and a power loss must not undo a part of the transaction after
// another part was installed.
func syncCommit(jpath string, docs []string) error {
	if err := syncFile(jpath); err != nil {
		return err
	}
	dirs := []string{filepath.Dir(jpath)}
	for _, doc := range docs {
		for _, name := range []string{doc + txTempSuffix, doc + markerSuffix} {
			if err := syncFile(name); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
		if d := filepath.Dir(doc); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	for _, d := range dirs {
		if err := syncDir(d); err != nil {
			return err
		}
	}
	return nil
}
