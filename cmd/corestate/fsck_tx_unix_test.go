//go:build unix

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A transaction file that blocks a document must never pass for healthy.
// Each shape below is planted next to a good document; corestate incr (a
// locker, recovering through the library) is refused, and fsck must list
// the file and exit 3. The control switches fsck's check of transaction
// files off: the blocked documents then pass.

const txJournal = ".txn-0123456789abcdef.journal"

// txShape plants one state in dir, next to dir/status.json.
type txShape struct {
	name  string
	plant func(t *testing.T, dir, doc, j string)
}

func marker(j, doc string) string {
	data, _ := os.ReadFile(doc)
	sum := sha256.Sum256(data)
	return j + "\n" + hex.EncodeToString(sum[:]) + "\n"
}

func journalOf(docs ...string) string {
	b, _ := json.Marshal(map[string][]string{"documents": docs})
	return string(b)
}

// committed plants a valid marker and, unless j is planted otherwise, the
// journal listing doc.
func committed(t *testing.T, doc, j string, plantJournal bool) {
	writeFile(t, doc+".txn", marker(j, doc))
	if plantJournal {
		writeFile(t, j, journalOf(doc))
	}
}

var blockingShapes = []txShape{
	{"marker: a directory", func(t *testing.T, dir, doc, j string) { os.Mkdir(doc+".txn", 0o755) }},
	{"marker: a named pipe", func(t *testing.T, dir, doc, j string) { syscall.Mkfifo(doc+".txn", 0o644) }},
	{"marker: a symbolic link", func(t *testing.T, dir, doc, j string) {
		writeFile(t, filepath.Join(dir, "elsewhere"), marker(j, doc))
		os.Symlink(filepath.Join(dir, "elsewhere"), doc+".txn")
	}},
	{"marker: 9 KiB", func(t *testing.T, dir, doc, j string) { writeFile(t, doc+".txn", strings.Repeat("/", 9<<10)) }},
	{"marker: garbage", func(t *testing.T, dir, doc, j string) { writeFile(t, doc+".txn", "journal-1") }},
	{"marker: not a journal's name", func(t *testing.T, dir, doc, j string) { writeFile(t, doc+".txn", "/etc/passwd\n") }},
	{"marker: a bad BEFORE line", func(t *testing.T, dir, doc, j string) { writeFile(t, doc+".txn", j+"\nxyz\n") }},
	{"marker: two hard links", func(t *testing.T, dir, doc, j string) {
		committed(t, doc, j, true)
		os.Link(doc+".txn", filepath.Join(dir, "second-link"))
	}},
	{"journal: a directory", func(t *testing.T, dir, doc, j string) { committed(t, doc, j, false); os.Mkdir(j, 0o755) }},
	{"journal: a named pipe", func(t *testing.T, dir, doc, j string) { committed(t, doc, j, false); syscall.Mkfifo(j, 0o644) }},
	{"journal: a symbolic link", func(t *testing.T, dir, doc, j string) {
		committed(t, doc, j, false)
		writeFile(t, filepath.Join(dir, "elsewhere"), journalOf(doc))
		os.Symlink(filepath.Join(dir, "elsewhere"), j)
	}},
	{"journal: 2 MiB", func(t *testing.T, dir, doc, j string) {
		committed(t, doc, j, false)
		writeFile(t, j, `{"documents": ["`+doc+`"]}`+strings.Repeat(" ", 2<<20))
	}},
	{"journal: not JSON", func(t *testing.T, dir, doc, j string) {
		committed(t, doc, j, false)
		writeFile(t, j, `{"documents": [`)
	}},
	{"journal: does not list the document", func(t *testing.T, dir, doc, j string) {
		committed(t, doc, j, false)
		writeFile(t, j, journalOf(filepath.Join(dir, "other.json")))
	}},
	{"journal: a path that is not clean", func(t *testing.T, dir, doc, j string) {
		committed(t, doc, j, false)
		writeFile(t, j, journalOf(doc, dir+"/x/../y.json"))
	}},
	{"journal: 1025 documents", func(t *testing.T, dir, doc, j string) {
		committed(t, doc, j, false)
		docs := []string{doc}
		for i := range 1024 {
			docs = append(docs, filepath.Join(dir, fmt.Sprintf("d%d.json", i)))
		}
		writeFile(t, j, journalOf(docs...))
	}},
	{"journal: another member", func(t *testing.T, dir, doc, j string) {
		committed(t, doc, j, false)
		writeFile(t, j, `{"documents": ["`+doc+`"], "extra": 1}`)
	}},
	{"new content: a directory", func(t *testing.T, dir, doc, j string) {
		writeFile(t, doc+".txn", marker(j, doc)) // no journal: undo, which removes no directory
		os.Mkdir(doc+".txn.tmp", 0o755)
	}},
	{"new content: a named pipe", func(t *testing.T, dir, doc, j string) {
		committed(t, doc, j, true)
		syscall.Mkfifo(doc+".txn.tmp", 0o644)
	}},
	{"new content: a symbolic link", func(t *testing.T, dir, doc, j string) {
		committed(t, doc, j, true)
		writeFile(t, filepath.Join(dir, "elsewhere"), good)
		os.Symlink(filepath.Join(dir, "elsewhere"), doc+".txn.tmp")
	}},
}

