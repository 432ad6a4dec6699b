package logger

import "sync"

// resetForTest forgets the default, so that the next Default call builds
// it again. Not safe to call concurrently with anything else.
func resetForTest() (undo func()) {
	reset := func() {
		current.Store(nil)
		initOnce = sync.Once{}
	}
	reset()
	return reset
}
