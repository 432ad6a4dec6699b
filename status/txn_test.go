package status

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentstate/core/status/internal/filestore"
)

// txReg is a registry document: a count of running tasks and their names.
type txReg struct {
	Active int      `json:"active_count"`
	Max    int      `json:"max_concurrent"`
	Agents []string `json:"agents,omitempty"`
}

// txDocs returns a registry and a task's status document in dir (the task
// in a subdirectory, as the agent services lay them out).
func txDocs(t *testing.T, dir string) (*Store[txReg], *Store[Status]) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "task"), 0o755); err != nil {
		t.Fatal(err)
	}
	return NewStore[txReg](filepath.Join(dir, "registry.json")), NewStore[Status](filepath.Join(dir, "task", "status.json"))
}

// spawn is the admission step the tests use: claim the task, count it.
func spawn(reg *Store[txReg], task *Store[Status]) func(*Tx) error {
	return func(tx *Tx) error {
		r, err := reg.In(tx)
		if err != nil {
			return err
		}
		s, err := task.In(tx)
		if err != nil {
			return err
		}
		if r.Active >= r.Max {
			return errors.New("at capacity")
		}
		r.Active++
		r.Agents = append(r.Agents, task.Name())
		return s.Transition(Running, Queued)
	}
}

// in is [Store.In] for a test whose s is in tx: a misuse fails the test.
func in[T any](t testing.TB, s *Store[T], tx *Tx) *T {
	t.Helper()
	v, err := s.In(tx)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func seedTx(t *testing.T, reg *Store[txReg], task *Store[Status]) {
	t.Helper()
	ctx := context.Background()
	if _, err := reg.Mutate(ctx, func(r *txReg) error { r.Max = 5; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := task.Mutate(ctx, func(s *Status) error { s.State = Queued; s.Task = "t"; return nil }); err != nil {
		t.Fatal(err)
	}
}

// leftovers lists the files of a transaction's commit left in dir's tree.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	var found []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if strings.HasSuffix(name, markerSuffix) || strings.HasSuffix(name, txTempSuffix) || strings.HasPrefix(name, journalPrefix) {
			found = append(found, p)
		}
		return nil
	})
	return found
}

func TestMutateAllCommitsEveryDocument(t *testing.T) {
	dir := t.TempDir()
	reg, task := txDocs(t, dir)
	seedTx(t, reg, task)
	before := time.Now().UTC()
	tx, err := MutateAll(context.Background(), []AnyStore{reg, task}, spawn(reg, task))
	if err != nil {
		t.Fatal(err)
	}
	r, s := in(t, reg, tx), in(t, task, tx)
	if r.Active != 1 || s.State != Running || s.UpdatedAt.Before(before) {
		t.Fatalf("Tx holds %+v and %s updated %v, want active 1, running, stamped", *r, s.State, s.UpdatedAt)
	}
	gotR, _ := reg.Load(context.Background())
	gotS, _ := task.Load(context.Background())
	if gotR.Active != 1 || gotS.State != Running || !gotS.UpdatedAt.Equal(s.UpdatedAt) {
		t.Fatalf("on disk %+v and %+v, want the committed documents", gotR, gotS)
	}
	if l := leftovers(t, dir); len(l) > 0 {
		t.Fatalf("the commit left %v", l)
	}
}

func TestMutateAllWritesNothingOnError(t *testing.T) {
	dir := t.TempDir()
	reg, task := txDocs(t, dir)
	seedTx(t, reg, task)
	raw := func() string {
		a, _ := os.ReadFile(reg.Name())
		b, _ := os.ReadFile(task.Name())
		return string(a) + string(b)
	}
	want := raw()
	boom := errors.New("boom")
	_, _, err := MutateAll2(context.Background(), reg, task, func(r *txReg, s *Status) error {
		r.Active = 99
		s.State = Failed
		return boom
	})
	if err != boom {
		t.Fatalf("MutateAll returned %v, want fn's error as is", err)
	}
	func() {
		defer func() {
			if recover() != "fn panic" {
				t.Error("fn's panic did not reach the caller")
			}
		}()
		MutateAll2(context.Background(), reg, task, func(r *txReg, _ *Status) error {
			r.Active = 99
			panic("fn panic")
		})
	}()
	if got := raw(); got != want {
		t.Fatalf("a failed transaction changed the documents:\n%s\nwant\n%s", got, want)
	}
	// The locks were released: the next transaction commits.
	if _, err := MutateAll(context.Background(), []AnyStore{reg, task}, spawn(reg, task)); err != nil {
		t.Fatal(err)
	}
}

