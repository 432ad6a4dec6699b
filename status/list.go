package status

import (
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status/internal/filestore"
)

// StatusFile is the name of a workspace's status document, the one that
// [List] and [WatchDir] find.
const StatusFile = "status.json"

// An Entry is one document that [List] or a watch reports: where it is and
// what it holds.
type Entry[T any] struct {
	// Path is the document's file: the [Dir]'s root joined with the
	// document's path under it, or the [Store]'s path.
	Path string
	// Value is the document as [Store.Load] decodes it; the zero T when
	// Removed.
	Value T
	// Removed reports that the document no longer exists (watches only).
	Removed bool
}

// A Dir is the set of documents of type T in files named like pattern
// ([path.Match], against the name alone) anywhere under a root (which may be
// a link). It lists ([Dir.All]) and follows ([Dir.Watch]) them, reading each
// as [Store.Load] does with its [WithMaxSize]. Lock files, temp files, links
// to directories and directories named ".*" are skipped; a link, pipe or
// device named like a document is [fs.ErrNotRegular], never opened.
type Dir[T any] struct {
	root    string
	pattern string
	maxSize int64
	codec   *codec
}

// NewDir returns the [Dir] of documents named like pattern under root.
func NewDir[T any](root, pattern string, opts ...Option) *Dir[T] {
	o := collect(opts)
	return &Dir[T]{root: root, pattern: pattern, maxSize: o.maxSize, codec: codecFor[T]()}
}

// List yields every status.json ([StatusFile]) under root, decoded as a
// [Status] only; documents of another type or name are listed by
// NewDir[T](root, pattern).All(). The order is that of [Dir.All]: List is
// NewDir[Status](root, StatusFile).All().
func List(root string) iter.Seq2[Entry[Status], error] {
	return NewDir[Status](root, StatusFile).All()
}

// All yields every document under the root: in each directory its documents
// by name, then its subdirectories by name, depth first. A document that
// cannot be read yields its [Entry] (only Path set) and the error, and so
// does a directory; the walk goes on. A missing root, a root that is not a
// directory or a malformed pattern yields one error and ends it. A document
// written or removed during the walk may or may not be seen.
func (d *Dir[T]) All() iter.Seq2[Entry[T], error] {
	return func(yield func(Entry[T], error) bool) {
		if err := d.check("list"); err != nil {
			yield(Entry[T]{Path: d.root}, err)
			return
		}
		d.walk(filepath.Clean(d.root), walker[T]{
			enter: func(string) error { return nil },
			doc: func(path string) bool {
				data, err := filestore.Read(path, path, d.maxSize)
				if data == nil && err == nil {
					return true // removed since the listing
				}
				e, err := d.decode(path, data, err)
				return yield(e, err)
			},
			fail: func(path string, err error) bool { return yield(Entry[T]{Path: path}, err) },
		})
	}
}

// check refuses a pattern that cannot name a file.
func (d *Dir[T]) check(op string) error {
	_, err := filepath.Match(d.pattern, "")
	switch {
	case d.pattern == "", strings.ContainsAny(d.pattern, `/`+string(filepath.Separator)):
		err = fmt.Errorf("%w: pattern %q must match a file name, not a path", fs.ErrInvalidName, d.pattern)
	case err != nil:
		err = fmt.Errorf("pattern %q: %w", d.pattern, err)
	}
	if err != nil {
		return pathError(op, d.root, err)
	}
	return nil
}

// isDoc reports whether the file name names a document.
func (d *Dir[T]) isDoc(name string) bool {
	ok, _ := filepath.Match(d.pattern, name)
	return ok && !strings.HasSuffix(name, LockSuffix) && !fs.IsTemp(name)
}

// decode turns what readDoc returned for path into an [Entry].
func (d *Dir[T]) decode(path string, data []byte, err error) (Entry[T], error) {
	if err != nil {
		return Entry[T]{Path: path}, err
	}
	v, _, err := decode[T](d.codec, path, data)
	if err != nil {
		return Entry[T]{Path: path}, err
	}
	return Entry[T]{Path: path, Value: v}, nil
}

// A walker is what walk calls: enter before a directory is listed, doc
// for each document, fail for a directory that cannot be entered or read.
// doc and fail return false to stop the walk.
type walker[T any] struct {
	enter func(dir string) error
	doc   func(path string) bool
	fail  func(path string, err error) bool
}

// walk visits dir and the directories under it (see [Dir] for which) and
// reports whether it went to the end.
func (d *Dir[T]) walk(dir string, w walker[T]) bool {
	err := w.enter(dir)
	var ents []os.DirEntry
	if err == nil {
		ents, err = os.ReadDir(dir)
	}
	switch {
	case err == nil:
	case errors.Is(err, os.ErrNotExist) && dir != filepath.Clean(d.root):
		return true // removed since its parent was listed
	default:
		return w.fail(dir, listError(dir, err))
	}
	var subdirs []string
	for _, e := range ents {
		switch name := e.Name(); {
		case e.IsDir():
			if !strings.HasPrefix(name, ".") {
				subdirs = append(subdirs, name)
			}
		case d.isDoc(name):
			if !w.doc(filepath.Join(dir, name)) {
				return false
			}
		}
	}
	for _, name := range subdirs {
		if !d.walk(filepath.Join(dir, name), w) {
			return false
		}
	}
	return true
}

// listError names dir once: the os error's own path is dropped.
func listError(dir string, err error) error {
	return pathError("list", dir, filestore.Cause(err))
}
