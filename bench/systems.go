//go:build unix

package main

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status"
	bolt "go.etcd.io/bbolt"
	_ "modernc.org/sqlite"
)

// A system is one way to do the scenario's operation: read a record, add
// one to its runs, and store it durably before returning.
type system struct {
	name string
	// peer is true for other libraries (the goals compare Mutate with
	// them); false for Mutate and our own baselines.
	peer bool
	// multiProc is false for systems one process at a time can use (bbolt
	// holds an exclusive lock on its file while open).
	multiProc bool
	// ownRecord marks the raw replaces, which take no lock: they run only
	// where every goroutine has a record of its own (a and c).
	ownRecord bool
	seed      func(dir string, recs int) error
	open      func(dir string) (store, error)
}

// A store is a system opened by one process.
type store interface {
	inc(ctx context.Context, rec int) error
	// read returns the record's runs as a lock-free (or shared-lock, for
	// lockedfile) reader sees it.
	read(rec int) (int, error)
	close() error
}

var systems = []system{
	{name: "mutate", multiProc: true, seed: seedFiles, open: openFiles(mutateInc)},
	{name: "baseline", multiProc: true, seed: seedFiles, open: openBaseline},
	{name: "sqlite-full", peer: true, multiProc: true, seed: seedSQLite, open: openSQLite},
	{name: "bbolt-update", peer: true, seed: seedBolt, open: openBolt(false)},
	{name: "bbolt-batch", peer: true, seed: seedBolt, open: openBolt(true)},
	{name: "lockedfile", peer: true, multiProc: true, seed: seedFiles, open: openLockedfile},
	{name: "floor", ownRecord: true, seed: seedFiles, open: openFloor(true)},
	{name: "replace-nosync", ownRecord: true, seed: seedFiles, open: openFloor(false)},
}

func systemByName(name string) (system, error) {
	for _, s := range systems {
		if s.name == name {
			return s, nil
		}
	}
	return system{}, fmt.Errorf("unknown system %q", name)
}

// record is the document every system stores (~300 bytes of JSON).
func record() status.Status {
	t0 := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	return status.Status{
		State: status.Running, Agent: "claude", Repo: "core", Org: "agentstate", Task: "fix-p4-9-status-lock",
		Branch: "agent/fix-p4-9-status-lock", PID: 48211, StartedAt: t0, UpdatedAt: t0,
		Note: "waiting on CI", Runtime: "docker",
	}
}

// bump is the operation's change, for the systems that decode and encode
// the record themselves.
func bump(cur []byte) ([]byte, error) {
	var st status.Status
	if err := json.Unmarshal(cur, &st); err != nil {
		return nil, err
	}
	st.Runs++
	st.UpdatedAt = time.Now().UTC()
	out, err := json.MarshalIndent(st, "", "  ")
	return append(out, '\n'), err
}

func runsOf(data []byte) (int, error) {
	var st status.Status
	if err := json.Unmarshal(data, &st); err != nil {
		return 0, fmt.Errorf("torn or corrupt record (%d bytes): %w", len(data), err)
	}
	return st.Runs, nil
}

func seedBytes() []byte {
	b, _ := json.MarshalIndent(record(), "", "  ")
	return append(b, '\n')
}

// ---- file-per-record systems: <dir>/task<i>/status.json ----

func recPath(dir string, rec int) string {
	return filepath.Join(dir, fmt.Sprintf("task%d", rec), "status.json")
}