func TestMutateAllWritesOnlyWhatChanged(t *testing.T) {
	dir := t.TempDir()
	reg, task := txDocs(t, dir)
	seedTx(t, reg, task)
	var steps []string
	setTxCrash(t, func(step string) bool { steps = append(steps, step); return false })
	st, _ := os.Stat(task.Name())
	// One document changed: written as Mutate writes it, no journal.
	if _, _, err := MutateAll2(context.Background(), reg, task, func(r *txReg, _ *Status) error {
		r.Active = 3 // the task is read, not changed
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(steps) > 0 {
		t.Fatalf("a transaction that changed one document went through the commit protocol: %v", steps)
	}
	if st2, _ := os.Stat(task.Name()); !os.SameFile(st, st2) {
		t.Fatal("an unchanged document was rewritten")
	}
	// Nothing changed: nothing written.
	rst, _ := os.Stat(reg.Name())
	if _, err := MutateAll(context.Background(), []AnyStore{reg, task}, func(tx *Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if rst2, _ := os.Stat(reg.Name()); !os.SameFile(rst, rst2) {
		t.Fatal("a transaction that changed nothing rewrote a document")
	}
}

func TestMutateAllKeepsUnknownFields(t *testing.T) {
	dir := t.TempDir()
	reg, task := txDocs(t, dir)
	os.WriteFile(reg.Name(), []byte(`{"max_concurrent": 2, "hierarchy": {"a": ["b"]}}`), 0o644)
	os.WriteFile(task.Name(), []byte(`{"status": "queued", "py_extra": [1, 2.50]}`), 0o644)
	if _, err := MutateAll(context.Background(), []AnyStore{reg, task}, spawn(reg, task)); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(reg.Name())
	b, _ := os.ReadFile(task.Name())
	if !strings.Contains(string(a), `"hierarchy": {"a": ["b"]}`) || !strings.Contains(string(b), `"py_extra": [1, 2.50]`) {
		t.Fatalf("unknown fields not kept verbatim:\n%s\n%s", a, b)
	}
}

func TestMutateAllRefusesCorruptDocument(t *testing.T) {
	dir := t.TempDir()
	reg, task := txDocs(t, dir)
	seedTx(t, reg, task)
	os.WriteFile(task.Name(), []byte(`{"status": `), 0o644)
	called := false
	_, err := MutateAll(context.Background(), []AnyStore{reg, task}, func(tx *Tx) error { called = true; return nil })
	if !errors.Is(err, ErrCorrupt) || called {
		t.Fatalf("MutateAll over a corrupt document: err %v, fn called %v; want ErrCorrupt, not called", err, called)
	}
}

// A Backend that is not the file backend, for the mixed-backend case.
type otherBackend struct{ Backend }

func (otherBackend) Name() string { return "other" }

func TestMutateAllRefusesBadDocuments(t *testing.T) {
	dir := t.TempDir()
	reg, task := txDocs(t, dir)
	seedTx(t, reg, task)
	ctx := context.Background()
	noop := func(*Tx) error { return nil }
	if err := os.Symlink(dir, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	other := NewStore[txReg]("x", WithBackend(func(string) Backend { return otherBackend{} }))
	var nilStore *Store[Status]
	for _, tc := range []struct {
		name string
		docs []AnyStore
		fn   func(*Tx) error
		want error
	}{
		{"none", nil, noop, os.ErrInvalid},
		{"nil", []AnyStore{reg, nil}, noop, os.ErrInvalid},
		{"nil store", []AnyStore{reg, nilStore}, noop, os.ErrInvalid},
		{"twice", []AnyStore{reg, task, reg}, noop, os.ErrInvalid},
		{"same path", []AnyStore{reg, NewStore[txReg](reg.Name())}, noop, os.ErrInvalid},
		{"same file by a link", []AnyStore{reg, NewStore[txReg](filepath.Join(dir, "link", "registry.json"))}, noop, os.ErrInvalid},
		{"mixed backends", []AnyStore{reg, other}, noop, os.ErrInvalid},
		{"no transactions", []AnyStore{other, reg}, noop, errors.ErrUnsupported},
		{"nil fn", []AnyStore{reg, task}, nil, errNilFunc},
		// A misuse of In that fn ignores still fails the transaction.
		{"undeclared", []AnyStore{reg}, func(tx *Tx) error { s, _ := task.In(tx); s.Runs++; return nil }, os.ErrInvalid},
		{"wrong type", []AnyStore{reg}, func(tx *Tx) error { s, _ := NewStore[Status](reg.Name()).In(tx); s.Runs++; return nil }, os.ErrInvalid},
		{"nil In", []AnyStore{reg}, func(tx *Tx) error { s, _ := nilStore.In(tx); s.Runs++; return nil }, os.ErrInvalid},
		{"undeclared, another error", []AnyStore{reg}, func(tx *Tx) error {
			if s, _ := task.In(tx); s.State != Running {
				return errors.New("not running") // decided from the zero value
			}
			return nil
		}, os.ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := os.ReadFile(reg.Name())
			var err error
			if tc.fn == nil {
				_, err = MutateAll(ctx, tc.docs, nil)
			} else {
				_, err = MutateAll(ctx, tc.docs, func(tx *Tx) error {
					in(t, reg, tx).Active = 42 // a change that must not be written
					return tc.fn(tx)
				})
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want an error matching %v", err, tc.want)
			}
			if n := strings.Count(err.Error(), "status:"); n != 1 {
				t.Errorf("error %q: want one \"status:\" prefix", err)
			}
			if after, _ := os.ReadFile(reg.Name()); string(after) != string(before) {
				t.Fatalf("the refused transaction wrote %s", after)
			}
		})
	}
	if _, err := MutateAll(nil, []AnyStore{reg}, noop); err == nil { //nolint:staticcheck // the nil ctx is the case
		t.Fatal("nil ctx accepted")
	}
	if got, err := (*Store[txReg])(nil).In(nil); got == nil || !errors.Is(err, os.ErrInvalid) {
		t.Fatalf("In on nil = %v, %v; want a zero value and os.ErrInvalid", got, err)
	}
}

func TestMutateAllHonoursContext(t *testing.T) {
	dir := t.TempDir()
	reg, task := txDocs(t, dir)
	seedTx(t, reg, task)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := MutateAll(ctx, []AnyStore{reg, task}, spawn(reg, task)); !errors.Is(err, context.Canceled) {
		t.Fatalf("done ctx: %v", err)
	}
	// Waiting for the second document's turn: a Mutate of task holds it.
	inside, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		task.Mutate(context.Background(), func(s *Status) error {
			close(inside)
			<-release
			return nil
		})
	})
	<-inside
	ctx, cancel = context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := MutateAll(ctx, []AnyStore{reg, task}, spawn(reg, task))
		done <- err
	}()
	waitQueued(t, task.Name(), 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled while waiting for a turn: %v", err)
	}
	close(release)
	wg.Wait()
	// The registry's turn was given back: a Mutate of it goes through.
	if _, err := reg.Mutate(context.Background(), func(r *txReg) error { r.Active = 7; return nil }); err != nil {
		t.Fatal(err)
	}
	if got, _ := reg.Load(context.Background()); got.Active != 7 {
		t.Fatalf("registry %+v", got)
	}
}

// waitQueued waits until n requests wait in path's queue (no sleeping on a
// timer: each check yields).
func waitQueued(t *testing.T, path string, n int) {
	t.Helper()
	for queueLen(t, path) < n {
		if t.Context().Err() != nil {
			t.Fatal("test ended")
		}
		runtime.Gosched()
	}
}

func TestLoadAllReadsTogether(t *testing.T) {
	dir := t.TempDir()
	reg, task := txDocs(t, dir)
	seedTx(t, reg, task)
	tx, err := LoadAll(context.Background(), reg, task)
	if err != nil {
		t.Fatal(err)
	}
	r, s := in(t, reg, tx), in(t, task, tx)
	if r.Max != 5 || s.State != Queued {
		t.Fatalf("LoadAll read %+v and %s", *r, s.State)
	}
	// Changing the snapshot changes nothing on disk.
	r.Max = 1
	if got, _ := reg.Load(context.Background()); got.Max != 5 {
		t.Fatal("a LoadAll snapshot wrote through")
	}
}

// Calls queued behind a transaction's turn join its commit: one commit
// holds the transaction and every queued Mutate, each Mutate seeing the
// transaction's result.
func TestMutateAllJoinsQueuedMutates(t *testing.T) {
	dir := t.TempDir()
	reg, task := txDocs(t, dir)
	seedTx(t, reg, task)
	var mu sync.Mutex
	installs, writes := 0, 0
	setTxCrash(t, func(step string) bool {
		mu.Lock()
		defer mu.Unlock()
		if step == "installed" {
			installs++
		}
		return false
	})
	orig := writeFile
	setWriteFile(t, func(path string, data []byte, perm os.FileMode) error {
		mu.Lock()
		writes++
		mu.Unlock()
		return orig(path, data, perm)
	})

	inside, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		_, err := MutateAll(context.Background(), []AnyStore{reg, task}, func(tx *Tx) error {
			close(inside)
			<-release
			return spawn(reg, task)(tx)
		})
		if err != nil {
			t.Error(err)
		}
	})
	<-inside
	const n = 5
	for i := range n {
		wg.Go(func() {
			if _, err := reg.Mutate(context.Background(), func(r *txReg) error {
				if r.Active != 1 {
					return fmt.Errorf("queued Mutate %d saw active %d, want the transaction's 1", i, r.Active)
				}
				r.Agents = append(r.Agents, fmt.Sprint(i))
				return nil
			}); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			if _, err := task.Mutate(context.Background(), func(s *Status) error { s.Runs++; return nil }); err != nil {
				t.Error(err)
			}
		})
	}
	waitQueued(t, reg.Name(), n+1) // the turn and n calls
	waitQueued(t, task.Name(), n+1)
	close(release)
	wg.Wait()
	if installs != 1 || writes != 0 {
		t.Fatalf("%d commits and %d single writes, want the queued calls in the transaction's one commit", installs, writes)
	}
	r, _ := reg.Load(context.Background())
	s, _ := task.Load(context.Background())
	if r.Active != 1 || len(r.Agents) != n+1 || s.Runs != n || s.State != Running {
		t.Fatalf("registry %+v, task %+v", r, s)
	}
}

