//go:build linux

package fs

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	natefinch "github.com/natefinch/atomic"
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
			err = fsys.WriteAtomic("sub/status.json", data)
			fsys.Close()
		}
	case "natefinch":
		err = natefinch.WriteFile(target, strings.NewReader(string(data)))
	case "mkdirall":
		err = MkdirAll(filepath.Join(root, "sub", "x", "y", "z"), 0o755)
	default:
		err = fmt.Errorf("unknown FS_WRITER")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// sysEvent is one completed system call from an strace log, with file
// descriptors resolved to the paths they were opened with.
type sysEvent struct {
	start   int // events completed before this call began
	call    string
	path    string // openat: the opened path; fsync/write/close: the fd's path
	newPath string // renames: destination (path is the source)
	args    string
	ret     int
}

var (
	straceLine  = regexp.MustCompile(`^(\d+)\s+(.*)$`)
	straceCall  = regexp.MustCompile(`^(\w+)\((.*)\)\s+=\s+(-?\d+)`)
	straceQuote = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`)
)

// parseStrace reads an `strace -f` log. Calls split by other threads
// ("<unfinished ...>" / "<... resumed>") are joined per thread; an event's
// position is where the call returned.
func parseStrace(t *testing.T, path string) []sysEvent {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pending := map[string]string{}
	started := map[string]int{}
	fdPath := map[int]string{}
	resolve := func(dirfd, name string) string {
		if filepath.IsAbs(name) {
			return filepath.Clean(name)
		}
		if fd, err := strconv.Atoi(dirfd); err == nil {
			return filepath.Clean(fdPath[fd] + "/" + name)
		}
		return name // relative to the cwd; not used by these writers
	}
	var events []sysEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := straceLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		pid, text := m[1], m[2]
		if i := strings.Index(text, " <unfinished ...>"); i >= 0 {
			pending[pid] = text[:i]
			started[pid] = len(events)
			continue
		}
		start := len(events)
		if strings.HasPrefix(text, "<... ") {
			i := strings.Index(text, " resumed>")
			if i < 0 {
				continue
			}
			text = pending[pid] + text[i+len(" resumed>"):]
			start = started[pid]
			delete(pending, pid)
		}
		c := straceCall.FindStringSubmatch(text)
		if c == nil {
			continue
		}
		ev := sysEvent{start: start, call: c[1], args: c[2]}
		ev.ret, _ = strconv.Atoi(c[3])
		args := strings.Split(c[2], ", ")
		quoted := straceQuote.FindAllStringSubmatch(c[2], -1)
		firstFD, _ := strconv.Atoi(args[0])
		switch ev.call {
		case "openat":
			if len(quoted) < 1 {
				continue
			}
			ev.path = resolve(args[0], quoted[0][1])
			if ev.ret >= 0 {
				fdPath[ev.ret] = ev.path
			}
		case "close":
			ev.path = fdPath[firstFD]
			delete(fdPath, firstFD)
		case "fsync", "fdatasync", "write", "syncfs":
			ev.path = fdPath[firstFD]
		case "mkdirat", "mkdir":
			if len(quoted) < 1 {
				continue
			}
			dirfd := "AT_FDCWD"
			if ev.call == "mkdirat" {
				dirfd = args[0]
			}
			ev.path = resolve(dirfd, quoted[0][1])
		case "rename":
			if len(quoted) < 2 {
				continue
			}
			ev.path, ev.newPath = resolve("AT_FDCWD", quoted[0][1]), resolve("AT_FDCWD", quoted[1][1])
		case "renameat", "renameat2":
			if len(quoted) < 2 || len(args) < 4 {
				continue
			}
			ev.path, ev.newPath = resolve(args[0], quoted[0][1]), resolve(args[2], quoted[1][1])
		default:
			continue
		}
		events = append(events, ev)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return events
}

// replaceOrder is what the syscall log says about one replacement of target.
type replaceOrder struct {
	target               string
	temp                 string // the temp file renamed over target
	exclusive            bool   // temp created with O_EXCL
	tempSyncedBeforeMove bool   // fsync(temp) after its last write, before the rename
	tempClosedBeforeMove bool
	dirSyncedAfterMove   bool // fsync(parent dir) after the rename
}

func analyse(t *testing.T, events []sysEvent, target string) replaceOrder {
	t.Helper()
	rename := -1
	for i, ev := range events {
		if strings.HasPrefix(ev.call, "rename") && ev.newPath == target && ev.ret == 0 {
			rename = i
		}
	}
	if rename < 0 {
		t.Fatalf("no successful rename onto %s in the trace", target)
	}
	o := replaceOrder{target: target, temp: events[rename].path}
	lastWrite, synced, closed := -1, -1, -1
	for i, ev := range events[:rename] {
		switch {
		case ev.path != o.temp:
		case ev.call == "openat" && ev.ret >= 0:
			o.exclusive = strings.Contains(ev.args, "O_EXCL")
		case ev.call == "write":
			lastWrite = i
		case (ev.call == "fsync" || ev.call == "fdatasync") && ev.ret == 0:
			synced = i
		case ev.call == "close":
			closed = i
		}
	}
	o.tempSyncedBeforeMove = lastWrite >= 0 && synced > lastWrite
	o.tempClosedBeforeMove = closed > synced && synced >= 0
	for _, ev := range events[rename+1:] {
		if ev.call == "fsync" && ev.ret == 0 && ev.path == filepath.Dir(target) {
			o.dirSyncedAfterMove = true
		}
	}
	return o
}

// runStrace runs the FS_WRITER=writer child under strace on a fresh root
// holding sub/status.json and returns the parsed trace and the root.
func runStrace(t *testing.T, writer string) ([]sysEvent, string) {
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
func runStraceIn(t *testing.T, helper string, setup func(root string), env ...string) ([]sysEvent, string) {
	t.Helper()
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("skipped: strace is not installed (make test installs it)")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	setup(root)
	log := filepath.Join(t.TempDir(), "strace.log")
	// %file and %desc rather than a list of names: the set of rename and
	// open system calls differs between architectures.
	args := append([]string{"-f", "-qq", "-s", "512", "-e", "trace=%file,%desc", "-o", log, exe}, helperCmdArgs...)
	cmd := exec.Command(strace, args...)
	cmd.Env = append(append(os.Environ(), "FS_HELPER="+helper, "FS_ROOT="+root), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("strace %s: %v\n%s", helper, err, out)
	}
	return parseStrace(t, log), root
}

// straceWrite runs one write by writer in a child under strace and
// returns the analysed order.
func straceWrite(t *testing.T, writer string) replaceOrder {
	t.Helper()
	events, root := runStrace(t, writer)
	target := filepath.Join(root, "sub", "status.json")
	if got := mustRead(t, target); got != `{"status":"completed"}` {
		t.Fatalf("%s did not write: %q", writer, got)
	}
	return analyse(t, events, target)
}

// TestMkdirAllSyncsWhatItCreates: every directory MkdirAll creates is
// fsynced after its creation, and so is the parent of the first one.
func TestMkdirAllSyncsWhatItCreates(t *testing.T) {
	events, root := runStrace(t, "mkdirall")
	sub := filepath.Join(root, "sub")
	created := []string{filepath.Join(sub, "x"), filepath.Join(sub, "x", "y"), filepath.Join(sub, "x", "y", "z")}
	mkdirAt := map[string]int{}
	for i, ev := range events {
		if (ev.call == "mkdirat" || ev.call == "mkdir") && ev.ret == 0 {
			mkdirAt[ev.path] = i
		}
	}
	syncedAfter := func(dir string, after int) bool {
		for _, ev := range events[after+1:] {
			if ev.call == "fsync" && ev.ret == 0 && ev.path == dir {
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

func TestSyscallOrder(t *testing.T) {
	for _, writer := range []string{"host", "fs"} {
		t.Run(writer, func(t *testing.T) {
			o := straceWrite(t, writer)
			t.Logf("%+v", o)
			if !isTempName(filepath.Base(o.temp)) || filepath.Dir(o.temp) != filepath.Dir(o.target) {
				t.Errorf("renamed file %s is not one of our temp files in the destination's directory", o.temp)
			}
			if !o.exclusive {
				t.Error("temp file not created with O_EXCL")
			}
			if !o.tempSyncedBeforeMove {
				t.Error("no fsync(temp) between the last write and the rename")
			}
			if !o.tempClosedBeforeMove {
				t.Error("temp file not closed after its fsync and before the rename")
			}
			if !o.dirSyncedAfterMove {
				t.Error("no fsync(parent directory) after the rename")
			}
		})
	}
}

// TestNatefinchDifferences documents, from the same trace, why our writes
// do not go through natefinch/atomic v1.0.1: it never fsyncs the
// directory, and its temp file looks like a user file.
func TestNatefinchDifferences(t *testing.T) {
	o := straceWrite(t, "natefinch")
	t.Logf("natefinch/atomic: %+v", o)
	if !o.tempSyncedBeforeMove {
		t.Error("natefinch/atomic v1.0.1 fsyncs its temp file; the trace says it did not (parser broken?)")
	}
	if o.dirSyncedAfterMove {
		t.Error("natefinch/atomic now fsyncs the directory: update docs/RFC.md (fs section)")
	}
	if isTempName(filepath.Base(o.temp)) || strings.HasPrefix(filepath.Base(o.temp), ".") {
		t.Errorf("natefinch temp name %s is hidden/recognisable", o.temp)
	}
}
