package journal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Recover completes or undoes the transaction that a crash left on the
// document at path (absolute and clean), whose lock the caller holds, by
// the rules of package status (Transactions, Recovery). When the document
// has no marker it costs one lstat. maxSize bounds the new content and the
// document (<= 0: no bound). ctx is checked between steps: an error
// wrapping ctx.Err() leaves the files in a state the next locker
// recovers.
//
// pending lists the transaction's other documents whose markers still name
// its journal: each is completed by its own next locker. A state that
// cannot be trusted is an *Error matching ErrUntrusted that names the file
// and changes nothing; a conflict is an *Error matching ErrConflict, after
// which the document is as the later writer left it and the transaction's
// files are gone.
func Recover(ctx context.Context, path string, maxSize int64) (pending []string, err error) {
	if ok, err := lexists(path + MarkerSuffix); !ok {
		return nil, err
	}
	r, err := plan(ctx, path, maxSize)
	defer r.close()
	if err != nil || r.m == nil {
		return nil, err
	}
	return r.act(ctx)
}

// Check reports, changing nothing and taking no lock, what the next
// locker's recovery of the document at path would meet: nil when there is
// no marker or recovery would complete or undo the transaction; otherwise
// the error that would stop it (ErrUntrusted, an I/O error) or, for a
// conflict, an error matching ErrConflict.
func Check(path string, maxSize int64) error {
	r, err := plan(context.Background(), path, maxSize)
	defer r.close()
	if err == nil && r.conflict {
		err = &Error{Role: "document", Path: path, Err: fmt.Errorf("%w: replaced or removed after its transaction (%s) committed; the next locker keeps it and moves the transaction's copy aside", ErrConflict, r.mk.journal)}
	}
	return err
}

// A recovery is the state of one document's recovery: the files it opened
// and what it decided.
type recovery struct {
	path, base string
	d          *dir  // the document's directory
	m          *file // the marker; nil: none
	mk         marker
	docUID     int64 // the document's owner; -1 when there is none
	committed  bool
	jd         *dir  // the journal's directory (d when it is the same)
	j          *file // the journal, when committed
	docs       []string
	tmp        *file // the new content, when committed and not installed yet
	conflict   bool  // the document changed since the marker was written
}

func (r *recovery) close() {
	if r == nil {
		return
	}
	r.m.close()
	r.j.close()
	r.tmp.close()
	if r.jd != r.d {
		r.jd.close()
	}
	r.d.close()
}

// plan opens and checks what recovery of path needs, and decides, without
// changing anything.
func plan(ctx context.Context, path string, maxSize int64) (*recovery, error) {
	r := &recovery{path: path, base: filepath.Base(path), docUID: -1}
	if !validPath(path) {
		return r, untrusted("document", path, "not an absolute, clean path")
	}
	var err error
	if r.d, err = openDir(filepath.Dir(path)); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return r, nil
		}
		return r, err
	}
	r.m, err = r.d.open("marker", r.base+MarkerSuffix, MaxMarker)
	if errors.Is(err, os.ErrNotExist) {
		r.m = nil
		return r, nil
	}
	if err != nil {
		return r, err
	}
	doc, docExists, err := r.d.stat(r.base)
	if err != nil {
		return r, err
	}
	if docExists && doc.regular() {
		r.docUID = doc.owner()
	}
	if err := r.d.trusts("marker", r.m.f.Name(), r.m.info, r.docUID); err != nil {
		return r, err
	}
	data, err := readAll(r.m, "marker", MaxMarker)
	if err != nil {
		return r, err
	}
	mk, torn, ok := parseMarker(data)
	if torn {
		return r, r.checkUndo()
	}
	if !ok {
		return r, untrusted("marker", r.m.f.Name(), "malformed (%.80q)", data)
	}
	r.mk = mk
	if err := ctx.Err(); err != nil {
		return r, err
	}
	if err := r.openJournal(); err != nil || !r.committed {
		if err == nil {
			err = r.checkUndo()
		}
		return r, err
	}
	if err := ctx.Err(); err != nil {
		return r, err
	}
	r.tmp, err = r.d.open("new content", r.base+TempSuffix, maxSize)
	if errors.Is(err, os.ErrNotExist) {
		r.tmp = nil // installed already
		return r, nil
	}
	if err != nil {
		return r, err
	}
	if err := r.d.trusts("new content", r.tmp.f.Name(), r.tmp.info, r.docUID); err != nil {
		return r, err
	}
	if s := TestSeams(); s == nil || !s.NoConflictCheck {
		now, err := r.current(docExists, doc, maxSize)
		if err != nil {
			return r, err
		}
		r.conflict = now != r.mk.before
	}
	return r, nil
}

