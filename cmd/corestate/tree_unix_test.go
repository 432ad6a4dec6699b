//go:build unix

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status/txfile"
)

// leftovers writes, under a new root, a temp file older than an hour and
// an orphaned journal in ROOT, at depth 1 and 3, and one of each in a
// hidden directory, which the walks do not enter. It returns the root and
// the paths under it that sweep removes.
func leftovers(t *testing.T) (root string, swept []string) {
	t.Helper()
	root = tree(t, map[string]string{
		"status.json":          good,
		"a/status.json":        good,
		"a/b/c/status.json":    good,
		".git/status.json":     good,
		"a/.cache/status.json": good,
		"a/b/c/other.json":     good,
	})
	old := time.Now().Add(-2 * time.Hour)
	for _, dir := range []string{".", "a", "a/b/c", ".git", "a/.cache"} {
		p := filepath.Join(root, dir, ".status.json.0123456789abcdef.tmp")
		writeFile(t, p, "{")
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		if dir == "." || dir[0] != '.' && !strings.Contains(dir, "/.") {
			swept = append(swept, filepath.Join(dir, ".status.json.0123456789abcdef.tmp"))
		}
	}
	doc := filepath.Join(root, "a/b/c/other.json")
	writeFile(t, filepath.Join(root, "a/b/c", txJournal), journalOf(doc)) // no marker names it
	swept = append(swept, filepath.Join("a/b/c", txJournal))
	return root, swept
}

// sweep takes a tree, as fsck does: every directory under ROOT at any
// depth, not the hidden ones; the paths it prints are ROOT joined with the
// path under it. CONTROL: the sweep of ROOT's directory alone (what sweep
// did before it took a tree) leaves the deeper leftovers, which fsck then
// still lists.
func TestSweepTree(t *testing.T) {
	control, _ := leftovers(t)
	fs.SweepTemp(control, time.Hour)
	txfile.Sweep(control)
	if r := corestate(t, "fsck", control); strings.Contains(r.stdout, "; 0 temp files,") || r.code != exitCorrupt {
		t.Fatalf("CONTROL: after a sweep of ROOT alone fsck exits %d with\n%s\nwant deeper temp files and the orphan", r.code, r.stdout)
	}

	root, swept := leftovers(t)
	before := snapshot(t, root)
	out := corestate(t, "sweep", root).want(t, exitOK).stdout
	var want []string
	for _, rel := range swept {
		want = append(want, filepath.Join(root, rel))
	}
	got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
		t.Errorf("sweep printed\n%s\nwant (in any order)\n%s", out, strings.Join(want, "\n"))
	}
	after := snapshot(t, root)
	for p := range before {
		rel, _ := filepath.Rel(root, p)
		_, kept := after[p]
		if kept == slices.Contains(swept, rel) {
			t.Errorf("%s: kept %v", rel, kept)
		}
	}
	r := corestate(t, "fsck", root).want(t, exitOK)
	if !strings.Contains(r.stdout, "; 0 temp files,") || !strings.Contains(r.stdout, " 0 orphaned journals") {
		t.Errorf("fsck after sweep:\n%s", r.stdout)
	}
}

// The path form of fsck, sweep and list: ROOT as given joined with the
// path under it, relative for a relative ROOT, absolute for an absolute
// one, and through the link when ROOT is a link.
func TestTreePathForms(t *testing.T) {
	root := tree(t, map[string]string{
		"a/status.json":                       `{"status": "running", "runs": 1}`,
		"b/status.json":                       "{",
		"b/.status.json.0123456789abcdef.tmp": "x",
	})
	old := time.Now().Add(-2 * time.Hour)
	tmp := filepath.Join(root, "b/.status.json.0123456789abcdef.tmp")
	link := filepath.Join(t.TempDir(), "ws")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Dir(root))
	rel := filepath.Base(root)
	for _, tc := range []struct{ name, root, shown string }{
		{"absolute", root, root},
		{"relative", rel, rel},
		{"relative, not clean", "./" + rel + "/", rel},
		{"link", link, link},
	} {
		t.Run(tc.name, func(t *testing.T) {
			writeFile(t, tmp, "x")
			if err := os.Chtimes(tmp, old, old); err != nil {
				t.Fatal(err)
			}
			fsck := corestate(t, "fsck", tc.root).want(t, exitCorrupt).stdout
			for _, want := range []string{
				"corrupt\t" + filepath.Join(tc.shown, "b/status.json") + "\t",
				"temp\t" + filepath.Join(tc.shown, "b/.status.json.0123456789abcdef.tmp") + "\t",
			} {
				if !strings.Contains(fsck, "\n"+want) && !strings.HasPrefix(fsck, want) {
					t.Errorf("fsck %s printed\n%s\nwant a line starting %q", tc.root, fsck, want)
				}
			}
			list := corestate(t, "list", tc.root, "--where", "status=running").want(t, exitCorrupt).stdout
			if want := filepath.Join(tc.shown, "a/status.json") + "\n"; list != want {
				t.Errorf("list %s printed %q, want %q", tc.root, list, want)
			}
			sweep := corestate(t, "sweep", tc.root).want(t, exitOK).stdout
			if want := filepath.Join(tc.shown, "b/.status.json.0123456789abcdef.tmp") + "\n"; sweep != want {
				t.Errorf("sweep %s printed %q, want %q", tc.root, sweep, want)
			}
		})
	}
}