func seedFiles(dir string, recs int) error {
	for i := range recs {
		p := recPath(dir, i)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := fs.WriteAtomic(p, seedBytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// fileStore keeps record i at recPath(dir, i); op increments one file.
// Readers use status.Load (lock-free: the file is replaced by rename).
type fileStore struct {
	dir string
	op  func(ctx context.Context, path string) error
}

func openFiles(op func(ctx context.Context, path string) error) func(string) (store, error) {
	return func(dir string) (store, error) { return fileStore{dir: dir, op: op}, nil }
}

func (s fileStore) inc(ctx context.Context, rec int) error { return s.op(ctx, recPath(s.dir, rec)) }
func (s fileStore) read(rec int) (int, error) {
	st, err := status.Load(context.Background(), recPath(s.dir, rec))
	return st.Runs, err
}
func (s fileStore) close() error { return nil }

func mutateInc(ctx context.Context, path string) error {
	_, err := status.Mutate(ctx, path, func(s *status.Status) error { s.Runs++; return nil })
	return err
}

// openBaseline is the per-call baseline: a per-path mutex, a fresh open
// and blocking flock of the same sidecar lock Mutate uses, read, change,
// one fs.WriteAtomic per call. It follows the protocol, so it is correct
// next to Mutate; it just never shares a write.
func openBaseline(dir string) (store, error) {
	b := &baseline{}
	return fileStore{dir: dir, op: b.inc}, nil
}

type baseline struct{ mus sync.Map }

func (b *baseline) inc(ctx context.Context, path string) error {
	mu, _ := b.mus.LoadOrStore(path, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	unlock, err := flockPath(path+status.LockSuffix, syscall.LOCK_EX)
	if err != nil {
		return err
	}
	defer unlock()
	cur, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	next, err := bump(cur)
	if err != nil {
		return err
	}
	return fs.WriteAtomic(path, next, 0o644)
}

// flockPath opens name afresh and takes a blocking flock of kind how.
func flockPath(name string, how int) (unlock func(), err error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// openLockedfile is the lockedfile.Transform pattern plus an fsync: flock
// on the record file itself, read, change, write in place, fsync. Its
// readers take a shared flock (in-place writes tear lock-free readers).
func openLockedfile(dir string) (store, error) { return lockedfile{dir}, nil }

type lockedfile struct{ dir string }

func (l lockedfile) inc(ctx context.Context, rec int) error {
	f, err := os.OpenFile(recPath(l.dir, rec), os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := flockFd(f, syscall.LOCK_EX); err != nil {
		return err
	}
	cur, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	next, err := bump(cur)
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(next, 0); err != nil {
		return err
	}
	if err := f.Truncate(int64(len(next))); err != nil {
		return err
	}
	return f.Sync()
}

func (l lockedfile) read(rec int) (int, error) {
	f, err := os.Open(recPath(l.dir, rec))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if err := flockFd(f, syscall.LOCK_SH); err != nil {
		return 0, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return 0, err
	}
	return runsOf(data)
}

func (lockedfile) close() error { return nil }

func flockFd(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}

// openFloor is the raw durable replace with nothing else (no lock, no
// read): temp + write + fsync + close + rename + directory fsync, each
// writer on its own. It is the physical floor of the protocol; it keeps the
// counts in memory, so it runs only where every goroutine has its own
// record. Without sync it is not durable at all: it shows what the
// protocol's file operations alone cost in CPU on this machine.
func openFloor(sync bool) func(string) (store, error) {
	return func(dir string) (store, error) {
		return &floor{dir: dir, sync: sync, st: map[int]*status.Status{}}, nil
	}
}

type floor struct {
	dir  string
	sync bool
	mu   sync.Mutex
	st   map[int]*status.Status // one goroutine per record
}

func (f *floor) inc(ctx context.Context, rec int) error {
	f.mu.Lock()
	st := f.st[rec]
	if st == nil {
		r := record()
		st = &r
		f.st[rec] = st
	}
	f.mu.Unlock()
	st.Runs++
	st.UpdatedAt = time.Now().UTC()
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return floorWrite(recPath(f.dir, rec), append(data, '\n'), f.sync)
}

func (f *floor) read(rec int) (int, error) {
	st, err := status.Load(context.Background(), recPath(f.dir, rec))
	return st.Runs, err
}

func (f *floor) close() error { return nil }

func floorWrite(dest string, data []byte, sync bool) error {
	dir := filepath.Dir(dest)
	tmp := filepath.Join(dir, ".floor.tmp")
	t, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := t.Write(data); err != nil {
		t.Close()
		return err
	}
	if sync {
		if err := t.Sync(); err != nil {
			t.Close()
			return err
		}
	}
	if err := t.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, dest); err != nil {
		return err
	}
	if !sync {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// ---- SQLite (modernc.org/sqlite, pure Go): WAL, synchronous=FULL ----

const sqliteDSN = "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate"

func sqlitePath(dir string) string { return filepath.Join(dir, "records.sqlite") }

func seedSQLite(dir string, recs int) error {
	db, err := sql.Open("sqlite", "file:"+sqlitePath(dir)+sqliteDSN)
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`CREATE TABLE recs (id INTEGER PRIMARY KEY, doc BLOB NOT NULL)`); err != nil {
		return err
	}
	for i := range recs {
		if _, err := tx.Exec(`INSERT INTO recs (id, doc) VALUES (?, ?)`, i, seedBytes()); err != nil {
			return err
		}
	}
	return tx.Commit()
}

type sqliteStore struct{ db *sql.DB }

func openSQLite(dir string) (store, error) {
	db, err := sql.Open("sqlite", "file:"+sqlitePath(dir)+sqliteDSN)
	if err != nil {
		return nil, err
	}
	return sqliteStore{db}, nil
}

func (s sqliteStore) inc(ctx context.Context, rec int) error {
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var cur []byte
	if err := tx.QueryRowContext(ctx, `SELECT doc FROM recs WHERE id = ?`, rec).Scan(&cur); err != nil {
		return err
	}
	next, err := bump(cur)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE recs SET doc = ? WHERE id = ?`, next, rec); err != nil {
		return err
	}
	return tx.Commit()
}

func (s sqliteStore) read(rec int) (int, error) {
	var cur []byte
	if err := s.db.QueryRow(`SELECT doc FROM recs WHERE id = ?`, rec).Scan(&cur); err != nil {
		return 0, err
	}
	return runsOf(cur)
}

func (s sqliteStore) close() error { return s.db.Close() }

// ---- bbolt: Update (one commit per call) and Batch (coalesced) ----

var boltBucket = []byte("recs")

func boltPath(dir string) string { return filepath.Join(dir, "records.bolt") }

func boltKey(rec int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(rec)) }

func seedBolt(dir string, recs int) error {
	db, err := bolt.Open(boltPath(dir), 0o644, &bolt.Options{Timeout: 10 * time.Second})
	if err != nil {
		return err
	}
	defer db.Close()
	return db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket(boltBucket)
		if err != nil {
			return err
		}
		for i := range recs {
			if err := b.Put(boltKey(i), seedBytes()); err != nil {
				return err
			}
		}
		return nil
	})
}

type boltStore struct {
	db    *bolt.DB
	batch bool
}

func openBolt(batch bool) func(string) (store, error) {
	return func(dir string) (store, error) {
		db, err := bolt.Open(boltPath(dir), 0o644, &bolt.Options{Timeout: 10 * time.Second})
		if err != nil {
			return nil, err
		}
		return boltStore{db, batch}, nil
	}
}

func (s boltStore) inc(ctx context.Context, rec int) error {
	fn := func(tx *bolt.Tx) error {
		b := tx.Bucket(boltBucket)
		next, err := bump(b.Get(boltKey(rec)))
		if err != nil {
			return err
		}
		return b.Put(boltKey(rec), next)
	}
	if s.batch {
		return s.db.Batch(fn)
	}
	return s.db.Update(fn)
}

func (s boltStore) read(rec int) (int, error) {
	var n int
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		n, err = runsOf(tx.Bucket(boltBucket).Get(boltKey(rec)))
		return err
	})
	return n, err
}

func (s boltStore) close() error { return s.db.Close() }
