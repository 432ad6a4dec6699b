// Package watch reports changes to the entries of directories, for the
// watchers of package status and the reload of package config. It uses
// only the standard library: inotify through package syscall on Linux, and
// polling elsewhere.
//
// A [Watcher] watches directories, not files. A document is replaced by
// rename, which puts a new inode at its name: a watch on the file itself
// would stay on the old inode and see nothing after the first replace. The
// directory sees every replace as the arrival of an entry under the name.
//
// # Events
//
// [Watcher.Next] waits until something happened and returns everything that
// happened since the last call, one [Event] per entry (several changes of one
// entry are merged). An event is a hint to look again, not a description
// of the content: a caller reads the entry after the event and so sees its
// state then, which may be newer than the event. Reported:
//
//   - Write: an entry arrived by rename (a replace), a file was closed after
//     being written, an entry's metadata changed, or a directory was
//     created. A file created by open(2) is reported when it is closed, not
//     when it appears empty, so that a reader does not take an unfinished
//     file for a document. (A file created by link(2) or mknod(2) is seen
//     at its next change.)
//   - Remove: an entry was removed or renamed away.
//   - Gone: a watched directory was removed, renamed or unmounted. It is no
//     longer watched.
//   - Overflow: the kernel's event queue overflowed and events were lost;
//     look at every watched directory again.
//
// Writes to a file that stays open are not reported until it is closed;
// a file written in place may be read half-written between its write and
// its close, which is why the protocols in this module replace files by
// rename.
//
// # inotify and polling
//
// On Linux a Watcher uses one inotify instance and one watch per
// directory. Linux limits both per user (fs.inotify.max_user_instances,
// default 128, and max_user_watches); when the instance or a directory's
// watch cannot be had, that directory is polled instead, as it always is on
// other systems, and when [New] is given a poll interval (tests use this).
// A polled directory is listed every interval and each entry's type,
// permission bits, size, modification time and, where the system reports
// them, device and inode number (and change time on Linux) are compared
// with the last listing. A replace always brings a new inode while the old
// one is in use, so polling sees it. Polling a large tree is costly (about
// 40ms for 1,000 task directories here; BenchmarkPollTree): the interval
// stretches to 20 times the last poll's duration, so that polling takes at
// most about 5% of a core. Not guaranteed: a file written in
// place without changing its size or timestamps, or replaced twice within
// one timestamp tick by a file system that hands the freed inode number to
// the second replace, is seen only at its next change.
//
// Why syscall and not golang.org/x/sys/unix or fsnotify: the standard
// library has every inotify call and constant this needs
// (InotifyInit1, InotifyAddWatch, InotifyRmWatch, InotifyEvent), so the
// library packages keep no dependency outside it; fsnotify would add a
// module to every importer's go.sum and a goroutine per watcher, while this
// package waits in the caller's goroutine through the runtime's poller.
//
// A Watcher starts no goroutine. It is not safe for concurrent use: one
// goroutine (the loop of an iterator) owns it.
package watch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentstate/core/internal/ctxtime"
)

// An Op is a set of things that happened to an entry.
type Op uint8

const (
	Write    Op = 1 << iota // replaced, written and closed, metadata changed, or a directory created
	Remove                  // removed or renamed away
	Gone                    // the directory itself went away; it is no longer watched
	Overflow                // events were lost: look at every directory again
)

// An Event reports what happened to one entry of a watched directory.
type Event struct {
	Dir   string // the directory, as given to Add ("" for Overflow)
	Name  string // the entry's name in Dir ("" for Gone and Overflow)
	Op    Op
	IsDir bool // the entry is, or was, a directory
}

// DefaultPoll is how often a polled directory is listed when New is given
// no interval.
const DefaultPoll = 500 * time.Millisecond

// A Watcher watches directories; see the package doc.
type Watcher struct {
	poll   time.Duration
	in     *inotify // nil: every directory is polled
	dirs   map[string]*dir
	byWD   map[int32]*dir
	polled int           // how many dirs are polled
	cost   time.Duration // of the last poll of every polled dir
	queue  []Event
}

type dir struct {
	path string
	wd   int32            // inotify watch; -1 when polled
	self [2]uint64        // polled: the directory's device and inode (Unix)
	snap map[string]entry // polled: the last listing
}

// New returns a Watcher. With poll > 0 it polls every directory at that
// interval; otherwise it uses inotify where the system has it and polls
// at DefaultPoll where it does not.
func New(poll time.Duration) *Watcher {
	w := &Watcher{poll: poll, dirs: make(map[string]*dir), byWD: make(map[int32]*dir)}
	if poll <= 0 {
		w.poll = DefaultPoll
		w.in = newInotify() // nil when unavailable
	}
	return w
}

// Close releases the Watcher's inotify instance, ending every watch.
func (w *Watcher) Close() error {
	w.dirs, w.byWD, w.queue = nil, nil, nil
	if w.in == nil {
		return nil
	}
	err := w.in.close()
	w.in = nil
	return err
}

