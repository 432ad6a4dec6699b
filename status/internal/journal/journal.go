// Package journal is the file protocol of multi-document transactions: the
// files a commit leaves next to its documents, the commit, and the recovery
// that whoever next holds a document's lock runs after a crash. It takes
// paths and bytes and knows nothing of what the documents hold; its caller
// (package status) holds the documents' locks. The rules — the formats,
// what recovery opens and refuses, the trust rule — are stated once, for
// users and for programs in other languages, in package status
// (Transactions); this package keeps them.
//
// For a document PATH a commit writes:
//
//	PATH.txn       the marker: "J\nBEFORE\n", J the journal's absolute path,
//	               BEFORE "none" or the hex SHA-256 of PATH as read
//	PATH.txn.tmp   the new content
//	J              DIR/.txn-<16 hex digits>.journal: {"documents": [paths]},
//	               DIR the directory of one of the documents; its
//	               existence is the commit point
package journal

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/agentstate/core/fs"
)

// Names and limits of the protocol.
const (
	MarkerSuffix   = ".txn"
	TempSuffix     = ".txn.tmp"
	ConflictSuffix = ".conflict-" // then the time in UTC: PATH.conflict-20260102T150405Z
	journalPrefix  = ".txn-"
	journalSuffix  = ".journal"
	journalHex     = 16

	MaxMarker    = 4 << 10 // bytes
	MaxJournal   = 1 << 20 // bytes
	MaxDocuments = 1024    // listed in one journal
)

// Sentinels, matched with [errors.Is]; every error also names its file.
var (
	// ErrUntrusted: a transaction file that recovery will not act on: not
	// a regular file, too large, malformed, more than one hard link, owned
	// by someone it must not install from, or a journal that does not
	// list the document. The document is left as it is.
	ErrUntrusted = errors.New("transaction file cannot be trusted")

	// ErrConflict: a committed transaction's document was replaced or
	// removed after the commit point by a writer that does not recover
	// transactions; recovery kept the document and moved the
	// transaction's copy aside (ConflictSuffix).
	ErrConflict = errors.New("transaction conflicts with a later write")

	// ErrOrphan: a journal that no marker names; it can never be needed
	// again and may be removed.
	ErrOrphan = errors.New("orphaned journal")

	// ErrTooLarge: a commit over the limits recovery trusts (MaxDocuments,
	// MaxJournal, MaxMarker, a document's size limit), refused before
	// anything is written: its recovery would refuse it and leave the
	// documents blocked.
	ErrTooLarge = errors.New("transaction over the limits recovery trusts")
)

// An Error names the transaction file at which recovery, a check or a sweep
// stopped, and why.
type Error struct {
	Role string // "marker", "new content", "journal", "document"
	Path string
	Err  error
}

func (e *Error) Error() string { return "transaction " + e.Role + " " + e.Path + ": " + e.Err.Error() }

// Unwrap returns the cause: ErrUntrusted with a detail, fs.ErrNotRegular,
// fs.ErrTooLarge, ErrConflict, a system call's error.
func (e *Error) Unwrap() error { return e.Err }

func untrusted(role, path, format string, args ...any) error {
	return &Error{Role: role, Path: path, Err: fmt.Errorf("%w: "+format, append([]any{ErrUntrusted}, args...)...)}
}

// IsJournalName reports whether base is the name of a journal file.
func IsJournalName(base string) bool {
	if len(base) != len(journalPrefix)+journalHex+len(journalSuffix) ||
		!strings.HasPrefix(base, journalPrefix) || !strings.HasSuffix(base, journalSuffix) {
		return false
	}
	return isHex(base[len(journalPrefix) : len(journalPrefix)+journalHex])
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// validPath reports whether p may name a document or a journal in a marker
// or a journal: absolute, clean (no "..", so that no lexical trick makes it
// name another file than the kernel would), valid UTF-8, no NUL or newline.
func validPath(p string) bool {
	return len(p) > 1 && filepath.IsAbs(p) && filepath.Clean(p) == p && utf8.ValidString(p) &&
		!strings.ContainsAny(p, "\x00\n")
}

// none is BEFORE for a document that did not exist.
const none = "none"

// Before is the BEFORE line of a marker for a document read as data (nil:
// it did not exist).
func Before(data []byte) string {
	if data == nil {
		return none
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// A marker is a parsed PATH.txn.
type marker struct {
	journal string
	before  string // none, or 64 hex digits
}

// parseMarker parses a marker's content. torn: the content is a prefix of a
// marker that was never completed (a crash between its creation and its
// write, or a power loss before its sync): no journal can exist for it,
// because a commit makes its markers durable before it writes the journal.
func parseMarker(data []byte) (m marker, torn bool, ok bool) {
	s := string(data)
	line, rest, found := strings.Cut(s, "\n")
	if !found {
		// Every prefix of an absolute path, the empty one included.
		torn = (s == "" || strings.HasPrefix(s, "/")) && utf8.ValidString(s) && !strings.Contains(s, "\x00")
		return marker{}, torn, false
	}
	if !validPath(line) || !IsJournalName(filepath.Base(line)) {
		return marker{}, false, false
	}
	m.journal = line
	before, tail, found := strings.Cut(rest, "\n")
	if !found || tail != "" || before != none && (len(before) != 64 || !isHex(before)) {
		return marker{}, false, false
	}
	m.before = before
	return m, false, true
}

func formatMarker(journal, before string) []byte {
	return []byte(journal + "\n" + before + "\n")
}

// journalDoc is a journal's content.
type journalDoc struct {
	Documents []string `json:"documents"`
}

// parseJournal parses a journal strictly: one JSON object with one member,
// documents, a list of 1 to MaxDocuments distinct valid paths.
func parseJournal(data []byte) ([]string, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var j journalDoc
	if err := dec.Decode(&j); err != nil {
		return nil, fmt.Errorf("not a journal: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not a journal: data after the object")
	}
	if len(j.Documents) == 0 || len(j.Documents) > MaxDocuments {
		return nil, fmt.Errorf("lists %d documents, want 1 to %d", len(j.Documents), MaxDocuments)
	}
	seen := make(map[string]bool, len(j.Documents))
	for _, d := range j.Documents {
		if !validPath(d) {
			return nil, fmt.Errorf("lists %q, which is not an absolute, clean path", d)
		}
		if seen[d] {
			return nil, fmt.Errorf("lists %s twice", d)
		}
		seen[d] = true
	}
	return j.Documents, nil
}

func tooLarge(role, name string, size, limit int64) error {
	return &Error{Role: role, Path: name, Err: fmt.Errorf("%w: %w: %d bytes, limit %d", ErrUntrusted, fs.ErrTooLarge, size, limit)}
}

func notRegular(role, name string, fi info) error {
	return &Error{Role: role, Path: name, Err: fmt.Errorf("%w: %w (%s)", ErrUntrusted, fs.ErrNotRegular, fi.kind())}
}
