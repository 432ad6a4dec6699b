package txfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/txfile"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestIs(t *testing.T) {
	journal := ".txn-" + strings.Repeat("0a", 8) + ".journal"
	for name, want := range map[string]bool{
		"status.json.txn":                           true,
		"status.json.txn.tmp":                       true,
		journal:                                     true,
		"status.json.conflict-20260102T150405Z":     true,
		"status.json.conflict-20260102T150405Z-2":   true,
		"status.json":                               false,
		"status.json.lock":                          false,
		"status.json.conflict-yesterday":            false,
		"status.json.conflict-20260102T150405Z-two": false,
		".txn-xyz.journal":                          false,
	} {
		if got := txfile.Is(name); got != want {
			t.Errorf("Is(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "status.json")
	if err := os.WriteFile(doc, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := txfile.Check(doc, 0); !errors.Is(err, os.ErrInvalid) {
		t.Errorf("Check of a document: %v, want os.ErrInvalid", err)
	}
	copied := doc + txfile.ConflictSuffix + "20260102T150405Z"
	if err := os.WriteFile(copied, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := txfile.Check(copied, 0); !errors.Is(err, status.ErrTxConflict) {
		t.Errorf("Check of a conflict copy: %v, want ErrTxConflict", err)
	}
	if err := os.Mkdir(doc+txfile.TempSuffix, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := txfile.Check(doc+txfile.TempSuffix, 0); !errors.Is(err, status.ErrTxUntrusted) {
		t.Errorf("Check of a directory named like new content: %v, want ErrTxUntrusted", err)
	}
}

func TestSweepLeavesOtherFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"status.json", "notes.journal", ".txn-x.journal"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := txfile.Sweep(dir)
	if err != nil || len(removed) != 0 {
		t.Fatalf("Sweep = %v, %v; want nothing removed", removed, err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 3 {
		t.Errorf("%d files left, want 3", len(ents))
	}
}
