package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
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
	poll      time.Duration // tests: poll at this interval instead of inotify
}

// WithEnv makes every load of [Config.WatchFile] apply the environment
// overrides of [Config.FromEnv](prefix, environ) to the file's content
// before it is published, in the same write: a reload never publishes the
// file without its overrides, and a key that an override pins changes
// only when the override's outcome does.
func WithEnv(prefix string, environ []string) WatchOption {
	return func(o *watchOptions) { o.envPrefix, o.environ = prefix, environ }
}

// WatchFile keeps c loaded from the file at path: it loads it when the
// iteration starts and again each time the file changes, until ctx ends or
// the loop stops. A load replaces the whole content, as [Config.LoadFile]
// does (keys set with Set since are dropped unless the file has them), and
// publishes only a content that differs from the current one, so that
// [Config.OnChange] callbacks run once per real change and never for a
// rewrite of the same content, a touch or a failed load. The sequence
// yields the error of each load that fails (the file is missing, half
// written by an editor, invalid) and goes on; c keeps its content until a
// load succeeds.
//
//	c.LoadFile(path) // fail fast at start
//	go func() {
//		for err := range c.WatchFile(ctx, path) {
//			log.Printf("config not reloaded: %v", err)
//		}
//	}()
//
// Changes are seen through the file's directory (inotify on Linux, polling
// every 500ms elsewhere, as for status.Watch): a replace by rename, as
// [Config.SaveFile], editors and configuration tools write, is one
// change. A file written in place is read when it is closed, but a read
// for an earlier event still being handled, a poll, or (with inotify) a
// change of a ".." name can come between its truncation and its write:
// that load fails and is yielded, or, if the truncated file still parses,
// it is published, and the complete file follows. Write configuration by
// rename. A file that
// is a symbolic link is reloaded when the link or a name in its directory
// starting with ".." changes, which covers Kubernetes ConfigMap volumes
// (their "..data" link is swapped), but not when the link's target is
// written in place elsewhere. The first load happens after the watch is in
// place, so no change made after an earlier LoadFile is missed. When the
// directory is removed or moved, WatchFile yields an error matching
// [os.ErrNotExist] and ends. It starts no goroutine: run the loop in one.
func (c *Config) WatchFile(ctx context.Context, path string, opts ...WatchOption) iter.Seq[error] {
	var o watchOptions
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return func(yield func(error) bool) {
		fail := func(err error) { yield(&Error{Op: "watch", Key: path, Err: err}) }
		if ctx == nil {
			fail(errors.New("nil context"))
			return
		}
		if ctx.Err() != nil {
			return
		}
		base := filepath.Base(path)
		w := watch.New(o.poll)
		defer w.Close()
		if err := w.Add(filepath.Dir(path)); err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = fmt.Errorf("directory %s: %w", pe.Path, pe.Err)
			}
			fail(err)
			return
		}
		if err := c.reload(path, &o); err != nil && !yield(err) {
			return
		}
		// The file's name, or a name starting with "..": Kubernetes swaps
		// its "..data" link to update a ConfigMap volume.
		match := func(n string) bool { return n == base || strings.HasPrefix(n, "..") }
		for {
			gone, err := w.WaitFor(ctx, match)
			if err != nil {
				if ctx.Err() == nil {
					fail(err)
				}
				return
			}
			if gone {
				fail(fmt.Errorf("directory removed or moved: %w", os.ErrNotExist))
				return
			}
			if err := c.reload(path, &o); err != nil && !yield(err) {
				return
			}
		}
	}
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
	if err := next.FromEnv(o.envPrefix, o.environ); err != nil {
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
