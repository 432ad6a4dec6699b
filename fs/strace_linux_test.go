//go:build linux

package fs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentstate/core/internal/strace"
)

func init() { helpers["strace-write"] = straceWriteMain }

// straceWriteMain writes FS_ROOT/sub/status.json once with FS_WRITER.
func straceWriteMain() {
	root := os.Getenv("FS_ROOT")
	target := filepath.Join(root, "sub", "status.json")
	data := []byte(`{"status":"completed"}`)
	var err error
	switch os.Getenv("FS_WRITER") {
	case "host":
		err = WriteAtomic(target, data, 0o644)
	case "fs":
		var fsys *Fs
		if fsys, err = New(root); err == nil {
			err = fsys.WriteAtomic("sub/status.json", data, 0o644)
			fsys.Close()
		}
	case "mkdirall":
		err = MkdirAll(filepath.Join(root, "sub", "x", "y", "z"), 0o755)
	case "append":
		var fsys *Fs
		if fsys, err = New(root); err == nil {
			err = errors.Join(fsys.Append("sub/new.log", data), fsys.Append("sub/new.log", data))
			fsys.Close()
		}
	case "append-unsynced": // the control: an append as a log file usually gets one
		for range 2 {
			f, oerr := os.OpenFile(filepath.Join(root, "sub", "new.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if oerr != nil {
				err = oerr
				break
			}
			_, err = f.Write(data)
			f.Close()
		}
	default:
		err = fmt.Errorf("unknown FS_WRITER")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// runStrace runs the FS_WRITER=writer child under strace on a fresh root
// holding sub/status.json and returns the parsed trace and the root.
func runStrace(t *testing.T, writer string) ([]strace.Event, string) {
	t.Helper()
	return runStraceIn(t, "strace-write", func(root string) {
		target := filepath.Join(root, "sub", "status.json")
		if err := os.Mkdir(filepath.Dir(target), 0o755); err != nil {
			t.Fatal(err)
		}
		mustWrite(t, target, `{"status":"running"}`, 0o644)
	}, "FS_WRITER="+writer)
}

// runStraceIn runs the helper child under strace on a fresh root that
// setup prepares, and returns the parsed trace and the root.
func runStraceIn(t *testing.T, helper string, setup func(root string), env ...string) ([]strace.Event, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	setup(root)
	cmd := exec.Command(exe, helperCmdArgs...)
	cmd.Env = append(append(os.Environ(), "FS_HELPER="+helper, "FS_ROOT="+root), env...)
	events, err := strace.Run(cmd)
	if errors.Is(err, exec.ErrNotFound) {
		t.Skip("skipped: strace is not installed (make test installs it)")
	}
	if err != nil {
		t.Fatal(err)
	}
	return events, root
}

// straceWrite runs one write by writer in a child under strace and
// returns the analysed order.
func straceWrite(t *testing.T, writer string) strace.Replace {
	t.Helper()
	events, root := runStrace(t, writer)
	target := filepath.Join(root, "sub", "status.json")
	if got := mustRead(t, target); got != `{"status":"completed"}` {
		t.Fatalf("%s did not write: %q", writer, got)
	}
	o, err := strace.ReplaceOf(events, target)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestMkdirAllSyncsWhatItCreates: every directory MkdirAll creates is
// fsynced after its creation, and so is the parent of the first one.
func TestMkdirAllSyncsWhatItCreates(t *testing.T) {
	events, root := runStrace(t, "mkdirall")
	sub := filepath.Join(root, "sub")
	created := []string{filepath.Join(sub, "x"), filepath.Join(sub, "x", "y"), filepath.Join(sub, "x", "y", "z")}
	mkdirAt := map[string]int{}
	for i, ev := range events {
		if (ev.Call == "mkdirat" || ev.Call == "mkdir") && ev.Ret == 0 {
			mkdirAt[ev.Path] = i
		}
	}
	syncedAfter := func(dir string, after int) bool {
		for _, ev := range events[after+1:] {
			if ev.Call == "fsync" && ev.Ret == 0 && ev.Path == dir {
				return true
			}
		}
		return false
	}
	for _, d := range created {
		i, ok := mkdirAt[d]
		if !ok {
			t.Fatalf("no mkdir of %s in the trace", d)
		}
		if !syncedAfter(d, i) {
			t.Errorf("%s was created but never fsynced", d)
		}
	}
	if !syncedAfter(sub, mkdirAt[created[0]]) {
		t.Errorf("the parent %s of the first created directory was not fsynced", sub)
	}
}

// TestAppendSyncs: each Append fsyncs the file after its write, and the
// Append that creates the file fsyncs its directory after the creation.
// The control, a plain O_APPEND write, must fail the same check.
func TestAppendSyncs(t *testing.T) {
	for _, tc := range []struct {
		writer string
		synced bool
	}{{"append", true}, {"append-unsynced", false}} {
		t.Run(tc.writer, func(t *testing.T) {
			events, root := runStrace(t, tc.writer)
			if got := appendSynced(events, filepath.Join(root, "sub")); got != tc.synced {
				t.Errorf("every append and the new entry synced = %v, want %v", got, tc.synced)
			}
		})
	}
}

// appendSynced reports whether each write to dir/new.log is followed by an
// fsync of it, and the file's creation by an fsync of dir.
func appendSynced(events []strace.Event, dir string) bool {
	file := filepath.Join(dir, "new.log")
	created, writes, synced := -1, 0, 0
	pending := false
	for i, ev := range events {
		switch {
		case ev.Ret < 0:
		case created < 0 && strings.Contains(ev.Args, "O_CREAT") && ev.Path == file:
			created = i
		case ev.Call == "write" && ev.Path == file:
			writes++
			pending = true
		case ev.Call == "fsync" && ev.Path == file && pending:
			synced++
			pending = false
		}
	}
	dirSynced := false
	for _, ev := range events[created+1:] {
		dirSynced = dirSynced || ev.Call == "fsync" && ev.Ret == 0 && ev.Path == dir
	}
	return created >= 0 && writes == 2 && synced == 2 && dirSynced
}

func TestSyscallOrder(t *testing.T) {
	for _, writer := range []string{"host", "fs"} {
		t.Run(writer, func(t *testing.T) {
			o := straceWrite(t, writer)
			t.Logf("%+v", o)
			if !isTempName(filepath.Base(o.Temp)) || filepath.Dir(o.Temp) != filepath.Dir(o.Target) {
				t.Errorf("renamed file %s is not one of our temp files in the destination's directory", o.Temp)
			}
			if !o.Exclusive {
				t.Error("temp file not created with O_EXCL")
			}
			if !o.TempSyncedBeforeMove {
				t.Error("no fsync(temp) between the last write and the rename")
			}
			if !o.TempClosedBeforeMove {
				t.Error("temp file not closed after its fsync and before the rename")
			}
			if !o.DirSyncedAfterMove {
				t.Error("no fsync(parent directory) after the rename")
			}
		})
	}
}