func TestFsckListsBlockingTransactionFiles(t *testing.T) {
	run := func(t *testing.T) (blocked, passed int) {
		for _, sh := range blockingShapes {
			root := t.TempDir()
			dir := filepath.Join(root, "w")
			os.Mkdir(dir, 0o755)
			doc := filepath.Join(dir, "status.json")
			writeFile(t, doc, good)
			sh.plant(t, dir, doc, filepath.Join(dir, txJournal))
			if r := corestate(t, "incr", "--timeout", "10s", doc, "runs"); r.code == exitOK {
				t.Fatalf("%s: incr succeeded: the shape does not block the document", sh.name)
			}
			blocked++
			r := corestate(t, "fsck", root)
			if r.code == exitOK {
				passed++
				continue
			}
			if r.code != exitCorrupt || !strings.Contains(r.stdout, "blocked\t") {
				t.Errorf("%s: fsck exit %d:\n%s", sh.name, r.code, r.stdout)
			}
		}
		return blocked, passed
	}
	blocked, passed := run(t)
	setSeam(t, &seamsFor(t).noTxCheck)
	cblocked, cpassed := run(t)
	t.Logf("%d shapes block their document; fsck passed %d of them; without its check of transaction files %d of %d", blocked, passed, cpassed, cblocked)
	if passed > 0 {
		t.Errorf("fsck called %d blocked documents healthy", passed)
	}
	if cpassed == 0 {
		t.Errorf("CONTROL: fsck without the check failed every shape: the harness cannot see a pass")
	}
}

// States a crash leaves and the next writer finishes: fsck lists them as
// txn and exits 0.
func TestFsckPendingTransactionFiles(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"torn", "committed"} {
		dir := filepath.Join(root, name)
		os.Mkdir(dir, 0o755)
		doc := filepath.Join(dir, "status.json")
		writeFile(t, doc, good)
		j := filepath.Join(dir, txJournal)
		if name == "torn" {
			writeFile(t, doc+".txn", "") // created, never written: not committed
			continue
		}
		committed(t, doc, j, true)
		writeFile(t, doc+".txn.tmp", `{"status": "running", "runs": 2}`)
	}
	r := corestate(t, "fsck", root).want(t, exitOK)
	if strings.Count("\n"+r.stdout, "\ntxn\t") != 4 {
		t.Errorf("want 4 txn lines:\n%s", r.stdout)
	}
	for _, name := range []string{"torn", "committed"} {
		corestate(t, "incr", filepath.Join(root, name, "status.json"), "runs").want(t, exitOK)
	}
	r = corestate(t, "fsck", root).want(t, exitOK)
	if strings.Contains("\n"+r.stdout, "\ntxn\t") {
		t.Errorf("after the writers:\n%s", r.stdout)
	}
	if got := readFile(t, filepath.Join(root, "committed", "status.json")); !strings.Contains(got, `"runs": 3`) {
		t.Errorf("the committed transaction was not installed: %s", got)
	}
}

