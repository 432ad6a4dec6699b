//go:build linux

package fs_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentstate/core/internal/strace"
)

// traceWrite runs one write by writer (see writerMain) in a child under
// strace and returns what the trace says about the replacement.
func traceWrite(t *testing.T, writer string) strace.Replace {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	target := filepath.Join(root, "sub", "status.json")
	if err := os.Mkdir(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, target, `{"status":"running"}`)
	cmd := exec.Command(exe, "-test.run=^$", "-test.count=1")
	cmd.Env = append(os.Environ(), writerEnv+"="+writer, "BENCH_FS_ROOT="+root)
	events, err := strace.Run(cmd)
	if errors.Is(err, exec.ErrNotFound) {
		t.Skip("skipped: strace is not installed (make test installs it)")
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, target); got != `{"status":"completed"}` {
		t.Fatalf("%s did not write: %q", writer, got)
	}
	o, err := strace.ReplaceOf(events, target)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestNatefinchDifferences documents, from a trace of one write, why our
// writes do not go through natefinch/atomic v1.0.1: it never fsyncs the
// directory, and its temp file looks like a user file. CONTROL: the same
// trace of fs.WriteAtomic shows the directory fsync and a hidden temp file.
func TestNatefinchDifferences(t *testing.T) {
	o := traceWrite(t, "natefinch")
	t.Logf("natefinch/atomic: %+v", o)
	if !o.TempSyncedBeforeMove {
		t.Error("natefinch/atomic v1.0.1 fsyncs its temp file; the trace says it did not (parser broken?)")
	}
	if o.DirSyncedAfterMove {
		t.Error("natefinch/atomic now fsyncs the directory: update docs/RFC.md (fs section)")
	}
	// Every temp file of package fs is hidden (its name starts with a dot).
	if strings.HasPrefix(filepath.Base(o.Temp), ".") {
		t.Errorf("natefinch temp name %s is hidden/recognisable", o.Temp)
	}
	ours := traceWrite(t, "fs")
	if !ours.DirSyncedAfterMove || !strings.HasPrefix(filepath.Base(ours.Temp), ".") {
		t.Errorf("CONTROL: the trace of fs.WriteAtomic shows %+v, want a directory fsync and a hidden temp file", ours)
	}
}
