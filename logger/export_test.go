package logger

import (
	"log/slog"
	"sync"
)

// resetForTest forgets the default so that the next Default call builds it
// again with build. Not safe to call concurrently with anything else.
func resetForTest(build func() *slog.Logger) (undo func()) {
	saved := newDefault
	newDefault = build
	current.Store(nil)
	initOnce = sync.Once{}
	return func() {
		newDefault = saved
		current.Store(nil)
		initOnce = sync.Once{}
	}
}

var fallbackForTest = fallback