// A transaction takes its turn: it waits for the batch ahead of it, and
// calls that arrive after it wait for it, on every document.
func TestMutateAllTakesItsTurn(t *testing.T) {
	dir := t.TempDir()
	reg, task := txDocs(t, dir)
	seedTx(t, reg, task)
	var order []string
	var mu sync.Mutex
	log := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	inside, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		task.Mutate(context.Background(), func(s *Status) error {
			log("first")
			close(inside)
			<-release
			return nil
		})
	})
	<-inside
	wg.Go(func() {
		MutateAll(context.Background(), []AnyStore{reg, task}, func(tx *Tx) error { log("tx"); return spawn(reg, task)(tx) })
	})
	waitQueued(t, task.Name(), 1)
	wg.Go(func() {
		reg.Mutate(context.Background(), func(r *txReg) error { log("after on registry"); return nil })
	})
	waitQueued(t, reg.Name(), 2) // behind the transaction's turn
	close(release)
	wg.Wait()
	want := []string{"first", "tx", "after on registry"}
	if !slices.Equal(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}
}

// Transactions over overlapping sets, in opposite orders, with Mutate
// calls on the same documents, in one process: none deadlocks, every
// change is kept, and every transaction is all or nothing.
func TestMutateAllConcurrentOverlapping(t *testing.T) {
	dir := t.TempDir()
	stores := make([]*Store[txReg], 4)
	for i := range stores {
		stores[i] = NewStore[txReg](filepath.Join(dir, fmt.Sprintf("d%d.json", i)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const workers, rounds = 8, 20
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				a, b := stores[(w+i)%4], stores[(w+i+1+w%3)%4]
				if w%2 == 1 {
					a, b = b, a
				}
				if a == b {
					continue
				}
				_, _, err := MutateAll2(ctx, a, b, func(a, b *txReg) error {
					a.Active++ // Active counts transactions, Max their other end
					b.Max++
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := a.Mutate(ctx, func(r *txReg) error { r.Agents = append(r.Agents, "m"); return nil }); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	sumA, sumB, mutates := 0, 0, 0
	for _, s := range stores {
		r, err := s.Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sumA += r.Active
		sumB += r.Max
		mutates += len(r.Agents)
	}
	if sumA != sumB || mutates != sumA {
		t.Fatalf("transactions counted %d and %d times, Mutates %d: want all equal", sumA, sumB, mutates)
	}
	if l := leftovers(t, dir); len(l) > 0 {
		t.Fatalf("left %v", l)
	}
}

func TestMutateAllWrongResultLength(t *testing.T) {
	dir := t.TempDir()
	reg, task := txDocs(t, dir)
	err := filestore.UpdateAll(context.Background(), "mutate all", []*filestore.Doc{reg.file, task.file}, func(cur [][]byte) ([][]byte, error) {
		return [][]byte{[]byte("{}\n")}, nil
	})
	if err == nil {
		t.Fatal("an apply that returned one document for two was accepted")
	}
	if _, err := os.Stat(reg.Name()); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a refused apply wrote")
	}
}

// Transactions queued behind a transaction's turns join its commit when
// their documents are all among its own; one with another document waits
// for its turn and commits on its own.
func TestMutateAllJoinsQueuedTransactions(t *testing.T) {
	dir := t.TempDir()
	reg, task := txDocs(t, dir)
	seedTx(t, reg, task)
	other := NewStore[txReg](filepath.Join(dir, "other.json"))
	var mu sync.Mutex
	installs := 0
	setTxCrash(t, func(step string) bool {
		mu.Lock()
		defer mu.Unlock()
		if step == "installed" {
			installs++
		}
		return false
	})
	bump := func(docs ...AnyStore) func(*Tx) error {
		return func(tx *Tx) error {
			for _, d := range docs {
				switch s := d.(type) {
				case *Store[txReg]:
					r, err := s.In(tx)
					if err != nil {
						return err
					}
					r.Active++
				case *Store[Status]:
					st, err := s.In(tx)
					if err != nil {
						return err
					}
					st.Runs++
				}
			}
			return nil
		}
	}
	inside, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := MutateAll(context.Background(), []AnyStore{reg, task}, func(tx *Tx) error {
			close(inside)
			<-release
			return bump(reg, task)(tx)
		}); err != nil {
			t.Error(err)
		}
	})
	<-inside
	const n = 4
	var joinedTx []*Tx
	for range n {
		wg.Go(func() {
			tx, err := MutateAll(context.Background(), []AnyStore{task, reg}, bump(reg, task))
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			joinedTx = append(joinedTx, tx)
			mu.Unlock()
		})
	}
	failing := make(chan error, 1)
	wg.Go(func() {
		_, err := MutateAll(context.Background(), []AnyStore{reg}, func(tx *Tx) error {
			r, err := reg.In(tx)
			if err != nil {
				return err
			}
			r.Active = 1000
			return errors.New("joined and failing")
		})
		failing <- err
	})
	waitQueued(t, reg.Name(), n+2) // the leader's turn, n+1 transactions
	wg.Go(func() {
		if _, err := MutateAll(context.Background(), []AnyStore{reg, other}, bump(reg, other)); err != nil {
			t.Error(err)
		}
	})
	waitQueued(t, reg.Name(), n+3)
	close(release)
	wg.Wait()
	if err := <-failing; err == nil || err.Error() != "joined and failing" {
		t.Fatalf("a joined transaction's fn error: %v, want it as is", err)
	}
	r, _ := reg.Load(context.Background())
	s, _ := task.Load(context.Background())
	o, _ := other.Load(context.Background())
	if r.Active != n+2 || s.Runs != n+1 || o.Active != 1 {
		t.Fatalf("registry %d, task %d, other %d; want %d, %d, 1", r.Active, s.Runs, o.Active, n+2, n+1)
	}
	if installs != 2 {
		t.Fatalf("%d commits, want 2: the leader's with the %d joined, and the one with another document", installs, n)
	}
	// Each joined transaction's Tx holds what its own fn saw plus its change.
	seen := map[int]bool{}
	for _, tx := range joinedTx {
		seen[in(t, task, tx).Runs] = true
	}
	if len(seen) != n {
		t.Fatalf("joined transactions committed runs %v: want each its own value", seen)
	}
}

// A joined transaction's panic reaches its own caller; the leader and the
// others commit.
func TestMutateAllJoinedPanic(t *testing.T) {
	dir := t.TempDir()
	reg, task := txDocs(t, dir)
	seedTx(t, reg, task)
	inside, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		MutateAll2(context.Background(), reg, task, func(r *txReg, _ *Status) error {
			close(inside)
			<-release
			r.Active++
			return nil
		})
	})
	<-inside
	recovered := make(chan any, 1)
	wg.Go(func() {
		defer func() { recovered <- recover() }()
		MutateAll2(context.Background(), reg, task, func(r *txReg, _ *Status) error {
			r.Active = 1000
			panic("joined panic")
		})
	})
	wg.Go(func() {
		MutateAll(context.Background(), []AnyStore{reg}, func(tx *Tx) error {
			r, err := reg.In(tx)
			if err != nil {
				return err
			}
			r.Active++
			return nil
		})
	})
	waitQueued(t, reg.Name(), 3)
	close(release)
	wg.Wait()
	if v := <-recovered; v != "joined panic" {
		t.Fatalf("recovered %v", v)
	}
	if r, _ := reg.Load(context.Background()); r.Active != 2 {
		t.Fatalf("active %d, want 2", r.Active)
	}
}