// Add starts watching the directory at path (links are followed). Adding
// a directory that is already watched does nothing.
func (w *Watcher) Add(path string) error {
	if w.dirs == nil {
		return os.ErrClosed
	}
	if _, ok := w.dirs[path]; ok {
		return nil
	}
	if w.in != nil {
		wd, err := w.in.add(path)
		switch {
		case err == nil && w.byWD[wd] == nil:
			d := &dir{path: path, wd: wd}
			w.dirs[path] = d
			w.byWD[wd] = d
			return nil
		case err == nil:
			// The kernel gives one watch per inode: this directory is
			// already watched under another name (a bind mount, a
			// link), whose events its watch reports. Poll this name.
		case !errLimit(err):
			return &os.PathError{Op: "watch", Path: path, Err: err}
		}
		// Out of watches, or shared: poll this one.
	}
	return w.addPolled(path)
}

func (w *Watcher) addPolled(path string) error {
	self, snap, err := list(path)
	if err != nil {
		return &os.PathError{Op: "watch", Path: path, Err: errors.Unwrap(err)}
	}
	w.dirs[path] = &dir{path: path, wd: -1, self: self, snap: snap}
	w.polled++
	return nil
}

// Remove stops watching dir. Removing a directory that is not watched does
// nothing.
func (w *Watcher) Remove(dir string) {
	d := w.dirs[dir]
	if d == nil {
		return
	}
	w.drop(d)
	if d.wd >= 0 && w.in != nil {
		w.in.remove(d.wd) // its IN_IGNORED finds no dir and is dropped
	}
}

// drop forgets d without touching the kernel's watch.
func (w *Watcher) drop(d *dir) {
	delete(w.dirs, d.path)
	if d.wd >= 0 {
		if w.byWD[d.wd] == d {
			delete(w.byWD, d.wd)
		}
	} else {
		w.polled--
	}
}

// Watching reports whether dir is watched.
func (w *Watcher) Watching(dir string) bool { return w.dirs[dir] != nil }

// Next waits until an event happens in a watched directory, then returns
// every event that happened since the last call, merged per entry in the
// order they were first seen, except that Gone and Overflow events come
// first: a directory reported Gone is the one that was watched, older than
// anything else the batch says about its path. It returns ctx's error when
// ctx ends first.
// With no directory left to watch it returns os.ErrNotExist.
func (w *Watcher) Next(ctx context.Context) ([]Event, error) {
	if w.dirs == nil {
		return nil, os.ErrClosed
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		w.pollAll()
		if w.in != nil {
			// Read what is queued without waiting.
			evs, err := w.in.read(ctx, time.Now())
			if err != nil {
				return nil, err
			}
			w.translate(evs)
		}
		if len(w.queue) > 0 {
			out := merge(w.queue)
			w.queue = nil
			return out, nil
		}
		if len(w.dirs) == 0 {
			return nil, os.ErrNotExist
		}
		if err := w.wait(ctx); err != nil {
			return nil, err
		}
	}
}

// WaitFor waits until an entry whose name satisfies match changes, events
// were lost (Overflow: the entry may have changed), or a watched directory
// is Gone; it reports whether one is gone. It returns Next's errors.
func (w *Watcher) WaitFor(ctx context.Context, match func(name string) bool) (gone bool, err error) {
	for {
		evs, err := w.Next(ctx)
		if err != nil {
			return false, err
		}
		changed := false
		for _, ev := range evs {
			changed = changed || ev.Op&Overflow != 0 || ev.Op&Gone == 0 && match(ev.Name)
			gone = gone || ev.Op&Gone != 0
		}
		if changed || gone {
			return gone, nil
		}
	}
}

// wait blocks until the inotify instance has events, until the next poll
// is due, or until ctx ends.
func (w *Watcher) wait(ctx context.Context) error {
	if w.in == nil || w.polled > 0 && len(w.byWD) == 0 {
		return ctxtime.Sleep(ctx, w.interval())
	}
	var deadline time.Time // none
	if w.polled > 0 {
		deadline = time.Now().Add(w.interval())
	}
	evs, err := w.in.read(ctx, deadline)
	if err != nil {
		return err
	}
	w.translate(evs)
	return nil
}

// translate turns raw inotify events into Events on the queue.
func (w *Watcher) translate(evs []rawEvent) {
	for _, e := range evs {
		if e.overflow {
			w.queue = append(w.queue, Event{Op: Overflow})
			continue
		}
		d := w.byWD[e.wd]
		if d == nil {
			continue // a watch we removed
		}
		if e.op&Gone != 0 {
			w.drop(d)
			if e.removeWatch {
				w.in.remove(e.wd)
			}
			w.queue = append(w.queue, Event{Dir: d.path, Op: Gone})
			continue
		}
		w.queue = append(w.queue, Event{Dir: d.path, Name: e.name, Op: e.op, IsDir: e.isDir})
	}
}

