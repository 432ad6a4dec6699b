package slots_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/claim"
	"github.com/agentstate/core/status/slots"
)

// The load: a registry with a cap of 32 and 16 slots held for the whole
// run (a fleet at half its cap); each operation reserves a slot for a task,
// moving the task from queued to running, and releases it, moving the task
// back, each step one transaction. Every system does the same: check the
// cap and the key, add the slot with its owner, change the task; remove the
// slot, change the task.
const (
	capacity = 32
	held     = 16
)

// An admitter reserves and releases one slot for task i.
type admitter interface {
	reserve(ctx context.Context, i int) (id string, err error)
	release(ctx context.Context, i int, id string) error
	close() error
}

type system struct {
	name string
	open func(b *testing.B, dir string, tasks int) admitter
}

var systems = []system{
	{"slots", openSlots},
	{"mutateall", openMutateAll},
	{"sqlite", openSQLite},
}

var owner = func() claim.Owner {
	o, err := claim.Self()
	if err != nil {
		o = claim.Owner{Host: "bench", PID: os.Getpid()}
	}
	return o
}()

// ---- package slots ----

type slotsAdmitter struct {
	reg   *status.Store[slots.Registry]
	tasks []*status.Store[status.Status]
}

func openSlots(b *testing.B, dir string, tasks int) admitter {
	a := &slotsAdmitter{reg: status.NewStore[slots.Registry](filepath.Join(dir, "registry.json"))}
	a.tasks = makeTasks(b, dir, tasks)
	ctx := context.Background()
	if _, err := a.reg.Create(ctx, slots.Registry{MaxConcurrent: capacity}); err != nil {
		b.Fatal(err)
	}
	for i := range held {
		if _, err := slots.Reserve(ctx, a.reg, slots.Request{Key: fmt.Sprintf("held-%d", i), Owner: owner}); err != nil {
			b.Fatal(err)
		}
	}
	return a
}

func (a *slotsAdmitter) reserve(ctx context.Context, i int) (string, error) {
	s, err := slots.Reserve(ctx, a.reg, slots.Request{Key: fmt.Sprintf("task-%d", i), Owner: owner},
		slots.Transition(a.tasks[i], status.Running, status.Queued))
	return s.ID, err
}

func (a *slotsAdmitter) release(ctx context.Context, i int, id string) error {
	_, err := slots.Release(ctx, a.reg, id, slots.Transition(a.tasks[i], status.Queued, status.Running))
	return err
}

func (a *slotsAdmitter) close() error { return nil }

func makeTasks(b *testing.B, dir string, n int) []*status.Store[status.Status] {
	var tasks []*status.Store[status.Status]
	for i := range n {
		d := filepath.Join(dir, fmt.Sprintf("task-%d", i))
		if err := os.Mkdir(d, 0o755); err != nil {
			b.Fatal(err)
		}
		t := status.NewStore[status.Status](filepath.Join(d, "status.json"))
		if _, err := t.Create(context.Background(), status.Status{State: status.Queued}); err != nil {
			b.Fatal(err)
		}
		tasks = append(tasks, t)
	}
	return tasks
}

// ---- the same, written by hand with status.MutateAll ----

type handRegistry struct {
	Agents        []handAgent `json:"agents"`
	ActiveCount   int         `json:"active_count"`
	TotalSpawned  int         `json:"total_spawned"`
	MaxConcurrent int         `json:"max_concurrent"`
}

type handAgent struct {
	ID         string      `json:"id"`
	Key        string      `json:"key,omitempty"`
	Depth      int         `json:"depth"`
	Owner      claim.Owner `json:"owner"`
	ReservedAt time.Time   `json:"reserved_at"`
	Docs       []string    `json:"docs,omitempty"`
}

type handAdmitter struct {
	reg   *status.Store[handRegistry]
	tasks []*status.Store[status.Status]
	next  atomic.Int64
}

var errFull = errors.New("full")

func openMutateAll(b *testing.B, dir string, tasks int) admitter {
	a := &handAdmitter{reg: status.NewStore[handRegistry](filepath.Join(dir, "registry.json"))}
	a.tasks = makeTasks(b, dir, tasks)
	r := handRegistry{MaxConcurrent: capacity}
	for i := range held {
		r.Agents = append(r.Agents, handAgent{ID: fmt.Sprintf("held-%d", i), Key: fmt.Sprintf("held-%d", i), Owner: owner, ReservedAt: time.Now().UTC()})
	}
	r.ActiveCount, r.TotalSpawned = held, held
	if _, err := a.reg.Create(context.Background(), r); err != nil {
		b.Fatal(err)
	}
	return a
}

func (a *handAdmitter) reserve(ctx context.Context, i int) (string, error) {
	task := a.tasks[i]
	key := fmt.Sprintf("task-%d", i)
	id := fmt.Sprintf("%016x", a.next.Add(1))
	_, _, err := status.MutateAll2(ctx, a.reg, task, func(r *handRegistry, t *status.Status) error {
		if len(r.Agents) >= r.MaxConcurrent {
			return errFull
		}
		if slices.ContainsFunc(r.Agents, func(g handAgent) bool { return g.Key == key }) {
			return errors.New("exists")
		}
		r.Agents = append(r.Agents, handAgent{ID: id, Key: key, Owner: owner, ReservedAt: time.Now().UTC(),
			Docs: []string{key + "/status.json"}})
		r.ActiveCount = len(r.Agents)
		r.TotalSpawned++
		return t.Transition(status.Running, status.Queued)
	})
	return id, err
}