func TestUpdateAllNilBackend(t *testing.T) {
	dir := t.TempDir()
	reg, _ := txDocs(t, dir)
	err := filestore.UpdateAll(context.Background(), "mutate all", []*filestore.Doc{reg.file, nil}, func(cur [][]byte) ([][]byte, error) { return cur, nil })
	if !errors.Is(err, os.ErrInvalid) {
		t.Fatalf("UpdateAll with a nil document: %v", err)
	}
}

// A Mutate call observed (WithObserver) that joins a transaction's commit
// reports the batch it joined and the commit's write.
func TestMutateAllJoinedCallObserved(t *testing.T) {
	dir := t.TempDir()
	reg, task := txDocs(t, dir)
	seedTx(t, reg, task)
	calls := make(chan CallReport, 1)
	obs := &Observer{Done: func(c CallReport) { calls <- c }}
	inside, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		MutateAll(context.Background(), []AnyStore{reg, task}, func(tx *Tx) error {
			close(inside)
			<-release
			return spawn(reg, task)(tx)
		})
	})
	<-inside
	wg.Go(func() {
		if _, err := reg.Mutate(WithObserver(context.Background(), obs), func(r *txReg) error { r.Agents = append(r.Agents, "x"); return nil }); err != nil {
			t.Error(err)
		}
	})
	waitQueued(t, reg.Name(), 2)
	close(release)
	wg.Wait()
	c := <-calls
	if c.Err != nil || c.Batch != 2 || c.Leader || c.Write <= 0 {
		t.Fatalf("observed call %+v: want batch 2 (the transaction's turn and the call), not leader, a write", c)
	}
}

