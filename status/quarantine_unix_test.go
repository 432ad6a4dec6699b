//go:build unix

package status

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/agentstate/core/fs"
)

var quarantined = regexp.MustCompile(`^status\.json\.corrupt-\d{8}T\d{6}Z(-\d+)?$`)

func TestQuarantineMovesACorruptDocumentAside(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, StatusFile)
	setRuns(t, path, 1) // leaves a lock file
	corrupt := "{\"runs\": 1, \"runs\": 2}\n"
	os.WriteFile(path, []byte(corrupt), 0o640)
	os.Chmod(path, 0o640)
	if _, err := Mutate(context.Background(), path, func(*Status) error { return nil }); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Mutate before: %v, want ErrCorrupt", err)
	}
	moved, err := Quarantine(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(moved) != dir || !quarantined.MatchString(filepath.Base(moved)) {
		t.Fatalf("moved to %q", moved)
	}
	data, err := os.ReadFile(moved)
	if err != nil || string(data) != corrupt {
		t.Fatalf("quarantined bytes %q, %v; want %q", data, err, corrupt)
	}
	if fi, _ := os.Stat(moved); fi.Mode().Perm() != 0o640 {
		t.Errorf("quarantined mode %v, want 0640 (the document's)", fi.Mode().Perm())
	}
	if _, err := os.Stat(path + LockSuffix); err != nil {
		t.Errorf("lock file: %v", err)
	}
	// Work resumes from a fresh document.
	st, err := Mutate(context.Background(), path, func(s *Status) error { s.Runs++; return nil })
	if err != nil || st.Runs != 1 {
		t.Fatalf("Mutate after: %+v, %v", st, err)
	}
}

// A document that decodes stays where it is.
func TestQuarantineLeavesAUsableDocument(t *testing.T) {
	path := filepath.Join(t.TempDir(), StatusFile)
	setRuns(t, path, 3)
	before, _ := os.ReadFile(path)
	moved, err := Quarantine(context.Background(), path)
	if moved != "" || err != nil {
		t.Fatalf("Quarantine of a good document: %q, %v", moved, err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatal("the document changed")
	}
}

func TestQuarantineTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), StatusFile)
	setRuns(t, path, 3)
	moved, err := NewStore[Status](path, WithMaxSize(10)).Quarantine(context.Background())
	if err != nil || moved == "" {
		t.Fatalf("Quarantine of a document over the limit: %q, %v", moved, err)
	}
}

func TestQuarantineRefuses(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, StatusFile)
	if _, err := Quarantine(context.Background(), missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	link := filepath.Join(dir, "link.json")
	os.Symlink("/dev/zero", link)
	if _, err := Quarantine(context.Background(), link); !errors.Is(err, fs.ErrNotRegular) {
		t.Errorf("link: %v", err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was moved")
	}
	if _, err := Quarantine(nil, missing); !errors.Is(err, errNilContext) { //nolint:staticcheck // the test
		t.Errorf("nil ctx: %v", err)
	}
	mem := NewStore[Status]("k", WithBackend(func(string) Backend { return &memBackend{} }))
	if _, err := mem.Quarantine(context.Background()); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("other backend: %v", err)
	}
}

// Quarantine decides under the lock: a repair that a lock holder writes
// before Quarantine gets the lock is not moved aside.
func TestQuarantineDecidesUnderTheLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), StatusFile)
	os.WriteFile(path, []byte("{"), 0o644)
	release := holdLock(t, path)
	done := make(chan string, 1)
	go func() {
		moved, err := Quarantine(context.Background(), path)
		if err != nil {
			t.Error(err)
		}
		done <- moved
	}()
	writeRaw(t, path, `{"status": "completed", "runs": 9}`) // the holder repairs it
	release()
	if moved := <-done; moved != "" {
		t.Fatalf("the repaired document was moved to %s", moved)
	}
	if st, err := Load(context.Background(), path); err != nil || st.Runs != 9 {
		t.Fatalf("after: %+v, %v", st, err)
	}

	// A Quarantine that cannot get the lock moves nothing.
	os.WriteFile(path, []byte("{"), 0o644)
	release = holdLock(t, path)
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := Quarantine(ctx, path); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("behind a held lock: %v", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "{" {
		t.Fatal("moved without the lock")
	}
}

// CONTROL for TestQuarantineDecidesUnderTheLock: checking then moving
// without the lock (what an operator's script does: read, see it corrupt,
// mv) moves the repair that came in between, and the task's state is gone
// from its path. The test requires that loss.
func TestControlUnlockedQuarantineMovesARepair(t *testing.T) {
	path := filepath.Join(t.TempDir(), StatusFile)
	os.WriteFile(path, []byte("{"), 0o644)
	_, err := Load(context.Background(), path)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatal(err)
	}
	writeRaw(t, path, `{"status": "completed", "runs": 9}`)
	os.Rename(path, path+QuarantineSuffix+"manual")
	st, _ := Load(context.Background(), path)
	if st.Runs == 9 {
		t.Fatal("CONTROL: the repair survived the unlocked move: the harness cannot tell")
	}
	t.Logf("CONTROL: the unlocked move took the repaired document (runs=9) away; the path now reads %+v", st.State)
}
