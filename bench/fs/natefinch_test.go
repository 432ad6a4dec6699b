//go:build unix

package fs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	natefinch "github.com/natefinch/atomic"

	"github.com/agentstate/core/fs"
)

// These tests document why writes do not go through natefinch/atomic
// v1.0.1, next to what package fs does. TestNatefinchDifferences (strace)
// covers the missing directory fsync and the user-file-like temp names. Each assertion on natefinch is a
// fact about that version: if it fails, the peer changed and the RFC needs
// updating.

func TestNatefinchNewFileMode(t *testing.T) {
	mask := umask(t)
	dir := t.TempDir()
	theirs, ours := filepath.Join(dir, "theirs.json"), filepath.Join(dir, "ours.json")
	if err := natefinch.WriteFile(theirs, strings.NewReader("{}")); err != nil {
		t.Fatal(err)
	}
	if err := fs.WriteAtomic(ours, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	ft, _ := os.Stat(theirs)
	fo, _ := os.Stat(ours)
	t.Logf("new file: natefinch %v, ours %v (umask %03o)", ft.Mode().Perm(), fo.Mode().Perm(), mask)
	if ft.Mode().Perm() != 0o600 {
		t.Errorf("natefinch/atomic new file mode %v, documented as 0600", ft.Mode().Perm())
	}
	if fo.Mode().Perm() != 0o644&^mask {
		t.Errorf("our new file mode %v, want %v", fo.Mode().Perm(), 0o644&^mask)
	}
}

func TestNatefinchReplacesSymlink(t *testing.T) {
	for _, tt := range []struct {
		name  string
		write func(link string) error
		keeps bool
	}{
		{"natefinch", func(link string) error { return natefinch.WriteFile(link, strings.NewReader("new")) }, false},
		{"ours", func(link string) error { return fs.WriteAtomic(link, []byte("new"), 0o644) }, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			target, link := filepath.Join(dir, "real.json"), filepath.Join(dir, "link.json")
			writeFile(t, target, "old")
			if err := os.Symlink("real.json", link); err != nil {
				t.Fatal(err)
			}
			if err := tt.write(link); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Lstat(link)
			if err != nil {
				t.Fatal(err)
			}
			isLink := fi.Mode()&os.ModeSymlink != 0
			targetNow := readFile(t, target)
			t.Logf("%s: link kept=%v, target=%q", tt.name, isLink, targetNow)
			if isLink != tt.keeps {
				t.Errorf("link kept = %v, want %v", isLink, tt.keeps)
			}
			if want := map[bool]string{true: "new", false: "old"}[tt.keeps]; targetNow != want {
				t.Errorf("target = %q, want %q", targetNow, want)
			}
		})
	}
}