// LoadAll's errors name it: a read is not reported as "mutate all", with
// a missing directory (opening the lock file fails), a cancelled context
// and a wait for a lock that ends with ctx.
func TestLoadAllErrorsSayLoadAll(t *testing.T) {
	dir := t.TempDir()
	reg, task := txDocs(t, dir)
	missing := NewStore[Status](filepath.Join(dir, "missing", "status.json"))
	_, err := LoadAll(context.Background(), reg, missing)
	if err == nil || !strings.Contains(err.Error(), "status: load all ") || strings.Contains(err.Error(), "mutate all") {
		t.Errorf("LoadAll with a missing directory: %v, want an error of load all", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := LoadAll(ctx, reg, task); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "load all") {
		t.Errorf("LoadAll with a cancelled context: %v", err)
	}
	// Queued behind a Mutate that holds the registry's turn: ctx ends the wait.
	inside, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		reg.Mutate(context.Background(), func(*txReg) error { close(inside); <-release; return nil })
	})
	<-inside
	ctx, cancel = context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := LoadAll(ctx, reg, task); done <- err }()
	waitQueued(t, reg.Name(), 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "load all") || strings.Contains(err.Error(), "mutate all") {
		t.Errorf("LoadAll whose wait ctx ended: %v", err)
	}
	close(release)
	wg.Wait()
	if _, err := MutateAll(context.Background(), []AnyStore{reg, missing}, func(*Tx) error { return nil }); err == nil || !strings.Contains(err.Error(), "status: mutate all ") {
		t.Errorf("MutateAll with a missing directory: %v, want an error of mutate all", err)
	}
}

