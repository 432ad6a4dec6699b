package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// In a sticky directory (1777, like /tmp), sweep run as root removes an
// orphaned journal of its own but not one another user left there: that
// user's file is not root's to delete on their word (it is listed, exit 7).
func TestSweepStickyDirectoryJournals(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("acting as a second user (uid 65534) needs root; CI runs as root")
	}
	base := t.TempDir()
	os.Chmod(filepath.Dir(base), 0o755)
	os.Chmod(base, 0o755)
	dir := filepath.Join(base, "shared")
	os.Mkdir(dir, 0o755)
	os.Chmod(dir, 0o777|os.ModeSticky)
	doc := filepath.Join(dir, "status.json")
	writeFile(t, doc, good)
	mine := filepath.Join(dir, txJournal)
	writeFile(t, mine, journalOf(doc))
	theirs := filepath.Join(dir, ".txn-fedcba9876543210.journal")
	cmd := exec.Command("sh", "-c", `printf '%s' "$1" > "$2"`, "sh", journalOf(doc), theirs)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("as uid 65534: %v %s", err, out)
	}
	r := corestate(t, "sweep", dir).want(t, exitError)
	if r.stdout != mine+"\n" || !strings.Contains(r.stderr, theirs) {
		t.Errorf("sweep: stdout %q, stderr %q; want %s removed and %s named", r.stdout, r.stderr, mine, theirs)
	}
	if _, err := os.Lstat(theirs); err != nil {
		t.Errorf("root removed another user's journal from a sticky directory")
	}
}
