//go:build unix

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// tree writes files under a new root: name -> content; a name ending in
// "/" is a directory, "@target" a symbolic link to target.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		switch {
		case strings.HasSuffix(name, "/"):
			os.MkdirAll(p, 0o755)
		case strings.HasPrefix(content, "@"):
			os.Symlink(content[1:], p)
		default:
			writeFile(t, p, content)
		}
	}
	return root
}

// snapshot records every file's content (or link target) under root.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		switch {
		case err != nil:
			t.Fatal(err)
		case fi.Mode()&os.ModeSymlink != 0:
			out[p], _ = os.Readlink(p)
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			out[p] = string(b)
		default:
			out[p] = fi.Mode().String()
		}
		return nil
	})
	return out
}

const good = `{"status": "queued", "runs": 1}`

func TestFsckClean(t *testing.T) {
	root := tree(t, map[string]string{
		"status.json":                   good,
		"acme/core/t1/status.json":      good,
		"acme/core/t1/status.json.lock": "",
		"deep/a/b/c/status.json":        good,
		"acme/notes.json":               "not JSON, not a document",
	})
	r := corestate(t, "fsck", root).want(t, exitOK)
	if r.stdout != "checked 3 documents: 0 corrupt, 0 refused, 0 unreadable; 0 temp files, 0 lock files without a document, 0 transaction files pending, 0 quarantined copies; 0 transaction files blocking, 0 conflict copies, 0 orphaned journals\n" {
		t.Errorf("stdout:\n%s", r.stdout)
	}
}