// openJournal opens, checks and reads the journal the marker names. A
// journal that does not exist means the transaction did not commit.
func (r *recovery) openJournal() error {
	jpath := r.mk.journal
	if jdir := filepath.Dir(jpath); jdir == r.d.name {
		r.jd = r.d
	} else {
		var err error
		if r.jd, err = openDir(jdir); err != nil {
			if errors.Is(err, os.ErrNotExist) || errors.Is(err, errNotDir) {
				return nil // then the journal does not exist either
			}
			return &Error{Role: "journal", Path: jpath, Err: err}
		}
	}
	j, err := r.jd.open("journal", filepath.Base(jpath), MaxJournal)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	r.j = j
	if err := r.jd.trusts("journal", jpath, j.info, r.docUID); err != nil {
		return err
	}
	data, err := readAll(j, "journal", MaxJournal)
	if err != nil {
		return err
	}
	docs, err := parseJournal(data)
	if err != nil {
		return untrusted("journal", jpath, "%v", err)
	}
	if !slices.Contains(docs, r.path) && !slices.ContainsFunc(docs, r.isOurMarker) {
		return untrusted("journal", jpath, "does not list %s", r.path)
	}
	if !slices.ContainsFunc(docs, r.inJournalDir) {
		return untrusted("journal", jpath, "is not in the directory of a document it lists (as opened)")
	}
	r.docs, r.committed = docs, true
	return nil
}

// inJournalDir reports whether the journal's directory, as opened, is
// doc's: the journal's path names doc's directory, and the directory
// opened is the same (device and inode) as our document's, which the
// recovery holds, or as doc's directory found again now. Every later step
// on the journal acts through that descriptor (see dir), so a link on the
// way to the journal that another user swaps between two looks cannot
// make it act elsewhere.
func (r *recovery) inJournalDir(doc string) bool {
	switch {
	case filepath.Dir(doc) != r.jd.name:
		return false
	case r.jd == r.d, byPath(), r.jd.sameAs(r.d):
		return true
	}
	return r.jd.isAt(filepath.Dir(doc))
}

// isOurMarker reports whether doc, listed by the journal, is our document
// named another way: its marker is ours (device and inode).
func (r *recovery) isOurMarker(doc string) bool {
	fi, err := os.Lstat(doc + MarkerSuffix)
	if err != nil {
		return false
	}
	st, ok := statOf(fi)
	return ok && st.same(r.m.info)
}

// checkUndo checks what undoing will remove: the new content, if any, must
// not be a directory (recovery never removes one).
func (r *recovery) checkUndo() error {
	fi, ok, err := r.d.stat(r.base + TempSuffix)
	switch {
	case err != nil:
		return err
	case ok && fi.isDir():
		return untrusted("new content", r.d.path(r.base+TempSuffix), "a directory")
	}
	return nil
}

