package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentstate/core/internal/watch"
)

// A WatchOption configures [Config.WatchFile].
type WatchOption func(*watchOptions)

type watchOptions struct {
	envPrefix string
	environ   []string
	envOpts   []Option
	poll      time.Duration // tests: poll at this interval instead of inotify
}

// WithEnv makes every load of [Config.WatchFile] apply the environment
// overrides of [Config.FromEnv](prefix, environ) to the file's content
// before it is published, in the same write: a reload never publishes the
// file without its overrides, and a key that an override pins changes
// only when the override's outcome does. opts are FromEnv's: with
// [RejectUnknownKeys], a reload whose overrides name a key the file no
// longer has fails, publishing nothing.
func WithEnv(prefix string, environ []string, opts ...Option) WatchOption {
	return func(o *watchOptions) { o.envPrefix, o.environ, o.envOpts = prefix, environ, opts }
}

// WatchFile keeps c loaded from the file at path until ctx ends: it loads
// the file, then again each time the file, the target of a symbolic link
// at path (or on the way to it) or a link on the way changes. It blocks
// while it watches, so run it in a goroutine of its own, and returns only
// when ctx ends (with ctx.Err()) or the watch cannot go on: ctx is nil,
// path's directory cannot be watched, or it is removed or moved (an error
// matching [os.ErrNotExist]).
//
// A load that fails (the file is missing, half written by an editor,
// invalid) is passed to onError, if not nil, and the watch goes on: c
// keeps its content until a later load succeeds. onError runs in
// WatchFile's goroutine, between loads; it cannot stop the watch (cancel
// ctx for that), so a failed load never ends the reloading.
//
//	if err := c.LoadFile(path); err != nil { // fail fast at start
//		return err
//	}
//	go c.WatchFile(ctx, path, func(err error) {
//		log.Printf("config not reloaded: %v", err)
//	})
//
// A load replaces the whole content, as [Config.LoadFile] does (keys set
// with Set since are dropped unless the file has them), and publishes only
// a content that differs from the current one, so that [Config.OnChange]
// callbacks run once per real change and never for a rewrite of the same
// content, a touch or a failed load. The first load happens after the
// watch is in place, so no change made after an earlier LoadFile is
// missed.
//
// Changes are seen through directories (inotify on Linux, polling every
// 500ms elsewhere, as for status.Watch): path's directory, and, when path
// is a symbolic link or goes through one, the directory of each link on
// the way and of the file it resolves to, followed again after each
// change. So a replace by rename, as [Config.SaveFile], editors and
// configuration tools write, is one change, whether it replaces path, a
// link's target in another directory, or a link (Kubernetes swaps the
// "..data" link of a ConfigMap volume; any name in path's directory that
// starts with ".." counts too). A file written in place is read when it is
// closed, but a read for an earlier event still being handled, a poll, or
// (with inotify) a change of a ".." name can come between its truncation
// and its write: that load fails and goes to onError, or, if the
// truncated file still parses, it is published, and the complete file
// follows. Write configuration by rename. A link to something that does
// not exist yet is followed once the missing directory or file is
// created.
func (c *Config) WatchFile(ctx context.Context, path string, onError func(error), opts ...WatchOption) error {
	var o watchOptions
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	fail := func(err error) error { return &Error{Op: "watch", Key: path, Err: err} }
	if ctx == nil {
		return fail(errors.New("nil context"))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	report := func(err error) {
		if err != nil && onError != nil {
			onError(err)
		}
	}
	w := watch.New(o.poll)
	defer w.Close()
	t, err := newTargets(w, path)
	if err != nil {
		return fail(err)
	}
	report(c.reload(path, &o))
	for {
		evs, err := w.Next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fail(err)
		}
		changed, gone := t.affected(evs)
		if gone {
			return fail(fmt.Errorf("directory removed or moved: %w", os.ErrNotExist))
		}
		if changed {
			t.follow()
			report(c.reload(path, &o))
		}
	}
}

// targets are the directory entries whose change can change what a
// watched path names: the path itself, each symbolic link met while
// resolving it, and the file it resolves to. Directories are named by
// their real paths, so that the watcher watches each once.
type targets struct {
	w       *watch.Watcher
	path    string
	dir     string // the real path of path's directory, watched until it is gone
	base    string // path's last element
	names   map[entry]bool
	watched map[string]bool // directories added for names, besides dir
}