// Every kind of finding, each on its line, and nothing changed.
func TestFsckFindings(t *testing.T) {
	root := tree(t, map[string]string{
		"a/status.json":                          "{\n  \"runs\": 1,\n}\n",
		"b/status.json":                          "@/dev/zero",
		"c/status.json.lock":                     "",
		"d/.status.json.0123456789abcdef.tmp":    "{",
		"e/status.json":                          good,
		"e/status.json.txn":                      "journal-1",
		"k/status.json":                          good,
		"k/status.json.txn":                      "",
		"f/status.json.corrupt-20260102T150405Z": "{",
		"g/status.json/":                         "",
		"h/status.json":                          good,
		"h/status.json.lock/":                    "",
		"i/status.json":                          `{"runs": 1, "runs": 2}`,
		".git/status.json":                       "{", // hidden: not entered
		"j/other.json":                           "{", // not named like a document
	})
	before := snapshot(t, root)
	r := corestate(t, "fsck", root).want(t, exitCorrupt)
	if !strings.Contains(r.stderr, "5 documents cannot be used") || !strings.Contains(r.stderr, "quarantine") {
		t.Errorf("stderr: %s", r.stderr)
	}
	want := []string{
		"corrupt\ta/status.json\tat byte 16: invalid character '}' looking for beginning of object key string",
		"refused\tb/status.json\tnot a regular file",
		"lock\tc/status.json.lock\tno document beside it (harmless: the next writer uses it)",
		"temp\td/.status.json.0123456789abcdef.tmp\tleft by an interrupted write",
		"blocked\te/status.json.txn\ttransaction file cannot be trusted: malformed (\"journal-1\"): every writer of its document fails until an operator removes it",
		"quarantined\tf/status.json.corrupt-20260102T150405Z\ta document moved aside by quarantine; its bytes as they were",
		"refused\tg/status.json\ta directory where a document belongs: every writer refuses it",
		"refused\th/status.json.lock\tlock file is not a regular file (d---------): every writer of its document refuses it",
		"corrupt\ti/status.json\tat byte 12: duplicate name \"runs\"",
		"txn\tk/status.json.txn\ttransaction marker: the next writer of its documents recovers it; left in place",
		"checked 7 documents: 2 corrupt, 3 refused, 0 unreadable; 1 temp files, 1 lock files without a document, 1 transaction files pending, 1 quarantined copies; 1 transaction files blocking, 0 conflict copies, 0 orphaned journals",
	}
	got := strings.Split(strings.TrimSuffix(strings.ReplaceAll(r.stdout, root+"/", ""), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("line %d:\n got %q\nwant %q...", i+1, got[i], want[i])
		}
	}
	if after := snapshot(t, root); !mapsEqual(before, after) {
		t.Error("fsck changed the tree")
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestFsckFlags(t *testing.T) {
	root := tree(t, map[string]string{
		"a/registry.json": "{",
		"a/status.json":   good,
	})
	corestate(t, "fsck", "--name", "registry.json", root).want(t, exitCorrupt)
	corestate(t, "fsck", "--name", "*.json", root).want(t, exitCorrupt)
	corestate(t, "fsck", root).want(t, exitOK)
	r := corestate(t, "fsck", "--max-size", "10", root).want(t, exitCorrupt)
	if !strings.Contains(r.stdout, "refused\t"+filepath.Join(root, "a/status.json")) {
		t.Errorf("--max-size 10:\n%s", r.stdout)
	}
	corestate(t, "fsck", filepath.Join(root, "missing")).want(t, exitNotFound)
	corestate(t, "fsck", filepath.Join(root, "a/status.json")).want(t, exitUsage)
	corestate(t, "fsck").want(t, exitUsage)
	corestate(t, "fsck", "--name", "a/b", root).want(t, exitUsage)
	corestate(t, "fsck", "--name", "[", root).want(t, exitUsage)
}

// A part of the tree that cannot be read (here a path longer than the
// system allows, which even root cannot read) exits 7 and the walk goes
// on.
func TestFsckUnreadable(t *testing.T) {
	root := tree(t, map[string]string{"a/status.json": good, "z/status.json": "{"})
	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	long := strings.Repeat("d", 250)
	deep := long
	for range 20 { // 5,000 bytes: beyond PATH_MAX (4,096)
		if err := r.Mkdir(deep, 0o755); err != nil {
			t.Fatal(err)
		}
		deep += "/" + long
	}
	res := corestate(t, "fsck", root).want(t, exitCorrupt) // z's corrupt document comes first in the codes
	if !strings.Contains(res.stdout, "unreadable\t") || !strings.Contains(res.stdout, "corrupt\t"+filepath.Join(root, "z/status.json")) {
		t.Errorf("stdout:\n%s", res.stdout)
	}
	os.Remove(filepath.Join(root, "z/status.json"))
	res = corestate(t, "fsck", root).want(t, exitError)
	if !strings.Contains(res.stdout, "file name too long") {
		t.Errorf("stdout:\n%s", res.stdout)
	}
	r.RemoveAll(long)
}

var quarantinedName = regexp.MustCompile(`^status\.json\.corrupt-\d{8}T\d{6}Z(-\d+)?$`)

func TestQuarantineCommand(t *testing.T) {
	path := tempFile(t, "status.json")
	corestate(t, "quarantine", path).want(t, exitNotFound)

	writeFile(t, path, good)
	corestate(t, "quarantine", path).want(t, exitNotCorrupt)
	if readFile(t, path) != good {
		t.Fatal("a good document was changed")
	}

	corrupt := "{\"status\": \"queued\",\n"
	writeFile(t, path, corrupt)
	root := filepath.Dir(path)
	corestate(t, "fsck", root).want(t, exitCorrupt)
	corestate(t, "set", path, "runs=1").want(t, exitCorrupt)
	out := corestate(t, "quarantine", path).want(t, exitOK).stdout
	moved := strings.TrimSuffix(out, "\n")
	if filepath.Dir(moved) != root || !quarantinedName.MatchString(filepath.Base(moved)) {
		t.Fatalf("printed %q", out)
	}
	if readFile(t, moved) != corrupt {
		t.Fatal("the quarantined copy lost bytes")
	}
	// Work resumes, and fsck lists the copy but passes.
	corestate(t, "set", path, "status=queued").want(t, exitOK)
	r := corestate(t, "fsck", root).want(t, exitOK)
	if !strings.Contains(r.stdout, "quarantined\t"+moved) {
		t.Errorf("fsck after quarantine:\n%s", r.stdout)
	}

	// A second quarantine in the same second keeps the first copy.
	writeFile(t, path, corrupt+"2")
	moved2 := strings.TrimSuffix(corestate(t, "quarantine", path).want(t, exitOK).stdout, "\n")
	if moved2 == moved || readFile(t, moved) != corrupt || readFile(t, moved2) != corrupt+"2" {
		t.Fatalf("second quarantine: %s", moved2)
	}

	link := filepath.Join(root, "link.json")
	os.Symlink("/dev/zero", link)
	corestate(t, "quarantine", link).want(t, exitError)

	corestate(t, "quarantine").want(t, exitUsage)
	corestate(t, "quarantine", "--timeout", "-1s", path).want(t, exitUsage)
	corestate(t, "quarantine", "a", "b").want(t, exitUsage)
}

func TestQuarantineWaitsForTheLock(t *testing.T) {
	path := tempFile(t, "status.json")
	writeFile(t, path, "{")
	release := holdLock(t, path)
	defer release()
	r := corestate(t, "quarantine", "--timeout", "20ms", path).want(t, exitTimeout)
	if !strings.Contains(r.stderr, "lock not acquired within --timeout 20ms") {
		t.Errorf("stderr: %s", r.stderr)
	}
	if readFile(t, path) != "{" {
		t.Fatal("moved without the lock")
	}
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		t.Fatal("the document is gone")
	}
	release()
	corestate(t, "quarantine", "--timeout", "0", path).want(t, exitOK)
	if entries, _ := os.ReadDir(filepath.Dir(path)); !slices.ContainsFunc(entries, func(e os.DirEntry) bool { return quarantinedName.MatchString(e.Name()) }) {
		t.Fatal("no quarantined copy")
	}
}
