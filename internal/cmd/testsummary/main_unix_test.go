//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The modules' commands run at once: here each module's test can finish
// only while the other's runs (one writes a FIFO the other reads; opening
// it blocks until both ends are open). Run one after the other, the first
// would block until the go test timeout.
func TestRunsDirsAtOnce(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go not in PATH: %v", err)
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"a/go.mod":    "module example.com/a\n\ngo 1.25\n",
		"a/a_test.go": "package a\nimport (\"os\"; \"testing\")\nfunc TestWrite(t *testing.T) { if err := os.WriteFile(os.Getenv(\"FIFO\"), []byte(\"x\"), 0); err != nil { t.Fatal(err) } }\n",
		"b/go.mod":    "module example.com/b\n\ngo 1.25\n",
		"b/b_test.go": "package b\nimport (\"os\"; \"testing\")\nfunc TestRead(t *testing.T) { if _, err := os.ReadFile(os.Getenv(\"FIFO\")); err != nil { t.Fatal(err) } }\n",
	} {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("FIFO", fifo)
	var out, errOut bytes.Buffer
	status := run([]string{"-dir", filepath.Join(dir, "a"), "-dir", filepath.Join(dir, "b"),
		"--", goBin, "test", "-json", "-count=1", "-timeout=2m", "./..."}, &out, &errOut)
	if status != 0 || !strings.HasSuffix(out.String(), "total: 2 passed, 0 failed, 0 skipped\n") {
		t.Fatalf("status %d\nstdout:\n%s\nstderr:\n%s", status, out.String(), errOut.String())
	}
}
