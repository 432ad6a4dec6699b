package main

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/agentstate/core/fs"
	"github.com/google/go-cmp/cmp"
)

func TestSweep(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-2 * time.Hour)
	files := map[string]time.Time{
		".status.json.0123456789abcdef.tmp": old,        // leftover: removed
		".status.json.fedcba9876543210.tmp": time.Now(), // maybe a write in progress: kept
		".status.json.tmp":                  old,        // not our shape: kept
		"status.json":                       old,        // user file: kept
		"notes.0123456789abcdef.tmp":        old,        // not hidden: kept
	}
	for name, mtime := range files {
		p := filepath.Join(dir, name)
		writeFile(t, p, "x")
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}

	out := corestate(t, "sweep", dir, "--older-than", "1h").want(t, exitOK).stdout
	if want := filepath.Join(dir, ".status.json.0123456789abcdef.tmp") + "\n"; out != want {
		t.Errorf("sweep printed %q, want %q", out, want)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	want := []string{".status.json.fedcba9876543210.tmp", ".status.json.tmp", "notes.0123456789abcdef.tmp", "status.json"}
	if diff := cmp.Diff(want, left); diff != "" {
		t.Errorf("files left (-want +got):\n%s", diff)
	}

	// Nothing left to sweep at this age: empty output, success.
	if out := corestate(t, "sweep", "--older-than", "1h", dir).want(t, exitOK).stdout; out != "" {
		t.Errorf("second sweep printed %q", out)
	}
}

// A real leftover: a write whose temp file was not cleaned up has the shape
// fs produces, which sweep must recognise (guards against the two drifting).
func TestSweepMatchesFsTempNames(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "status.json")
	if err := fs.WriteAtomic(target, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	leftover := filepath.Join(dir, ".status.json.00000000deadbeef.tmp")
	writeFile(t, leftover, "{")
	out := corestate(t, "sweep", "--older-than", "0s", dir).want(t, exitOK).stdout
	if out != leftover+"\n" {
		t.Errorf("sweep printed %q, want the leftover", out)
	}
	if _, err := os.Stat(target); err != nil {
		t.Errorf("sweep touched the document: %v", err)
	}
}

func TestSweepErrors(t *testing.T) {
	dir := t.TempDir()
	corestate(t, "sweep", filepath.Join(dir, "missing")).want(t, exitNotFound)
	file := filepath.Join(dir, "f")
	writeFile(t, file, "x")
	corestate(t, "sweep", file).want(t, exitUsage)
	corestate(t, "sweep").want(t, exitUsage)
	corestate(t, "sweep", dir, dir).want(t, exitUsage)
	corestate(t, "sweep", "--older-than", "-1h", dir).want(t, exitUsage)
	corestate(t, "sweep", "--older-than", "soon", dir).want(t, exitUsage)
}

// A removed name with a newline stays on one line, quoted; names that need
// no quoting print as they are.
func TestSweepQuotesOddNames(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-2 * time.Hour)
	odd := ".a\nb.0123456789abcdef.tmp"
	writeFile(t, filepath.Join(dir, odd), "x")
	if err := os.Chtimes(filepath.Join(dir, odd), old, old); err != nil {
		t.Fatal(err)
	}
	out := corestate(t, "sweep", dir).want(t, exitOK).stdout
	if want := strconv.Quote(filepath.Join(dir, odd)) + "\n"; out != want {
		t.Errorf("sweep printed %q, want %q", out, want)
	}
	for name, want := range map[string]string{
		"plain/é.tmp": "plain/é.tmp",
		"tab\t":       `"tab\t"`,
		"\"q":         `"\"q"`,
		"bad\xff":     `"bad\xff"`,
	} {
		if got := quoteName(name); got != want {
			t.Errorf("quoteName(%q) = %s, want %s", name, got, want)
		}
	}
}
