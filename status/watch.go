package status

import (
	"context"
	"crypto/sha256"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentstate/core/internal/watch"
	"github.com/agentstate/core/status/internal/filestore"
)

// Watch follows the status document at path: NewStore[Status](path).Watch.
func Watch(ctx context.Context, path string) iter.Seq2[Entry[Status], error] {
	return NewStore[Status](path).Watch(ctx)
}

// WatchDir follows every status document ([StatusFile]) under root:
// NewDir[Status](root, StatusFile).Watch.
func WatchDir(ctx context.Context, root string) iter.Seq2[Entry[Status], error] {
	return NewDir[Status](root, StatusFile).Watch(ctx)
}

// Watch yields the document's current state (nothing if it does not
// exist), then each change (see the package doc's Listing and watching
// documents). On files, the document's directory must exist. A backend that
// is not a [WatchBackend] yields one error matching [ErrUnsupported].
func (s *Store[T]) Watch(ctx context.Context) iter.Seq2[Entry[T], error] {
	return func(yield func(Entry[T], error) bool) {
		name := s.b.Name()
		fail := func(err error) { yield(Entry[T]{Path: name}, pathError("watch", name, err)) }
		b, ok := s.b.(WatchBackend)
		switch {
		case ctx == nil:
			fail(errNilContext)
			return
		case !ok:
			fail(unsupported("it is not a status.WatchBackend"))
			return
		case ctx.Err() != nil:
			return
		}
		t := newTracker[T](s.codec)
		for data, err := range b.Watch(ctx) {
			e, err, changed := t.report(name, data, err)
			if changed && !yield(e, err) {
				return
			}
		}
	}
}

// Watch yields every document under the root (as All does), then each
// change (see the package doc's Listing and watching documents). Each
// directory costs one inotify watch.
func (d *Dir[T]) Watch(ctx context.Context) iter.Seq2[Entry[T], error] {
	return func(yield func(Entry[T], error) bool) {
		root := filepath.Clean(d.root)
		fail := func(err error) { yield(Entry[T]{Path: root}, err) }
		if ctx == nil {
			fail(pathError("watch", root, errNilContext))
			return
		}
		if ctx.Err() != nil {
			return
		}
		if err := d.check("watch"); err != nil {
			fail(err)
			return
		}
		w := filestore.NewWatcher()
		defer w.Close()
		if err := w.Add(root); err != nil {
			fail(pathError("watch", root, filestore.Cause(err)))
			return
		}
		dw := &dirWatch[T]{d: d, w: w, t: newTracker[T](d.codec), root: root, yield: yield}
		if !dw.scan(root) {
			return
		}
		for {
			evs, err := w.Next(ctx)
			if err != nil {
				if ctx.Err() == nil {
					fail(pathError("watch", root, err))
				}
				return
			}
			for _, ev := range evs {
				if !dw.apply(ev) {
					return
				}
			}
		}
	}
}

// A dirWatch is the state of one [Dir.Watch].
type dirWatch[T any] struct {
	d     *Dir[T]
	w     *watch.Watcher
	t     *tracker[T]
	root  string
	yield func(Entry[T], error) bool
}

// apply handles one event; it reports false when the sequence must end.
func (dw *dirWatch[T]) apply(ev watch.Event) bool {
	switch {
	case ev.Op&watch.Overflow != 0:
		return dw.scan(dw.root)
	case ev.Op&watch.Gone != 0:
		if !dw.forget(ev.Dir) {
			return false
		}
		if ev.Dir == dw.root {
			dw.yield(Entry[T]{Path: dw.root}, pathError("watch", dw.root, filestore.ErrDirGone))
			return false
		}
		return true
	}
	path := ev.Path()
	if ev.IsDir || dw.w.Watching(path) {
		if ev.Op&watch.Remove != 0 && !dw.forget(path) {
			return false
		}
		fi, err := os.Lstat(path)
		if err != nil || !fi.IsDir() || strings.HasPrefix(ev.Name, ".") || dw.w.Watching(path) {
			return true
		}
		return dw.scan(path) // new, or moved in: its documents are news
	}
	if !dw.d.isDoc(ev.Name) {
		return true
	}
	return dw.look(path)
}

// scan watches dir and the directories under it, reports their documents'
// changes, and reports Removed for documents under dir that it did not
// find.
func (dw *dirWatch[T]) scan(dir string) bool {
	found := make(map[string]bool)
	ok := dw.d.walk(dir, walker[T]{
		enter: dw.w.Add,
		doc: func(path string) bool {
			found[path] = true
			return dw.look(path)
		},
		fail: func(path string, err error) bool { return dw.yield(Entry[T]{Path: path}, err) },
	})
	return ok && dw.removeUnder(dir, func(p string) bool { return !found[p] })
}

// forget stops watching dir and the directories under it and reports its
// documents Removed.
func (dw *dirWatch[T]) forget(dir string) bool {
	dw.w.RemoveTree(dir)
	return dw.removeUnder(dir, func(string) bool { return true })
}

// removeUnder reports Removed, in path order, for the documents under dir
// that were reported present and for which gone is true.
func (dw *dirWatch[T]) removeUnder(dir string, gone func(string) bool) bool {
	var paths []string
	for p := range dw.t.seen {
		if under(p, dir) && gone(p) {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	for _, p := range paths {
		delete(dw.t.seen, p)
		if !dw.yield(Entry[T]{Path: p, Removed: true}, nil) {
			return false
		}
	}
	return true
}

// under reports whether path is dir or inside it.
func under(path, dir string) bool {
	if path == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(path, dir)
}

// look reads the document at path and reports it if it changed; it
// returns false when the sequence must end.
func (dw *dirWatch[T]) look(path string) bool {
	data, err := filestore.Read(path, path, dw.d.maxSize)
	e, err, changed := dw.t.report(path, data, err)
	return !changed || dw.yield(e, err)
}

// A tracker remembers what a watch last reported for each document, so
// that it reports only changes.
type tracker[T any] struct {
	codec *codec
	seen  map[string]string // path -> digest of the bytes, or the error, last reported
}

func newTracker[T any](c *codec) *tracker[T] {
	return &tracker[T]{codec: c, seen: make(map[string]string)}
}

// report takes what was read of the document named name (its bytes, nil
// if it is missing, or the error) and returns what to report and whether
// it differs from what was last reported for it.
func (t *tracker[T]) report(name string, data []byte, err error) (e Entry[T], _ error, changed bool) {
	prev, had := t.seen[name]
	var mark string
	switch {
	case err != nil:
		mark = "error: " + err.Error()
	case data == nil:
		delete(t.seen, name)
		return Entry[T]{Path: name, Removed: true}, nil, had
	default:
		sum := sha256.Sum256(data)
		mark = string(sum[:])
	}
	if had && prev == mark {
		return Entry[T]{}, nil, false
	}
	t.seen[name] = mark
	if err != nil {
		return Entry[T]{Path: name}, err, true
	}
	v, _, err := decode[T](t.codec, name, data)
	if err != nil {
		return Entry[T]{Path: name}, err, true
	}
	return Entry[T]{Path: name, Value: v}, nil, true
}
