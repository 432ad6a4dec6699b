package filestore

import (
	"context"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"time"

	"github.com/agentstate/core/internal/watch"
)

// ErrDirGone ends a watch whose directory was removed or moved.
var ErrDirGone = fmt.Errorf("directory removed or moved: %w", os.ErrNotExist)

// NewWatcher returns a watcher of directories: inotify where the system
// has it, else polling (the tests' WatchPoll makes it poll).
func NewWatcher() *watch.Watcher {
	var poll time.Duration
	if s := TestSeams(); s != nil {
		poll = s.WatchPoll
	}
	return watch.New(poll)
}

// Watch implements status.WatchBackend: it reads the document again
// whenever its directory reports a change to its name.
func (d *Doc) Watch(ctx context.Context) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		fail := func(err error) { yield(nil, Error("watch", d.path, err)) }
		key, err := docPath(d.path)
		if err != nil {
			fail(err)
			return
		}
		dir, base := filepath.Dir(key), filepath.Base(key)
		w := NewWatcher()
		defer w.Close()
		// Watch first, then read: a change in between is seen twice at
		// worst (and yielded once), never missed.
		if err := w.Add(dir); err != nil {
			fail(Cause(err))
			return
		}
		if !yield(Read(d.path, key, d.maxSize)) {
			return
		}
		for {
			gone, err := w.WaitFor(ctx, func(n string) bool { return n == base })
			if err != nil {
				if ctx.Err() == nil {
					fail(err)
				}
				return
			}
			if !yield(Read(d.path, key, d.maxSize)) {
				return
			}
			if gone {
				fail(ErrDirGone)
				return
			}
		}
	}
}