func (a *handAdmitter) release(ctx context.Context, i int, id string) error {
	task := a.tasks[i]
	_, _, err := status.MutateAll2(ctx, a.reg, task, func(r *handRegistry, t *status.Status) error {
		j := slices.IndexFunc(r.Agents, func(g handAgent) bool { return g.ID == id })
		if j < 0 {
			return errors.New("released")
		}
		r.Agents = slices.Delete(r.Agents, j, j+1)
		r.ActiveCount = len(r.Agents)
		return t.Transition(status.Queued, status.Running)
	})
	return err
}

func (a *handAdmitter) close() error { return nil }

// ---- SQLite (modernc.org/sqlite): WAL, synchronous=FULL, one
// transaction per step ----

const sqliteDSN = "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate"

type sqliteAdmitter struct {
	db   *sql.DB
	next atomic.Int64
}

func openSQLite(b *testing.B, dir string, tasks int) admitter {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "fleet.sqlite")+sqliteDSN)
	if err != nil {
		b.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE slots (id TEXT PRIMARY KEY, key TEXT UNIQUE, owner TEXT NOT NULL, reserved_at TEXT NOT NULL)`,
		`CREATE TABLE tasks (id INTEGER PRIMARY KEY, state TEXT NOT NULL)`,
	} {
		if _, err := db.Exec(q); err != nil {
			b.Fatal(err)
		}
	}
	for i := range held {
		if _, err := db.Exec(`INSERT INTO slots VALUES (?, ?, ?, ?)`, fmt.Sprintf("held-%d", i), fmt.Sprintf("held-%d", i), owner.String(), time.Now().UTC()); err != nil {
			b.Fatal(err)
		}
	}
	for i := range tasks {
		if _, err := db.Exec(`INSERT INTO tasks VALUES (?, 'queued')`, i); err != nil {
			b.Fatal(err)
		}
	}
	return &sqliteAdmitter{db: db}
}

func (a *sqliteAdmitter) reserve(ctx context.Context, i int) (string, error) {
	id := fmt.Sprintf("%016x", a.next.Add(1))
	tx, err := a.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock)
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM slots`).Scan(&n); err != nil {
		return "", err
	}
	if n >= capacity {
		return "", errFull
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO slots VALUES (?, ?, ?, ?)`, id, fmt.Sprintf("task-%d", i), owner.String(), time.Now().UTC()); err != nil {
		return "", err
	}
	if r, err := tx.ExecContext(ctx, `UPDATE tasks SET state = 'running' WHERE id = ? AND state = 'queued'`, i); err != nil {
		return "", err
	} else if n, _ := r.RowsAffected(); n != 1 {
		return "", errors.New("task not queued")
	}
	return id, tx.Commit()
}

func (a *sqliteAdmitter) release(ctx context.Context, i int, id string) error {
	tx, err := a.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM slots WHERE id = ?`, id); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE tasks SET state = 'queued' WHERE id = ? AND state = 'running'`, i); err != nil {
		return err
	}
	return tx.Commit()
}

func (a *sqliteAdmitter) close() error { return a.db.Close() }

// cycle is one reserve and one release of task i.
func cycle(ctx context.Context, a admitter, i int) error {
	id, err := a.reserve(ctx, i)
	if err != nil {
		return err
	}
	return a.release(ctx, i, id)
}

// BenchmarkReserveRelease measures each system alone, one goroutine, for
// its allocations (-benchmem); on a shared machine compare times with
// BenchmarkReserveReleaseInterleaved.
func BenchmarkReserveRelease(b *testing.B) {
	for _, s := range systems {
		b.Run(s.name, func(b *testing.B) {
			a := s.open(b, b.TempDir(), 1)
			defer a.close()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if err := cycle(ctx, a, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReserveReleaseInterleaved runs one cycle of every system per
// iteration, rotating which goes first, so that the noise of a shared
// machine and disk hits all alike. It reports each system's mean time per
// cycle ("<system>-µs") and the time of slots over the others'
// ("slots-x-<system>"; the goal against mutateall is <= 1.11, i.e. at
// least 0.9x its throughput). With goroutines > 1, each runs the cycles of
// its own task at once with the others, on the one registry.
func BenchmarkReserveReleaseInterleaved(b *testing.B) {
	for _, workers := range []int{1, 8} {
		b.Run(fmt.Sprintf("goroutines=%d", workers), func(b *testing.B) {
			admitters := make([]admitter, len(systems))
			for k, s := range systems {
				admitters[k] = s.open(b, b.TempDir(), workers)
				defer admitters[k].close()
			}
			ctx := context.Background()
			spent := make([]time.Duration, len(systems))
			for i := 0; b.Loop(); i++ {
				for k := range systems {
					j := (i + k) % len(systems)
					start := time.Now()
					var wg sync.WaitGroup
					errs := make([]error, workers)
					for w := range workers {
						wg.Go(func() { errs[w] = cycle(ctx, admitters[j], w) })
					}
					wg.Wait()
					spent[j] += time.Since(start)
					if err := errors.Join(errs...); err != nil {
						b.Fatal(err)
					}
				}
			}
			for j, s := range systems {
				b.ReportMetric(float64(spent[j].Microseconds())/float64(b.N)/float64(workers), s.name+"-µs/cycle")
				if j > 0 {
					b.ReportMetric(float64(spent[0])/float64(spent[j]), "slots-x-"+s.name)
				}
			}
		})
	}
}
