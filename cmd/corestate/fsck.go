package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/txfile"
)

// errUnusable marks fsck's finding of documents that Mutate refuses (exit
// 3, as for one corrupt document); errNotCorrupt quarantine's refusal to
// move a usable document (exit 9).
var (
	errUnusable   = fmt.Errorf("documents cannot be used: %w", status.ErrCorrupt)
	errNotCorrupt = errors.New("not corrupt")
	errTxFiles    = fmt.Errorf("transaction files need an operator: %w", status.ErrCorrupt)
)

// A finding is one line of fsck's report.
type finding struct {
	kind, path, detail string
}

// fsckReport counts what fsck found.
type fsckReport struct {
	docs, corrupt, refused, unreadable int
	temps, locks, txns, quarantined    int
	blocked, conflicts, orphans        int // transaction files that need an operator
}

func cmdFsck(args []string, stdout io.Writer) error {
	fl := newFlags("fsck")
	var df docFlags
	df.register(fl)
	pos, err := parseFlags(fl, args, stdout)
	if err != nil {
		return err
	}
	t, err := df.openTree("fsck", pos)
	if err != nil {
		return err
	}
	maxSize, k := df.maxSize, df.kind
	report := func(f finding) error {
		_, err := fmt.Fprintf(stdout, "%s\t%s\t%s\n", f.kind, quoteName(t.show(f.path)), oneLine(f.detail))
		return err
	}
	var r fsckReport
	werr := t.walk(func(path string, d iofs.DirEntry, err error) error {
		if err != nil {
			r.unreadable++
			return report(finding{"unreadable", path, errText(path, err)})
		}
		if d.IsDir() {
			if txfile.Is(d.Name()) {
				return report(r.checkTx(path, maxSize))
			}
			if hidden(d) {
				return filepath.SkipDir
			}
			if strings.HasSuffix(d.Name(), status.LockSuffix) {
				if f, ok := r.checkLock(path); ok {
					return report(f)
				}
			}
			if match, _ := filepath.Match(df.name, d.Name()); match {
				r.docs++
				r.refused++
				return report(finding{"refused", path, "a directory where a document belongs: every writer refuses it"})
			}
			return nil
		}
		f, ok := r.check(k, path, d.Name(), df.name, maxSize)
		if !ok {
			return nil
		}
		return report(f)
	})
	if werr != nil {
		return werr // stdout failed
	}
	if _, err := fmt.Fprintf(stdout, "checked %d documents: %d corrupt, %d refused, %d unreadable; %d temp files, %d lock files without a document, %d transaction files pending, %d quarantined copies; %d transaction files blocking, %d conflict copies, %d orphaned journals\n",
		r.docs, r.corrupt, r.refused, r.unreadable, r.temps, r.locks, r.txns, r.quarantined, r.blocked, r.conflicts, r.orphans); err != nil {
		return err
	}
	switch {
	case r.corrupt+r.refused > 0:
		return fmt.Errorf("fsck %s: %d %w (corestate quarantine FILE moves one aside)", t.root, r.corrupt+r.refused, errUnusable)
	case r.blocked+r.conflicts+r.orphans > 0:
		return fmt.Errorf("fsck %s: %d %w (see corestate help fsck)", t.root, r.blocked+r.conflicts+r.orphans, errTxFiles)
	case r.unreadable > 0:
		return fmt.Errorf("fsck %s: %d files or directories could not be read", t.root, r.unreadable)
	}
	return nil
}

// check classifies one file; ok is false for a file that is nothing to
// report (a usable document, another file).
func (r *fsckReport) check(k kind, path, base, pattern string, maxSize int64) (f finding, ok bool) {
	switch {
	case fs.IsTemp(base):
		r.temps++
		return finding{"temp", path, "left by an interrupted write " + age(path) + " (corestate sweep removes it)"}, true
	case strings.HasSuffix(base, status.LockSuffix):
		return r.checkLock(path)
	case txfile.Is(base):
		return r.checkTx(path, maxSize), true
	case strings.Contains(base, status.QuarantineSuffix):
		r.quarantined++
		return finding{"quarantined", path, "a document moved aside by quarantine; its bytes as they were"}, true
	}
	if match, _ := filepath.Match(pattern, base); !match {
		return f, false
	}
	r.docs++
	_, err := newStore(k, path, status.WithMaxSize(maxSize)).load(context.Background())
	var ce *status.CorruptError
	switch {
	case err == nil, errors.Is(err, os.ErrNotExist): // usable, or removed since the walk
		return f, false
	case errors.As(err, &ce):
		r.corrupt++
		return finding{"corrupt", path, fmt.Sprintf("at byte %d: %v", ce.Offset, ce.Err)}, true
	case errors.Is(err, fs.ErrTooLarge), errors.Is(err, fs.ErrNotRegular):
		r.refused++
		return finding{"refused", path, errText(path, err)}, true
	}
	r.unreadable++
	return finding{"unreadable", path, errText(path, err)}, true
}

