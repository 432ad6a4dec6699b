package main

import (
	"flag"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentstate/core/status"
)

// A dirTree is the ROOT of fsck, sweep and list: a directory, or a link to
// one, walked at any depth. Paths are shown under ROOT as given (see show).
type dirTree struct {
	root string // as given
	dir  string // the directory walked: root, or the directory a link at root names
}

// docFlags are the flags of the commands that find documents in a tree
// (fsck, list): which files are documents, their kind and size limit.
type docFlags struct {
	name    string
	kind    kind
	maxSize int64
}

func (d *docFlags) register(fl *flag.FlagSet) {
	fl.StringVar(&d.name, "name", status.StatusFile, "documents are the files named like this (path.Match pattern)")
	maxSizeFlag(fl, &d.maxSize)
	kindFlag(fl, &d.kind)
}

// openTree checks the flags and that the arguments are ROOT alone, and
// opens the tree.
func (d *docFlags) openTree(cmd string, pos []string) (dirTree, error) {
	if len(pos) != 1 {
		return dirTree{}, fmt.Errorf("%w: %s wants ROOT, got %d arguments", errUsage, cmd, len(pos))
	}
	if _, err := filepath.Match(d.name, ""); err != nil || d.name == "" || strings.ContainsRune(d.name, '/') {
		return dirTree{}, fmt.Errorf("%w: %s: --name %q is not a file name pattern", errUsage, cmd, d.name)
	}
	return openTree(cmd, pos[0])
}

// openTree checks ROOT for cmd. A link at ROOT is resolved once, here: the
// walk, and what sweep removes, stay in the tree it named then.
func openTree(cmd, root string) (dirTree, error) {
	if fi, err := os.Stat(root); err != nil {
		return dirTree{}, fmt.Errorf("%s: %w", cmd, err)
	} else if !fi.IsDir() {
		return dirTree{}, fmt.Errorf("%w: %s: %s is not a directory", errUsage, cmd, root)
	}
	t := dirTree{root: root, dir: root}
	s := testSeams()
	if fi, err := os.Lstat(root); err == nil && fi.Mode()&os.ModeSymlink != 0 && (s == nil || !s.rootAsLink) {
		dir, err := filepath.EvalSymlinks(root)
		if err != nil {
			return dirTree{}, fmt.Errorf("%s: %w", cmd, err)
		}
		t.dir = dir
	}
	return t, nil
}

// show is the path a command prints for path, a path under t.dir: ROOT as
// given joined with the path under it (filepath.Join: cleaned), so that
// it is relative when ROOT is and names the files through ROOT when ROOT
// is a link.
func (t dirTree) show(path string) string {
	rel, err := filepath.Rel(t.dir, path)
	if err != nil || rel == "." {
		return t.root
	}
	return filepath.Join(t.root, rel)
}

// walk calls fn for every file and directory under the tree, as
// filepath.WalkDir does (lexical order, depth first, links not followed),
// except ROOT itself; fn returns filepath.SkipDir for the directories it
// does not enter (see hidden).
func (t dirTree) walk(fn func(path string, d iofs.DirEntry, err error) error) error {
	return filepath.WalkDir(t.dir, func(path string, d iofs.DirEntry, err error) error {
		if err == nil && path == t.dir {
			return nil
		}
		return fn(path, d, err)
	})
}

// hidden reports whether d is a directory the walks do not enter, as
// status.List does not: one whose name starts with "." (.git, caches).
func hidden(d iofs.DirEntry) bool {
	return d.IsDir() && strings.HasPrefix(d.Name(), ".")
}
