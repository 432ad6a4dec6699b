package filestore

import (
	"context"
	"os"
	"time"
)

// Seams are the switches of the tests: each turns off one rule, so that a
// test's control can show the failure the rule prevents, or stands in for
// a step the tests must count or fail. They exist only in builds with the
// crashhooks tag (make test sets it): [TestSeams] returns nil in other
// builds, where every use compiles to nothing.
type Seams struct {
	// WriteFile, if set, replaces the durable write of a document: tests
	// count the writes of a batch and make one fail, which the file system
	// cannot be made to do on demand.
	WriteFile func(path string, data []byte, perm os.FileMode) error
	// Recover, if set, replaces the recovery of a document's transaction
	// (the controls run the earlier recovery).
	Recover func(ctx context.Context, key string, maxSize int64) (pending []string, err error)
	// WatchPoll > 0 makes watches poll at that interval instead of using
	// inotify, to run the polling fallback on systems that have inotify.
	WatchPoll time.Duration

	NoJoin         bool // a transaction commits no transaction queued behind its turns
	SplitLinks     bool // two documents that are one file (hard links) are not refused
	NoPendingCheck bool // a removal does not first complete the document's transactions
}

// Queued returns how many calls wait on the entry of the document at path.
func (*Seams) Queued(path string) int {
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

// Entries returns the number of documents with calls in flight.
func (*Seams) Entries() int {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	return len(registry.m)
}
