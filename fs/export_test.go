package fs

import (
	"testing"

	"github.com/agentstate/core/internal/syncshare"
)

// setSyncFS makes shared syncs call sync instead of syncfs(2) until tb
// ends, skipping tb in a build without the test switches. sync may call
// through to the real one.
func setSyncFS(tb testing.TB, sync func(fd int, syncfs func(int) error) error) {
	tb.Helper()
	s := syncshare.TestSeams()
	if s == nil {
		tb.Skip("needs the test switches: go test -tags crashhooks")
	}
	s.SyncFS = sync
	tb.Cleanup(func() { s.SyncFS = nil })
}