// In reports a Store that is not in the transaction at the call, with an
// error naming it; the transaction fails with it even if fn drops it, and
// writes nothing.
func TestInReportsMisuseAtTheCall(t *testing.T) {
	dir := t.TempDir()
	reg, task := txDocs(t, dir)
	seedTx(t, reg, task)
	other := NewStore[Status](filepath.Join(dir, "other.json"))
	var inErr error
	_, err := MutateAll(context.Background(), []AnyStore{reg, task}, func(tx *Tx) error {
		in(t, reg, tx).Active = 42
		s, err := other.In(tx)
		inErr = err
		if s == nil {
			t.Error("In returned a nil pointer with its error")
		}
		return err
	})
	if !errors.Is(inErr, os.ErrInvalid) || !strings.Contains(inErr.Error(), "status: in "+other.Name()+": ") || !strings.Contains(inErr.Error(), reg.Name()) {
		t.Fatalf("In of a Store not in the transaction: %v, want os.ErrInvalid naming it and the transaction's documents", inErr)
	}
	if err != inErr {
		t.Errorf("MutateAll returned %v, want fn's error, In's, as is", err)
	}
	if r, _ := reg.Load(context.Background()); r.Active == 42 {
		t.Error("the failed transaction wrote the registry")
	}
	// The same Store under another type: refused at the call too.
	_, err = MutateAll(context.Background(), []AnyStore{reg}, func(tx *Tx) error {
		_, err := NewStore[Status](reg.Name()).In(tx)
		return err
	})
	if !errors.Is(err, os.ErrInvalid) || !strings.Contains(err.Error(), "another document type") {
		t.Errorf("In of the registry as a Status: %v", err)
	}
}