// current returns the BEFORE line for the document as it is now.
func (r *recovery) current(exists bool, fi info, maxSize int64) (string, error) {
	if !exists {
		return none, nil
	}
	if !fi.regular() {
		return "", notRegular("document", r.path, fi)
	}
	f, err := r.d.open("document", r.base, maxSize)
	if err != nil {
		return "", err
	}
	defer f.close()
	h := sha256.New()
	if _, err := io.Copy(h, f.f); err != nil {
		return "", &Error{Role: "document", Path: r.path, Err: err}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// act carries out what plan decided.
func (r *recovery) act(ctx context.Context) ([]string, error) {
	if !r.committed {
		// Not committed: undo. The new content goes first, so that a
		// crash in between leaves a marker that undoes again.
		if err := r.d.unlink(r.base + TempSuffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		return nil, r.d.unlink(r.base + MarkerSuffix)
	}
	// Committed. The writer may have died before the journal's rename was
	// durable: make it so before anything is installed on its behalf.
	if err := r.j.f.Sync(); err != nil {
		return nil, &Error{Role: "journal", Path: r.mk.journal, Err: err}
	}
	if err := r.jd.sync(); err != nil {
		return nil, err
	}
	var conflict error
	if r.tmp != nil {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if r.conflict {
			moved, err := r.moveAside()
			if err != nil {
				return nil, err
			}
			conflict = &Error{Role: "document", Path: r.path, Err: fmt.Errorf("%w: replaced or removed after its transaction (%s) committed, by a writer that does not recover transactions: kept as it is; the transaction's copy is %s", ErrConflict, r.mk.journal, moved)}
		} else if err := r.install(); err != nil {
			return nil, err
		}
	}
	pending, err := r.cleanup(ctx)
	if err != nil {
		return pending, err
	}
	return pending, conflict
}

// install renames the new content over the document and makes it durable.
func (r *recovery) install() error {
	if err := r.tmp.f.Sync(); err != nil {
		return &Error{Role: "new content", Path: r.tmp.f.Name(), Err: err}
	}
	if err := r.d.rename(r.base+TempSuffix, r.base); err != nil {
		return err
	}
	now, ok, err := r.d.stat(r.base)
	if err != nil {
		return err
	}
	if !ok || !now.same(r.tmp.info) {
		return untrusted("new content", r.tmp.f.Name(), "replaced while it was installed")
	}
	return r.d.sync()
}

// moveAside renames the new content to a name that did not exist (see
// ConflictSuffix), reserved first with O_EXCL, and returns it.
func (r *recovery) moveAside() (string, error) {
	base := r.base + ConflictSuffix + time.Now().UTC().Format("20060102T150405Z")
	for i := 1; i <= 1000; i++ {
		name := base
		if i > 1 {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		f, err := r.d.createExcl(name, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		f.Close()
		if err := r.d.rename(r.base+TempSuffix, name); err != nil {
			r.d.unlink(name)
			return "", err
		}
		return r.d.path(name), r.d.sync()
	}
	return "", fmt.Errorf("%w: %s-2 to -1000 are all taken", os.ErrExist, r.d.path(base))
}

// cleanup removes the marker and, once no other marker names it, the
// journal. The journal goes first when no other document needs it: a
// marker without its journal undoes, which is harmless once its document
// is installed. Otherwise our marker goes first and the others are looked
// at again: of two recoverers of one transaction at once, the later to
// look then sees that nobody needs the journal.
func (r *recovery) cleanup(ctx context.Context) ([]string, error) {
	jbase := filepath.Base(r.mk.journal)
	others, err := r.others(ctx)
	hook("cleanup", r.path)
	if err != nil {
		return others, err
	}
	if len(others) == 0 {
		if err := r.jd.unlink(jbase); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		return nil, r.d.unlink(r.base + MarkerSuffix)
	}
	if err := r.d.unlink(r.base + MarkerSuffix); err != nil {
		return others, err
	}
	if others, err = r.others(ctx); err != nil || len(others) > 0 {
		return others, err
	}
	if err := r.jd.unlink(jbase); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return nil, nil
}

// others returns the documents of the journal, other than ours, whose
// markers name it.
func (r *recovery) others(ctx context.Context) ([]string, error) {
	var found []string
	for _, doc := range r.docs {
		if doc == r.path {
			continue
		}
		if err := ctx.Err(); err != nil {
			return found, err
		}
		if names(doc, r.mk.journal, r.j.info, r.m) {
			found = append(found, doc)
		}
	}
	return found, nil
}

// names reports whether the marker of doc names the journal jpath, whose
// identity is jid (a marker may spell its path another way). ours, if not
// nil, is a marker that does not count. A marker that cannot be read for a
// reason other than its absence or its kind is counted: whether it names
// the journal is unknown, so the journal is kept.
func names(doc, jpath string, jid info, ours *file) bool {
	m, err := openPath("marker", doc+MarkerSuffix, MaxMarker)
	if err != nil {
		return !errors.Is(err, os.ErrNotExist) && !errors.Is(err, ErrUntrusted)
	}
	defer m.close()
	if ours != nil && m.info.same(ours.info) {
		return false
	}
	data, err := readAll(m, "marker", MaxMarker)
	if err != nil {
		return !errors.Is(err, ErrUntrusted)
	}
	mk, _, ok := parseMarker(data)
	switch {
	case !ok:
		return false
	case mk.journal == jpath:
		return true
	case filepath.Base(mk.journal) != filepath.Base(jpath):
		return false
	}
	fi, err := os.Lstat(mk.journal)
	if err != nil {
		return false
	}
	st, ok := statOf(fi)
	return ok && st.same(jid)
}

// readAll reads f whole, at most limit bytes (> 0).
func readAll(f *file, role string, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(f.f, limit+1))
	if err != nil {
		return nil, &Error{Role: role, Path: f.f.Name(), Err: err}
	}
	if limit > 0 && int64(len(data)) > limit {
		return nil, tooLarge(role, f.f.Name(), int64(len(data)), limit)
	}
	return data, nil
}