// An orphaned journal is listed (exit 3), sweep removes it, and fsck then
// passes; a conflict copy is listed until an operator deletes it.
func TestFsckOrphanAndConflictSweep(t *testing.T) {
	root := t.TempDir()
	doc := filepath.Join(root, "status.json")
	writeFile(t, doc, good)
	j := filepath.Join(root, txJournal)
	writeFile(t, j, journalOf(doc)) // no marker names it
	r := corestate(t, "fsck", root).want(t, exitCorrupt)
	if !strings.Contains(r.stdout, "orphan\t"+j) {
		t.Errorf("fsck:\n%s", r.stdout)
	}
	// A journal still needed is not swept.
	other := filepath.Join(root, "other.json")
	writeFile(t, other, good)
	needed := filepath.Join(root, ".txn-fedcba9876543210.journal")
	writeFile(t, needed, journalOf(other))
	writeFile(t, other+".txn", marker(needed, other))
	out := corestate(t, "sweep", root).want(t, exitOK).stdout
	if out != j+"\n" {
		t.Errorf("sweep printed %q, want %q", out, j+"\n")
	}
	if _, err := os.Lstat(needed); err != nil {
		t.Errorf("sweep removed a journal a marker names")
	}
	os.Remove(other + ".txn")
	os.Remove(needed)
	corestate(t, "fsck", root).want(t, exitOK)

	copy := doc + ".conflict-20260102T150405Z"
	writeFile(t, copy, good)
	r = corestate(t, "fsck", root).want(t, exitCorrupt)
	if !strings.Contains(r.stdout, "conflict\t"+copy) {
		t.Errorf("fsck:\n%s", r.stdout)
	}
}

// fsck ROOT where ROOT is a symbolic link checks the tree it names. The
// control walks the link itself, as before: it sees no document.
func TestFsckFollowsRootLink(t *testing.T) {
	real := tree(t, map[string]string{"a/status.json": "{"})
	link := filepath.Join(t.TempDir(), "root")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	r := corestate(t, "fsck", link).want(t, exitCorrupt)
	if !strings.Contains(r.stdout, "checked 1 documents") {
		t.Errorf("fsck:\n%s", r.stdout)
	}
	setSeam(t, &seamsFor(t).rootAsLink)
	r = corestate(t, "fsck", link)
	t.Logf("CONTROL, the link walked as itself: exit %d, %s", r.code, strings.TrimSpace(r.stdout))
	if r.code != exitOK {
		t.Errorf("CONTROL: exit %d: the harness cannot tell", r.code)
	}
}

// Another user's lock file in a sticky directory, next to root's document:
// every writer refuses it, naming it, and fsck lists it (exit 3). The
// CONTROL, fsck without its check of lock files, calls the tree healthy.
func TestFsckListsForeignLockFile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a lock file of another user needs root to make; CI runs as root")
	}
	root := t.TempDir()
	dir := filepath.Join(root, "shared")
	os.Mkdir(dir, 0o755)
	if err := os.Chmod(dir, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	doc := filepath.Join(dir, "status.json")
	writeFile(t, doc, good)
	writeFile(t, doc+".lock", "")
	if err := os.Chown(doc+".lock", 65534, 65534); err != nil {
		t.Fatal(err)
	}
	r := corestate(t, "incr", "--timeout", "10s", doc, "runs").want(t, exitError)
	if !strings.Contains(r.stderr, "lock file cannot be trusted") || !strings.Contains(r.stderr, "uid 65534") {
		t.Errorf("incr: stderr %q, want the lock file refused for its owner", r.stderr)
	}
	r = corestate(t, "fsck", root).want(t, exitCorrupt)
	if !strings.Contains(r.stdout, "refused\t"+doc+".lock\tlock file cannot be trusted: owned by uid 65534") {
		t.Errorf("fsck:\n%s\nwant the lock file refused", r.stdout)
	}
	setSeam(t, &seamsFor(t).noLockCheck)
	if r := corestate(t, "fsck", root); r.code != exitOK {
		t.Errorf("CONTROL: fsck without its check of lock files exited %d:\n%s", r.code, r.stdout)
	}
}

// seamsFor returns the switches of the tests, skipping t in a build
// without them (go test -tags crashhooks; make test sets it).
func seamsFor(t *testing.T) *seams {
	t.Helper()
	s := testSeams()
	if s == nil {
		t.Skip("needs the test switches: go test -tags crashhooks")
	}
	return s
}

// setSeam turns a switch on until t ends.
func setSeam(t *testing.T, p *bool) {
	*p = true
	t.Cleanup(func() { *p = false })
}