// interval is the time until the next poll: the poll interval, stretched
// to 20 times the last poll's cost so that polling a large tree takes at
// most about 5% of a core.
func (w *Watcher) interval() time.Duration {
	return max(w.poll, 20*w.cost)
}

// pollAll compares every polled directory with its last listing.
func (w *Watcher) pollAll() {
	if w.polled == 0 {
		return
	}
	start := time.Now()
	defer func() { w.cost = time.Since(start) }()
	var paths []string
	for p, d := range w.dirs {
		if d.wd < 0 {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths) // a stable order of events
	for _, p := range paths {
		w.pollDir(w.dirs[p])
	}
}

func (w *Watcher) pollDir(d *dir) {
	self, snap, err := list(d.path)
	if err != nil || self != d.self {
		// Removed, or replaced by another directory: the old one is gone.
		w.drop(d)
		w.queue = append(w.queue, Event{Dir: d.path, Op: Gone})
		return
	}
	for _, name := range sortedKeys(d.snap) {
		if _, ok := snap[name]; !ok {
			w.queue = append(w.queue, Event{Dir: d.path, Name: name, Op: Remove, IsDir: d.snap[name].dir})
		}
	}
	for _, name := range sortedKeys(snap) {
		old, ok := d.snap[name]
		now := snap[name]
		switch {
		case !ok:
			w.queue = append(w.queue, Event{Dir: d.path, Name: name, Op: Write, IsDir: now.dir})
		case old != now:
			op := Write
			if old.dir != now.dir || old.ino != now.ino && old.dir {
				op |= Remove // another entry took the name
			}
			w.queue = append(w.queue, Event{Dir: d.path, Name: name, Op: op, IsDir: now.dir || old.dir})
		}
	}
	d.snap = snap
}

// An entry is what polling compares: a sig and whether it is a directory.
type entry struct {
	sig
	dir bool
}

// A sig is what polling compares of one file: anything that changes when
// the file is replaced, written or chmod-ed.
type sig struct {
	mode     os.FileMode
	size     int64
	mtime    int64
	ctime    int64  // where the system reports it (Linux)
	dev, ino uint64 // where the system reports them (Unix)
}

func sigOf(fi os.FileInfo) sig {
	s := sig{mode: fi.Mode(), size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	s.dev, s.ino, s.ctime = fileID(fi)
	return s
}

// list reads a directory's own device and inode and its entries'
// signatures.
func list(path string) (self [2]uint64, snap map[string]entry, err error) {
	f, err := os.Open(path)
	if err != nil {
		return self, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return self, nil, err
	}
	if !fi.IsDir() {
		return self, nil, &os.PathError{Op: "open", Path: path, Err: errNotDir}
	}
	ents, err := f.ReadDir(-1)
	if err != nil {
		return self, nil, err
	}
	snap = make(map[string]entry, len(ents))
	for _, e := range ents {
		info, err := e.Info()
		if err != nil {
			continue // removed since the listing: absent
		}
		snap[e.Name()] = entry{sig: sigOf(info), dir: info.IsDir()}
	}
	id := sigOf(fi)
	return [2]uint64{id.dev, id.ino}, snap, nil
}

var errNotDir = errors.New("not a directory")

func sortedKeys(m map[string]entry) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// merge keeps one event per entry, in the order entries were first seen,
// with the union of what happened to it; Gone and Overflow come first.
func merge(evs []Event) []Event {
	type key struct{ dir, name string }
	at := make(map[key]int, len(evs))
	out := make([]Event, 0, len(evs))
	for _, e := range evs {
		k := key{e.Dir, e.Name}
		if e.Op&Overflow != 0 {
			k = key{"\x00overflow", ""}
		}
		if i, ok := at[k]; ok {
			out[i].Op |= e.Op
			out[i].IsDir = out[i].IsDir || e.IsDir
			continue
		}
		at[k] = len(out)
		out = append(out, e)
	}
	// A directory's Gone refers to the directory that was watched, which
	// is older than anything else the batch says about its path (it may
	// have been created anew there): handled later, it would end the
	// watch of its successor.
	slices.SortStableFunc(out, func(a, b Event) int { return rank(a) - rank(b) })
	return out
}

func rank(e Event) int {
	if e.Op&(Gone|Overflow) != 0 {
		return 0
	}
	return 1
}

// Path is the entry's path: Dir joined with Name.
func (e Event) Path() string { return filepath.Join(e.Dir, e.Name) }

// RemoveTree stops watching dir and every watched directory under it.
func (w *Watcher) RemoveTree(dir string) {
	prefix := dir
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	for p := range w.dirs {
		if p == dir || strings.HasPrefix(p, prefix) {
			w.Remove(p)
		}
	}
}
