package status

import (
	"os"
	"testing"
	"time"

	"github.com/agentstate/core/status/internal/journal"
)

// The names of a commit's files and its simulated crash, for the tests.
const (
	markerSuffix  = journal.MarkerSuffix
	txTempSuffix  = journal.TempSuffix
	journalPrefix = ".txn-"
	journalSuffix = ".journal"
)

var errCrashed = journal.ErrCrashed

// setWriteFile makes the file backend write documents with w until tb ends.
// To call through to the real write, capture writeFile before.
func setWriteFile(tb testing.TB, w func(path string, data []byte, perm os.FileMode) error) {
	orig := writeFile
	writeFile = w
	tb.Cleanup(func() { writeFile = orig })
}

// setTxCrash calls crash after each step of every commit until tb ends
// (see crashAt).
func setTxCrash(tb testing.TB, crash func(step string) bool) {
	s := txSeams(tb)
	s.Crash = crash
	tb.Cleanup(func() { s.Crash = nil })
}

// needHooks skips a test that needs the test switches of the engine, the
// journal or the lock (journal.Seams, flock.Seams), in a build without them
// (go test -tags crashhooks; make test sets it).
func needHooks(tb testing.TB) {
	tb.Helper()
	if journal.TestSeams() == nil {
		tb.Skip("needs the test switches: go test -tags crashhooks")
	}
}

// txSeams returns the journal's test switches, skipping tb in a build
// without them.
func txSeams(tb testing.TB) *journal.Seams {
	tb.Helper()
	needHooks(tb)
	return journal.TestSeams()
}

// setWatchPoll makes watches poll every d instead of using inotify until tb
// ends.
func setWatchPoll(tb testing.TB, d time.Duration) {
	watchPoll = d
	tb.Cleanup(func() { watchPoll = 0 })
}

// registrySize reports the number of live entries.
func registrySize() int {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	return len(registry.m)
}

// queueLen reports how many requests wait on path's entry.
func queueLen(path string) int {
	key, err := docPath(path)
	if err != nil {
		return 0
	}
	registry.mu.Lock()
	e := registry.m[key]
	registry.mu.Unlock()
	if e == nil {
		return 0
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.queue)
}
