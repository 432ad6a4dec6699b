//go:build !linux

package watch

import (
	"context"
	"time"
)

// Without inotify every directory is polled; these are never called.
type inotify struct{}

type rawEvent struct {
	wd          int32
	name        string
	op          Op
	isDir       bool
	overflow    bool
	removeWatch bool
}

func newInotify() *inotify                 { return nil }
func (*inotify) close() error              { return nil }
func (*inotify) add(string) (int32, error) { return -1, errNotDir }
func (*inotify) remove(int32)              {}
func (*inotify) read(context.Context, time.Time) ([]rawEvent, error) {
	return nil, nil
}
func errLimit(error) bool { return true }
