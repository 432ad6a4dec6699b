package fs

import (
	"testing"

	"github.com/agentstate/core/internal/syncshare"
)

// setSyncFS makes shared syncs call sync instead of syncfs(2) until tb
// ends. To call through to the real one, capture syncshare.SyncFS before.
func setSyncFS(tb testing.TB, sync func(fd int) error) {
	orig := syncshare.SyncFS
	syncshare.SyncFS = sync
	tb.Cleanup(func() { syncshare.SyncFS = orig })
}
