package status

// The recovery of the earlier version of this package, kept for the
// controls of the tests: each shows, in the same harness as the current
// recovery, a failure the earlier one had (a hang on a planted named pipe,
// devices opened, files deleted, a sync of a removed workspace that fails
// for good, work done after ctx ended). It reads markers of the earlier
// one-line format (see legacyMarkers). Not used outside tests.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/agentstate/core/fs"
)

const (
	legacyMaxMarker  = 8 << 10
	legacyMaxJournal = 1 << 20
)

// useLegacyRecovery makes every locker recover with the earlier recovery
// until tb ends. onSync, if not nil, is told of each file or directory it
// syncs.
func useLegacyRecovery(tb testing.TB, onSync func(name string)) {
	s := fileSeams(tb)
	legacySynced, legacyInUse = onSync, true
	s.Recover = func(_ context.Context, key string, _ int64) ([]string, error) { return nil, legacyRecoverDoc(key) }
	tb.Cleanup(func() { s.Recover, legacySynced, legacyInUse = nil, nil, false })
}

var (
	legacySynced func(name string)
	legacyInUse  bool // useLegacyRecovery is in force
)

// legacyMarkers rewrites the markers of the documents at keys in the
// earlier format (the journal's path and a newline), as the earlier commit
// left them.
func legacyMarkers(tb testing.TB, keys ...string) {
	tb.Helper()
	for _, key := range keys {
		data, err := os.ReadFile(key + markerSuffix)
		if err != nil {
			tb.Fatal(err)
		}
		j, _, _ := strings.Cut(string(data), "\n")
		if err := os.WriteFile(key+markerSuffix, []byte(j+"\n"), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

func legacyLexists(name string) (bool, error) {
	_, err := os.Lstat(name)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// legacySyncFile and legacySyncDir are the earlier recovery's syncs (the
// file backend's own: an open that follows links, of any file but without
// blocking, and a plain open of a directory, which blocks on a named
// pipe), told to legacySynced first.
func legacySyncFile(path string) error {
	if legacySynced != nil {
		legacySynced(path)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return err
	} else if !fi.Mode().IsRegular() {
		return fs.ErrNotRegular
	}
	return f.Sync()
}

func legacySyncDir(dir string) error {
	if legacySynced != nil {
		legacySynced(dir)
	}
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("%w: %w", fs.ErrDurabilityUnknown, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("%w: %w", fs.ErrDurabilityUnknown, err)
	}
	return nil
}

// legacyRecoverDoc completes or undoes the transaction that a process which died
// during its commit left on the document at key, whose lock the caller
// holds; it does nothing (one lstat) when there is none. See the package
// doc (Transactions, recovery).
func legacyRecoverDoc(key string) error {
	m := key + markerSuffix
	if ok, err := legacyLexists(m); !ok {
		return err
	}
	mfi, err := os.Lstat(m)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	data, err := fs.ReadRegular(m, legacyMaxMarker)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // named once, here
		}
		return fmt.Errorf("transaction marker %s: %w", m, err)
	}
	jpath := strings.TrimSuffix(string(data), "\n")
	docs, committed, torn, err := legacyReadJournal(jpath, mfi)
	if err != nil {
		return fmt.Errorf("transaction marker %s: %w", m, err)
	}
	if committed {
		if err := legacySyncCommit(jpath, docs); err != nil {
			return err
		}
		err := os.Rename(key+txTempSuffix, key)
		if err == nil {
			err = legacySyncDir(filepath.Dir(key))
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
	if torn || committed && !legacyOthersPending(docs, jpath, mfi) {
		os.Remove(jpath)
	}
	return os.Remove(m)
}

// legacyOthersPending reports whether a document of the journal other than the
// one whose marker is mfi still has a marker naming it.
func legacyOthersPending(docs []string, jpath string, mfi os.FileInfo) bool {
	for _, doc := range docs {
		m := doc + markerSuffix
		if fi, err := os.Lstat(m); err == nil && !os.SameFile(fi, mfi) && legacyNames(m, jpath) {
			return true
		}
	}
	return false
}

// legacyReadJournal reads the journal a marker names. committed: it is complete
// and lists the marker's document (found by mfi, the marker's identity).
// torn: it exists but is incomplete (a crash while it was written), which
// like a missing journal means "not committed"; it may be removed. A
// journal that cannot be read (permissions, I/O) is an error: the outcome
// cannot be known.
func legacyReadJournal(jpath string, mfi os.FileInfo) (docs []string, committed, torn bool, err error) {
	base := filepath.Base(jpath)
	if !filepath.IsAbs(jpath) || !strings.HasPrefix(base, journalPrefix) || !strings.HasSuffix(base, journalSuffix) {
		return nil, false, false, nil // not a marker of ours: undo
	}
	data, err := fs.ReadRegular(jpath, legacyMaxJournal)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, false, nil
	}
	if err != nil {
		return nil, false, false, err
	}
	var j struct {
		Documents []string `json:"documents"`
	}
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
func legacyNames(m, jpath string) bool {
	data, err := fs.ReadRegular(m, legacyMaxMarker)
	return err == nil && strings.TrimSuffix(string(data), "\n") == jpath
}

// legacySyncCommit makes a committed transaction's journal and every new content
// and marker it still has durable, before the first document is installed
// on its behalf: the process that wrote them may have died before it synced
// them, and a power loss must not undo a part of the transaction after
// another part was installed.
func legacySyncCommit(jpath string, docs []string) error {
	if err := legacySyncFile(jpath); err != nil {
		return err
	}
	dirs := []string{filepath.Dir(jpath)}
	for _, doc := range docs {
		for _, name := range []string{doc + txTempSuffix, doc + markerSuffix} {
			if err := legacySyncFile(name); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
		if d := filepath.Dir(doc); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	for _, d := range dirs {
		if err := legacySyncDir(d); err != nil {
			return err
		}
	}
	return nil
}