// MutateAll3 commits three documents of three types together, returns them
// as committed, and writes nothing when fn fails; bad arguments are
// os.ErrInvalid, as for MutateAll.
func TestMutateAll3(t *testing.T) {
	dir := t.TempDir()
	reg, task := txDocs(t, dir)
	seedTx(t, reg, task)
	parent := NewStore[map[string]any](filepath.Join(dir, "parent.json"))
	fn := func(r *txReg, s *Status, p *map[string]any) error {
		r.Active++
		*p = map[string]any{"children": []any{s.Task}}
		return s.Transition(Running, Queued)
	}
	r, s, p, err := MutateAll3(context.Background(), reg, task, parent, fn)
	if err != nil || r.Active != 1 || s.State != Running || len(p["children"].([]any)) != 1 {
		t.Fatalf("MutateAll3 = %+v, %s, %v, %v", r, s.State, p, err)
	}
	before := [3][]byte{}
	for i, name := range []string{reg.Name(), task.Name(), parent.Name()} {
		before[i], _ = os.ReadFile(name)
	}
	// The task is running now: the transition fails and nothing is written.
	if _, _, _, err := MutateAll3(context.Background(), reg, task, parent, fn); !errors.Is(err, ErrConflict) {
		t.Fatalf("second MutateAll3: %v, want ErrConflict", err)
	}
	for i, name := range []string{reg.Name(), task.Name(), parent.Name()} {
		if after, _ := os.ReadFile(name); string(after) != string(before[i]) {
			t.Errorf("%s changed by a failed MutateAll3", name)
		}
	}
	if _, _, _, err := MutateAll3(context.Background(), reg, task, nil, fn); !errors.Is(err, os.ErrInvalid) {
		t.Errorf("MutateAll3 with a nil Store: %v", err)
	}
	if _, _, _, err := MutateAll3[txReg, Status, map[string]any](context.Background(), reg, task, parent, nil); !errors.Is(err, errNilFunc) {
		t.Errorf("MutateAll3 with a nil fn: %v", err)
	}
	if _, _, err := MutateAll2(context.Background(), reg, reg, func(*txReg, *txReg) error { return nil }); !errors.Is(err, os.ErrInvalid) {
		t.Errorf("MutateAll2 of one document twice: %v", err)
	}
}
