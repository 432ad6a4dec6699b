package status

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status/internal/filestore"
	"github.com/agentstate/core/status/internal/flock"
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

// writeFile is the file backend's durable write of a document.
func writeFile(path string, data []byte, perm os.FileMode) error {
	return fs.WriteAtomicNoFollow(path, data, perm)
}

// lockFile takes the lock of the lock file name as the file backend does,
// for a baseline that locks by itself.
func lockFile(ctx context.Context, name string, perm os.FileMode) (unlock func(), err error) {
	f, err := flock.Open(name, strings.TrimSuffix(name, LockSuffix), perm)
	if err != nil {
		return nil, err
	}
	if err := f.Lock(ctx); err != nil {
		return nil, err
	}
	return f.Close, nil
}

// setWriteFile makes the file backend write documents with w until tb ends.
// To call through to the real write, call writeFile.
func setWriteFile(tb testing.TB, w func(path string, data []byte, perm os.FileMode) error) {
	s := fileSeams(tb)
	s.WriteFile = w
	tb.Cleanup(func() { s.WriteFile = nil })
}

// setTxCrash calls crash after each step of every commit until tb ends
// (see crashAt).
func setTxCrash(tb testing.TB, crash func(step string) bool) {
	s := txSeams(tb)
	s.Crash = crash
	tb.Cleanup(func() { s.Crash = nil })
}

// needHooks skips a test that needs the test switches of the engine, the
// journal or the lock (filestore.Seams, journal.Seams, flock.Seams), in a
// build without them (go test -tags crashhooks; make test sets it).
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

// fileSeams returns the file backend's test switches, skipping tb in a
// build without them.
func fileSeams(tb testing.TB) *filestore.Seams {
	tb.Helper()
	needHooks(tb)
	return filestore.TestSeams()
}

// setWatchPoll makes watches poll every d instead of using inotify until tb
// ends.
func setWatchPoll(tb testing.TB, d time.Duration) {
	s := fileSeams(tb)
	s.WatchPoll = d
	tb.Cleanup(func() { s.WatchPoll = 0 })
}

// maxBatch is the cap on a batch (the package doc's Group commit).
const maxBatch = 256

// registrySize reports the number of documents with calls in flight.
func registrySize(tb testing.TB) int { return fileSeams(tb).Entries() }

// queueLen reports how many calls wait on path's entry.
func queueLen(tb testing.TB, path string) int { return fileSeams(tb).Queued(path) }
