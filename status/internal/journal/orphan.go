package journal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// CheckJournal reports, changing nothing and taking no lock, whether the
// journal at name is still needed: nil when a marker of a document it
// lists names it (the next locker of that document finishes with it); an
// error matching ErrOrphan when none does; an error matching ErrUntrusted
// for a file that is not a journal recovery could use (then it also blocks
// the documents whose markers name it).
//
// A journal no marker names can never be needed again: a commit creates its
// markers before its journal and removes them only after it.
func CheckJournal(name string) error {
	j, err := openJournalFile(name)
	if err != nil {
		return err
	}
	defer j.close()
	return j.check()
}

// RemoveOrphan removes the journal at name if no marker names it (see
// CheckJournal) and this process may trust it: in a sticky directory only a
// journal of its own or of the directory's owner. A journal that is still
// needed is left (false, nil); one that cannot be read or trusted is an
// error.
func RemoveOrphan(name string) (bool, error) {
	j, err := openJournalFile(name)
	if err != nil {
		return false, err
	}
	defer j.close()
	if err := j.check(); err == nil || !errors.Is(err, ErrOrphan) {
		return false, err
	}
	if err := j.d.trusts("journal", name, j.f.info, -1); err != nil {
		return false, err
	}
	if err := j.d.unlink(filepath.Base(name)); err != nil {
		return false, &Error{Role: "journal", Path: name, Err: errors.Unwrap(err)}
	}
	return true, nil
}

// Waiting returns the documents that still need a journal which lies in
// the directory of path and lists path: the other documents of committed
// transactions whose markers name such a journal. The journal goes only
// once each of them is recovered. Files of that directory that are not
// journals recovery would trust are passed over.
func Waiting(ctx context.Context, path string) ([]string, error) {
	d := filepath.Dir(path)
	ents, err := os.ReadDir(d)
	if err != nil {
		return nil, err
	}
	var docs []string
	for _, e := range ents {
		if !IsJournalName(e.Name()) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return docs, err
		}
		j, err := openJournalFile(filepath.Join(d, e.Name()))
		if err != nil {
			continue
		}
		if slices.Contains(j.docs, path) && j.d.trusts("journal", j.name, j.f.info, -1) == nil {
			for _, doc := range j.docs {
				if doc != path && !slices.Contains(docs, doc) && names(doc, j.name, j.f.info, nil) {
					docs = append(docs, doc)
				}
			}
		}
		j.close()
	}
	return docs, nil
}

// A journalFile is a journal opened and parsed by name.
type journalFile struct {
	name string
	d    *dir
	f    *file
	docs []string
}

func (j *journalFile) close() {
	j.f.close()
	j.d.close()
}

// openJournalFile opens the journal at name by the opening rules and parses
// it.
func openJournalFile(name string) (*journalFile, error) {
	if !IsJournalName(filepath.Base(name)) {
		return nil, untrusted("journal", name, "not a journal's name")
	}
	d, err := openDir(filepath.Dir(name))
	if err != nil {
		return nil, &Error{Role: "journal", Path: name, Err: err}
	}
	j := &journalFile{name: name, d: d}
	if j.f, err = d.open("journal", filepath.Base(name), MaxJournal); err != nil {
		d.close()
		return nil, err
	}
	data, err := readAll(j.f, "journal", MaxJournal)
	if err == nil {
		if j.docs, err = parseJournal(data); err != nil {
			err = untrusted("journal", name, "%v", err)
		}
	}
	if err != nil {
		j.close()
		return nil, err
	}
	return j, nil
}

// check is CheckJournal on an open journal.
func (j *journalFile) check() error {
	for _, doc := range j.docs {
		if names(doc, j.name, j.f.info, nil) {
			return nil
		}
	}
	// Still the same file by its name: otherwise it was removed (by its
	// committer, after its markers were read) and is no orphan.
	now, ok, err := j.d.stat(filepath.Base(j.name))
	if err != nil {
		return err
	}
	if !ok || !now.same(j.f.info) {
		return &Error{Role: "journal", Path: j.name, Err: os.ErrNotExist}
	}
	return &Error{Role: "journal", Path: j.name, Err: fmt.Errorf("%w: no marker of the %d documents it lists names it", ErrOrphan, len(j.docs))}
}
