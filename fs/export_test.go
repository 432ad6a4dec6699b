package fs

import "testing"

// setSyncFS makes shared syncs call sync instead of syncfs(2) until tb
// ends. To call through to the real one, capture syncFS before.
func setSyncFS(tb testing.TB, sync func(fd int) error) {
	orig := syncFS
	syncFS = sync
	tb.Cleanup(func() { syncFS = orig })
}