// An entry is a name in a directory.
type entry struct{ dir, name string }

// maxLinks bounds the links followed while resolving a path, as the
// kernel's limit (40) does.
const maxLinks = 40

func newTargets(w *watch.Watcher, path string) (*targets, error) {
	dir, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err == nil {
		dir, err = filepath.Abs(dir)
	}
	if err == nil {
		err = w.Add(dir)
	}
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = fmt.Errorf("directory %s: %w", filepath.Dir(path), pe.Err)
		}
		return nil, err
	}
	t := &targets{w: w, path: path, dir: dir, base: filepath.Base(path), watched: map[string]bool{}}
	t.follow()
	return t, nil
}

// follow resolves the path again and watches the directories of what it
// found, dropping those no longer needed. A link that changes while its
// directory is being added is caught by resolving until nothing changes.
func (t *targets) follow() {
	for range maxLinks {
		names := resolve(t.path)
		want := map[string]bool{}
		for e := range names {
			if e.dir != t.dir && (t.watched[e.dir] || t.w.Add(e.dir) == nil) {
				want[e.dir] = true
			}
		}
		for d := range t.watched {
			if !want[d] {
				t.w.Remove(d)
			}
		}
		t.watched = want
		if maps.Equal(names, t.names) {
			return
		}
		t.names = names
	}
}

// affected reports whether evs can have changed what path names, and
// whether path's own directory is gone.
func (t *targets) affected(evs []watch.Event) (changed, gone bool) {
	for _, ev := range evs {
		switch {
		case ev.Op&watch.Overflow != 0:
			changed = true
		case ev.Op&watch.Gone != 0:
			gone = gone || ev.Dir == t.dir
			changed = true // a target's directory went: look again
		case ev.Dir == t.dir && (ev.Name == t.base || strings.HasPrefix(ev.Name, "..")):
			changed = true
		case t.names[entry{ev.Dir, ev.Name}]:
			changed = true
		}
	}
	return changed, gone
}

// resolve returns the entries that decide what path names (see targets),
// walking it one element at a time as the kernel does, so that ".." after
// a link leaves the link's target. Elements that do not exist end the
// walk: the missing one is an entry, as its creation changes the result.
func resolve(path string) map[entry]bool {
	found := map[entry]bool{}
	cur := string(filepath.Separator)
	if !filepath.IsAbs(path) {
		wd, err := os.Getwd()
		if err != nil {
			return found
		}
		path = wd + string(filepath.Separator) + path
	}
	if vol := filepath.VolumeName(path); vol != "" {
		cur, path = vol+cur, path[len(vol):]
	}
	todo := strings.Split(path, string(filepath.Separator))
	for links := 0; len(todo) > 0; {
		elem := todo[0]
		todo = todo[1:]
		switch elem {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, elem)
		fi, err := os.Lstat(next)
		if err != nil {
			found[entry{cur, elem}] = true
			return found
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			if len(todo) == 0 {
				found[entry{cur, elem}] = true
			}
			cur = next
			continue
		}
		found[entry{cur, elem}] = true
		target, err := os.Readlink(next)
		if links++; err != nil || links > maxLinks {
			return found
		}
		if filepath.IsAbs(target) {
			cur = string(filepath.Separator)
			if vol := filepath.VolumeName(target); vol != "" {
				cur, target = vol+cur, target[len(vol):]
			}
		}
		todo = append(strings.Split(target, string(filepath.Separator)), todo...)
	}
	return found
}

// reload loads the file, with the environment overrides if any, in one
// write.
func (c *Config) reload(path string, o *watchOptions) error {
	if o.envPrefix == "" {
		return c.LoadFile(path)
	}
	next := New()
	if err := next.LoadFile(path); err != nil {
		return err
	}
	if err := next.FromEnv(o.envPrefix, o.environ, o.envOpts...); err != nil {
		return err
	}
	// Through Save and Load, which give back exactly what a file and its
	// overrides hold (see Save).
	var buf bytes.Buffer
	if err := next.Save(&buf); err != nil {
		return err
	}
	return c.Load(&buf)
}
