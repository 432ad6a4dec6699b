package fs

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/agentstate/core/internal/syncshare"
)

// dirTree is what mkdirAll and syncPath need: *os.Root (sandbox) or
// hostDirs (plain paths).
type dirTree interface {
	Mkdir(name string, perm os.FileMode) error
	Stat(name string) (os.FileInfo, error)
	Open(name string) (*os.File, error)
}

func (hostDirs) Mkdir(name string, perm os.FileMode) error { return os.Mkdir(name, perm) }
func (hostDirs) Stat(name string) (os.FileInfo, error)     { return os.Stat(name) }
func (hostDirs) Open(name string) (*os.File, error)        { return os.Open(name) }

// mkdirAll creates name and its missing parents, then fsyncs the parent of
// the first directory it created and every directory it created, so each
// new entry is durable. The common case (name exists) costs one stat.
func mkdirAll(t dirTree, name string, perm os.FileMode) error {
	if fi, err := t.Stat(name); err == nil {
		if !fi.IsDir() {
			return syscall.ENOTDIR // the caller's error names name
		}
		return nil
	}
	var created []string
	for i := 1; i <= len(name); i++ {
		if i < len(name) && !os.IsPathSeparator(name[i]) {
			continue
		}
		if os.IsPathSeparator(name[i-1]) {
			continue // "a//b" or a trailing slash
		}
		prefix := name[:i]
		err := t.Mkdir(prefix, perm)
		if err == nil {
			created = append(created, prefix)
			continue
		}
		fi, serr := t.Stat(prefix)
		switch {
		case serr == nil && fi.IsDir():
			continue // existed (or raced with another creator)
		case serr == nil:
			return fmt.Errorf("%s: %w", prefix, syscall.ENOTDIR)
		case errors.Is(err, os.ErrExist):
			return serr // a link that escapes or dangles: say why
		}
		return err
	}
	if len(created) == 0 {
		return nil
	}
	if err := syncPath(t, parent(created[0])); err != nil {
		return durabilityUnknown(err)
	}
	for _, d := range created {
		if err := syncPath(t, d); err != nil {
			return durabilityUnknown(err)
		}
	}
	return nil
}

// syncPath fsyncs the directory name.
func syncPath(t interface {
	Open(string) (*os.File, error)
}, name string) error {
	if !syncshare.DirSync {
		return nil
	}
	d, err := t.Open(name)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// parent returns the directory part of name ("." if none), without
// cleaning.
func parent(name string) string {
	dir, _ := split(strings.TrimRight(name, string(os.PathSeparator)))
	return dir
}

// sweep removes the temp files in dir older than olderThan and returns
// their base names, sorted.
func sweep(o opener, dir string, olderThan time.Duration) (removed []string, err error) {
	d, err := o.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	f, err := d.Open(".")
	if err != nil {
		return nil, err
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return nil, err
	}
	sortEntries(ents)
	now := time.Now()
	var errs []error
	for _, e := range ents {
		if !isTempName(e.Name()) || !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		if now.Sub(fi.ModTime()) < olderThan {
			continue
		}
		if err := d.Remove(e.Name()); err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		removed = append(removed, e.Name())
	}
	return removed, errors.Join(errs...)
}

func sortEntries(ents []os.DirEntry) {
	slices.SortFunc(ents, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
}
