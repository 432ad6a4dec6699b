package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestUsageErrors(t *testing.T) {
	// No command: the overview on stderr, then the error.
	if r := corestate(t); r.code != exitUsage || !strings.Contains(r.stderr, "Usage:") {
		t.Errorf("no command: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	for _, args := range [][]string{
		{"bogus"},
		{"get"},
		{"list"},
		{"list", "a", "b"},
		{"list", "--where", "nofield", "."},
		{"list", "--fields", "a,,b", "."},
		{"list", "--name", "a/b", "."},
		{"sweep", "a", "b"},
		{"get", "--nope", "a"},
		{"set", "a"},
		{"set", "a", "novalue"},
		{"set", "--timeout", "x", "a", "b=1"},
		{"demo"}, // the demo is its own program (cmd/demo)
		{"help", "bogus"},
	} {
		t.Run(strings.Join(args, "_"), func(t *testing.T) {
			corestate(t, args...).want(t, exitUsage)
		})
	}
}

// A negative --timeout is a mistake (a script's remaining budget gone
// below zero), not "wait forever", which only 0 means: refuse it before
// touching the file.
func TestNegativeLockTimeoutIsUsageError(t *testing.T) {
	for _, cmd := range []string{"set", "incr"} {
		t.Run(cmd, func(t *testing.T) {
			path := tempFile(t, "status.json")
			arg := map[string]string{"set": "runs=1", "incr": "runs"}[cmd]
			corestate(t, cmd, "--timeout", "-1s", path, arg).want(t, exitUsage)
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("%s with a negative --timeout touched the file (stat: %v)", cmd, err)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	out := corestate(t, "help").want(t, exitOK).stdout
	for _, code := range []int{exitOK, exitUsage, exitNotFound, exitCorrupt, exitTimeout, exitBadField, exitError, exitConflict, exitNotCorrupt, exitExists, exitInterrupted} {
		if !strings.Contains(out, fmt.Sprintf("\n  %-4d ", code)) {
			t.Errorf("help does not document exit code %d", code)
		}
	}
	for _, cmd := range []string{"get", "set", "incr", "sweep", "fsck", "quarantine", "slot"} {
		if !strings.Contains(out, "corestate "+cmd) {
			t.Errorf("help does not mention %s", cmd)
		}
		if r := corestate(t, "help", cmd).want(t, exitOK); !strings.HasPrefix(r.stdout, "Usage: corestate "+cmd) {
			t.Errorf("help %s:\n%s", cmd, r.stdout)
		}
		if r := corestate(t, cmd, "-h").want(t, exitOK); !strings.HasPrefix(r.stdout, "Usage: corestate "+cmd) {
			t.Errorf("%s -h:\n%s", cmd, r.stdout)
		}
	}
	// The package doc lists the same codes.
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range []int{exitOK, exitUsage, exitNotFound, exitCorrupt, exitTimeout, exitBadField, exitError, exitConflict, exitNotCorrupt, exitExists, exitInterrupted} {
		if !strings.Contains(string(doc), fmt.Sprintf("//\t%-4d ", code)) {
			t.Errorf("doc.go does not document exit code %d", code)
		}
	}
}

func TestPermissionErrorIsOtherError(t *testing.T) {
	if os.Geteuid() == 0 {
		// root reads anything; use a directory where a file is expected.
		dir := t.TempDir()
		corestate(t, "set", dir, "runs=1").want(t, exitError)
		return
	}
	path := tempFile(t, "status.json")
	writeFile(t, path, "{}")
	os.Chmod(path, 0)
	corestate(t, "get", path).want(t, exitError)
}
