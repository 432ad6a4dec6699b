// Package strace runs a command under strace(1) and reads the log back as
// system-call events, for tests that check the order of durable-write calls
// (write, fsync, close, rename, directory fsync) a writer really makes.
//
// Only what those tests need is parsed: openat, close, write, fsync,
// fdatasync, syncfs, mkdir(at) and rename(at/at2), with file descriptors
// resolved to the paths they were opened with. It imports only the standard
// library, so the tests inside the library packages may use it (see
// internal/deepdiff).
package strace

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// An Event is one completed system call, positioned where it returned.
type Event struct {
	Start   int // events completed before this call began
	Call    string
	Path    string // openat, mkdir: the path; fsync, write, close: the descriptor's path
	NewPath string // renames: the destination (Path is the source)
	Args    string
	Ret     int
}

// Run runs cmd (not yet started) under strace -f and returns its events.
// The error wraps exec.ErrNotFound when strace is not installed, and
// includes the command's output when it fails.
func Run(cmd *exec.Cmd) ([]Event, error) {
	bin, err := exec.LookPath("strace")
	if err != nil {
		return nil, fmt.Errorf("strace: %w", err)
	}
	log, err := os.CreateTemp("", "strace-*.log")
	if err != nil {
		return nil, err
	}
	defer os.Remove(log.Name())
	defer log.Close()
	// %file and %desc rather than a list of names: the set of rename and
	// open system calls differs between architectures.
	args := append([]string{"-f", "-qq", "-s", "512", "-e", "trace=%file,%desc", "-o", log.Name(), cmd.Path}, cmd.Args[1:]...)
	traced := exec.Command(bin, args...)
	traced.Env, traced.Dir = cmd.Env, cmd.Dir
	if out, err := traced.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("strace %s: %v\n%s", cmd.Path, err, out)
	}
	return Parse(log)
}

var (
	lineRE  = regexp.MustCompile(`^(\d+)\s+(.*)$`)
	callRE  = regexp.MustCompile(`^(\w+)\((.*)\)\s+=\s+(-?\d+)`)
	quoteRE = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`)
)

// Parse reads an `strace -f` log. Calls split by other threads
// ("<unfinished ...>" / "<... resumed>") are joined per thread; an event's
// position is where the call returned.
func Parse(r io.Reader) ([]Event, error) {
	pending := map[string]string{}
	started := map[string]int{}
	fdPath := map[int]string{}
	closing := map[string]string{} // the path whose fd a thread's split close released
	resolve := func(dirfd, name string) string {
		if filepath.IsAbs(name) {
			return filepath.Clean(name)
		}
		if fd, err := strconv.Atoi(dirfd); err == nil {
			return filepath.Clean(fdPath[fd] + "/" + name)
		}
		return name // relative to the cwd; not used by the traced writers
	}
	var events []Event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := lineRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		pid, text := m[1], m[2]
		if i := strings.Index(text, " <unfinished ...>"); i >= 0 {
			pending[pid] = text[:i]
			started[pid] = len(events)
			// The fd is free once close starts: another thread's open may
			// get it before this close's return is logged.
			if fd, err := strconv.Atoi(strings.TrimPrefix(text[:i], "close(")); err == nil && strings.HasPrefix(text, "close(") {
				closing[pid] = fdPath[fd]
				delete(fdPath, fd)
			}
			continue
		}
		start := len(events)
		resumed := strings.HasPrefix(text, "<... ")
		if resumed {
			i := strings.Index(text, " resumed>")
			if i < 0 {
				continue
			}
			text = pending[pid] + text[i+len(" resumed>"):]
			start = started[pid]
			delete(pending, pid)
		}
		c := callRE.FindStringSubmatch(text)
		if c == nil {
			continue
		}
		ev := Event{Start: start, Call: c[1], Args: c[2]}
		ev.Ret, _ = strconv.Atoi(c[3])
		args := strings.Split(c[2], ", ")
		quoted := quoteRE.FindAllStringSubmatch(c[2], -1)
		firstFD, _ := strconv.Atoi(args[0])
		switch ev.Call {
		case "openat":
			if len(quoted) < 1 {
				continue
			}
			ev.Path = resolve(args[0], quoted[0][1])
			if ev.Ret >= 0 {
				fdPath[ev.Ret] = ev.Path
			}
		case "close":
			if p, ok := closing[pid]; ok && resumed {
				ev.Path = p
				delete(closing, pid)
				break
			}
			ev.Path = fdPath[firstFD]
			delete(fdPath, firstFD)
		case "fsync", "fdatasync", "write", "syncfs":
			ev.Path = fdPath[firstFD]
		case "mkdirat", "mkdir":
			if len(quoted) < 1 {
				continue
			}
			dirfd := "AT_FDCWD"
			if ev.Call == "mkdirat" {
				dirfd = args[0]
			}
			ev.Path = resolve(dirfd, quoted[0][1])
		case "rename":
			if len(quoted) < 2 {
				continue
			}
			ev.Path, ev.NewPath = resolve("AT_FDCWD", quoted[0][1]), resolve("AT_FDCWD", quoted[1][1])
		case "renameat", "renameat2":
			if len(quoted) < 2 || len(args) < 4 {
				continue
			}
			ev.Path, ev.NewPath = resolve(args[0], quoted[0][1]), resolve(args[2], quoted[1][1])
		default:
			continue
		}
		events = append(events, ev)
	}
	return events, sc.Err()
}

// A Replace is what a trace says about one replacement of Target by
// renaming a temp file onto it.
type Replace struct {
	Target               string
	Temp                 string // the file renamed over Target
	Exclusive            bool   // Temp created with O_EXCL
	TempSyncedBeforeMove bool   // fsync(Temp) after its last write, before the rename
	TempClosedBeforeMove bool   // Temp closed after that fsync, before the rename
	DirSyncedAfterMove   bool   // fsync(Target's directory) after the rename
}

// ReplaceOf analyses the last successful rename onto target in events.
func ReplaceOf(events []Event, target string) (Replace, error) {
	rename := -1
	for i, ev := range events {
		if strings.HasPrefix(ev.Call, "rename") && ev.NewPath == target && ev.Ret == 0 {
			rename = i
		}
	}
	if rename < 0 {
		return Replace{}, fmt.Errorf("no successful rename onto %s in the trace", target)
	}
	o := Replace{Target: target, Temp: events[rename].Path}
	lastWrite, synced, closed := -1, -1, -1
	for i, ev := range events[:rename] {
		switch {
		case ev.Path != o.Temp:
		case ev.Call == "openat" && ev.Ret >= 0:
			o.Exclusive = strings.Contains(ev.Args, "O_EXCL")
		case ev.Call == "write":
			lastWrite = i
		case (ev.Call == "fsync" || ev.Call == "fdatasync") && ev.Ret == 0:
			synced = i
		case ev.Call == "close":
			closed = i
		}
	}
	o.TempSyncedBeforeMove = lastWrite >= 0 && synced > lastWrite
	o.TempClosedBeforeMove = closed > synced && synced >= 0
	for _, ev := range events[rename+1:] {
		if ev.Call == "fsync" && ev.Ret == 0 && ev.Path == filepath.Dir(target) {
			o.DirSyncedAfterMove = true
		}
	}
	return o, nil
}
