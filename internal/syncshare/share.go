// Package syncshare lets the writes of one process on one file system share
// their syncs, for package fs's replaces and for multi-file commit
// protocols ([BeginSync]).
//
// A replace needs two syncs: its temp file before the rename, and the
// directory after it. When several replaces run at once in this process on
// one file system that supports it (see sharedSyncKey), they share those
// syncs: one syncfs(2) makes everything written on the file system durable
// — every waiting replace's temp file, or its rename — in a single pass
// (one journal commit, or one batch of metadata writes on a file system
// without a journal) instead of one fsync per file and directory.
//
// A replace that is alone on its file system syncs its own file and
// directory. A replace that shares waits for a round that starts after its
// own writes (or rename) have returned; rounds run one at a time per file
// system, led by one of the waiting replaces (no goroutine is started), and
// a round's error is every member's error. The sequence each replace
// performs, and what it guarantees when it returns, are unchanged: syncfs
// covers the fsync it replaces.
package syncshare

import (
	"os"
	"sync"
	"sync/atomic"
)

// A Share coordinates the replaces in flight on one file system.
type Share struct {
	key fsKey

	mu      sync.Mutex
	writers int    // replaces between enter and leave (guarded by shares.mu)
	running bool   // a round is syncing
	next    *round // the round that arrivals join; nil if none is waiting
}

// A round is one shared sync.
type round struct {
	fd   int           // the member descriptor opened first (see join)
	seq  uint64        // its open sequence number
	lead chan struct{} // receives once if a waiting member must run this round
	done chan struct{} // closed when the round has run
	err  error
}

// shares maps each file system with replaces in flight to its Share;
// an entry lives while it has writers.
var shares struct {
	mu sync.Mutex
	m  map[fsKey]*Share
}

// openSeq orders the descriptors used for syncs by when they were opened.
var openSeq atomic.Uint64

// NextSeq returns the sequence number of a descriptor just opened for a
// sync (see [Share.Sync]).
func NextSeq() uint64 { return openSeq.Add(1) }

// Seams are the switches of the tests. They exist only in builds with the
// crashhooks tag (make test sets it): [TestSeams] returns nil in other
// builds, where every use compiles to nothing.
type Seams struct {
	// SyncFS, if set, runs each shared sync in place of syncfs(2), which
	// it may call: tests (here and in package fs) count the rounds and make
	// one fail, which a real file system does not do on demand.
	SyncFS func(fd int, syncfs func(fd int) error) error
}

// syncFS is syncfs(2), or the tests' SyncFS.
func syncFS(fd int) error {
	if s := TestSeams(); s != nil && s.SyncFS != nil {
		return s.SyncFS(fd, syncfs)
	}
	return syncfs(fd)
}

// Enter registers a replace on the file system of f (its new temp file)
// and returns its Share, or nil when syncs of that file system are not
// shared. [Share.Leave] ends it.
func Enter(f *os.File) *Share {
	key, ok := sharedSyncKey(f)
	if !ok {
		return nil
	}
	return join(key)
}

// join registers a replace on the file system key.
func join(key fsKey) *Share {
	shares.mu.Lock()
	defer shares.mu.Unlock()
	s := shares.m[key]
	if s == nil {
		if shares.m == nil {
			shares.m = make(map[fsKey]*Share)
		}
		s = &Share{key: key}
		shares.m[key] = s
	}
	s.writers++
	return s
}

// Leave ends a replace registered by [Enter]; a nil s does nothing.
func (s *Share) Leave() {
	if s == nil {
		return
	}
	shares.mu.Lock()
	defer shares.mu.Unlock()
	s.writers--
	if s.writers == 0 {
		delete(shares.m, s.key)
	}
}

// alone reports whether no other replace is in flight on s's file system.
func (s *Share) alone() bool {
	shares.mu.Lock()
	defer shares.mu.Unlock()
	return s.writers <= 1
}

// Sync makes durable what the caller wrote through fd (its temp file) or
// renamed in fd's directory. fd was opened before those changes, with
// sequence number seq ([NextSeq]); own is the caller's own fsync, used when
// it is alone or s is nil.
func (s *Share) Sync(fd int, seq uint64, own func() error) error {
	if s == nil || s.alone() {
		return own()
	}
	s.mu.Lock()
	if !s.running && s.next == nil && s.alone() {
		s.mu.Unlock()
		return own()
	}
	r := s.next
	if r == nil {
		r = &round{fd: fd, seq: seq, lead: make(chan struct{}, 1), done: make(chan struct{})}
		s.next = r
	} else if seq < r.seq {
		r.fd, r.seq = fd, seq
	}
	if !s.running {
		s.running, s.next = true, nil
		s.mu.Unlock()
		s.run(r)
		return r.err
	}
	s.mu.Unlock()
	select {
	case <-r.done:
	case <-r.lead:
		s.run(r)
	}
	return r.err
}

// run syncs the file system for round r, then passes the lead to the
// round that formed meanwhile, if any.
//
// The descriptor is the member's that was opened first: syncfs reports a
// write-back error recorded on the file system since that descriptor was
// opened, so it covers every member's writes.
func (s *Share) run(r *round) {
	r.err = syncFS(r.fd)
	close(r.done)
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.next; n != nil {
		s.next = nil
		n.lead <- struct{}{}
		return
	}
	s.running = false
}