// checkTx classifies a transaction file (txfile.Check): one the next
// locker of its documents finishes with, or one that needs an operator.
func (r *fsckReport) checkTx(path string, maxSize int64) finding {
	var err error
	if s := testSeams(); s == nil || !s.noTxCheck {
		err = txfile.Check(path, maxSize)
	}
	switch {
	case err == nil:
		r.txns++
		what := "transaction marker: the next writer of its documents recovers it"
		switch base := filepath.Base(path); {
		case strings.HasSuffix(base, txfile.TempSuffix):
			what = "new content of an unfinished transaction: the next commit or recovery of its document installs or removes it"
		case !strings.HasSuffix(base, txfile.MarkerSuffix):
			what = "journal of a committed transaction: the next writers of its documents finish with it"
		}
		return finding{"txn", path, what + "; left in place"}
	case errors.Is(err, txfile.ErrOrphan):
		r.orphans++
		return finding{"orphan", path, "a journal no marker names, never needed again: corestate sweep removes it"}
	case errors.Is(err, status.ErrTxConflict):
		r.conflicts++
		return finding{"conflict", path, txText(path, err) + ": merge it into the document by hand if its change is still wanted, then delete it"}
	}
	r.blocked++
	return finding{"blocked", path, txText(path, err) + ": every writer of its document fails until an operator removes it"}
}

// txText is a transaction file's error without the words that name the
// file, which the line shows.
func txText(path string, err error) string {
	s := err.Error()
	abs, _ := filepath.Abs(path)
	if i := strings.Index(s, abs+": "); i >= 0 && !strings.Contains(s[:i], "/") {
		return s[i+len(abs)+2:]
	}
	return s
}

// checkLock reports a lock file whose document is missing (harmless: the
// next writer uses it), and one that every writer refuses: not a regular
// file, or another user's in a sticky directory (txfile.CheckLock).
func (r *fsckReport) checkLock(path string) (finding, bool) {
	fi, err := os.Lstat(path)
	if err == nil && !fi.Mode().IsRegular() {
		r.refused++
		return finding{"refused", path, fmt.Sprintf("lock file is not a regular file (%v): every writer of its document refuses it", fi.Mode().Type())}, true
	}
	if s := testSeams(); s == nil || !s.noLockCheck {
		if err := txfile.CheckLock(path); errors.Is(err, status.ErrLockUntrusted) {
			r.refused++
			return finding{"refused", path, errText(path, err) + ": every writer of its document refuses it"}, true
		}
	}
	if _, err := os.Lstat(strings.TrimSuffix(path, status.LockSuffix)); errors.Is(err, os.ErrNotExist) {
		r.locks++
		return finding{"lock", path, "no document beside it (harmless: the next writer uses it)"}, true
	}
	return finding{}, false
}

// errText is err's message without the path, which the line shows.
func errText(path string, err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return strings.TrimPrefix(err.Error(), "status: read "+path+": ")
}

// age says how old the file at path is.
func age(path string) string {
	fi, err := os.Lstat(path)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%v ago", time.Since(fi.ModTime()).Round(time.Second))
}

func cmdQuarantine(ctx context.Context, args []string, stdout io.Writer) error {
	fl := newFlags("quarantine")
	timeout := fl.Duration("timeout", 30*time.Second, "wait at most this long for the lock (0: no limit)")
	var maxSize int64
	maxSizeFlag(fl, &maxSize)
	var k kind
	kindFlag(fl, &k)
	pos, err := parseFlags(fl, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: quarantine wants FILE, got %d arguments", errUsage, len(pos))
	}
	if *timeout < 0 {
		return fmt.Errorf("%w: quarantine: --timeout must not be negative (0 waits without limit)", errUsage)
	}
	path := pos[0]
	ctx, cancel := withTimeout(ctx, *timeout)
	defer cancel()
	moved, err := newStore(k, path, status.WithMaxSize(maxSize)).quarantine(ctx)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("quarantine %s: lock not acquired within --timeout %v: %w", path, *timeout, context.DeadlineExceeded)
	case err != nil:
		return err // names the path
	case moved == "":
		return fmt.Errorf("quarantine %s: %w: it decodes, nothing was moved", path, errNotCorrupt)
	}
	_, err = fmt.Fprintln(stdout, quoteName(moved))
	return err
}
