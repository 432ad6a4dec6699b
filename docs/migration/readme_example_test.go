package migration_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentstate/core/config"
	"github.com/agentstate/core/core"
	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/logger"
	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/claim"
	"github.com/agentstate/core/status/slots"
)

// The Examples named Example_readme* are the Go blocks of README.md, line
// for line (TestReadmeShowsExamples).

func Example_readmeIntro() {
	dir, err := os.MkdirTemp("", "readme")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	path := filepath.Join(dir, "status.json")

	// Eight workers (goroutines here; processes work the same) each count a
	// run: every read-check-write holds the file's lock, so none is lost.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, err := status.Mutate(ctx, path, func(s *status.Status) error {
				s.Runs++
				return nil // an error here would write nothing
			})
			if err != nil {
				log.Fatal(err)
			}
		})
	}
	wg.Wait()
	st, err := status.Load(ctx, path) // no lock; never a torn file
	fmt.Println(st.Runs, err)
	// Output:
	// 8 <nil>
}

func Example_readmeFs() {
	dir, err := os.MkdirTemp("", "readme")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	data := []byte(`{"status": "running"}`)

	// A host path, what status and config use: readers see the old or the new
	// file, never a torn one; nil means the new content survives a power loss.
	err = fs.WriteAtomic(filepath.Join(dir, "status.json"), data, 0o644)
	switch {
	case errors.Is(err, fs.ErrDurabilityUnknown): // replaced, but the directory sync failed
	case err != nil:
		log.Fatal(err) // not written: the old file is intact, no temp file left
	}

	// A sandbox: names are relative, slash-separated and cannot leave the root.
	ws, err := fs.New(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer ws.Close()
	if err := ws.MkdirAll("acme/api/42", 0o755); err != nil { // created directories are fsynced
		log.Fatal(err)
	}
	if err := ws.WriteAtomic("acme/api/42/status.json", data, 0o600); err != nil {
		log.Fatal(err)
	}
	logs := strings.NewReader("step 1\nstep 2\n")
	n, err := ws.WriteAtomicFrom(context.Background(), "acme/api/42/out.log", logs, 0o644) // streamed
	fmt.Println(n, err)
	err = ws.WriteAtomic("../etc/passwd", data, 0o644)
	fmt.Println(errors.Is(err, fs.ErrOutsideRoot))
	removed, err := ws.SweepTemp("acme/api/42", time.Hour) // temp files a crash left behind
	fmt.Println(removed, err)
	// Output:
	// 14 <nil>
	// true
	// [] <nil>
}

// Registry is a program's own document type, as README.md's status example
// uses it: a count and its limit. (A registry of agents is slots.Registry.)
type Registry struct {
	ActiveCount   int `json:"active_count"`
	MaxConcurrent int `json:"max_concurrent"`
}

func Example_readmeStatus() {
	root, err := os.MkdirTemp("", "readme")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	ctx := context.Background()
	path := filepath.Join(root, "42", "status.json")
	if err := os.Mkdir(filepath.Dir(path), 0o755); err != nil {
		log.Fatal(err)
	}
	if _, err := status.Create(ctx, path, status.Status{State: status.Queued}); err != nil {
		log.Fatal(err)
	}

	// "Read status.json, change a field, write it back", with the check and the
	// change under the document's lock, across goroutines and processes.
	st, err := status.Mutate(ctx, path, func(s *status.Status) error {
		if err := s.Transition(status.Running, status.Queued); err != nil {
			return err // errors.Is(err, status.ErrConflict): e.g. already completed; nothing written
		}
		s.PID, s.Runs = os.Getpid(), s.Runs+1
		return nil
	})
	fmt.Println(st.State, st.Runs, err)

	cur, err := status.Load(ctx, path) // no lock; always a whole document
	fmt.Println(cur.State, err)

	// Any JSON document; fields the type does not declare are kept byte for byte.
	agents := status.NewStore[Registry](filepath.Join(root, "agents.json"))
	if _, err := agents.Create(ctx, Registry{ActiveCount: 1, MaxConcurrent: 4}); err != nil {
		log.Fatal(err)
	}
	// Several documents change all or nothing, even across a crash: the task
	// completes and leaves the registry's count in one step.
	task := status.NewStore[status.Status](path)
	reg, _, err := status.MutateAll2(ctx, agents, task, func(r *Registry, t *status.Status) error {
		r.ActiveCount--
		return t.Transition(status.Completed, status.Running) // an error: nothing written
	})
	fmt.Println(reg.ActiveCount, err)

	// Every status.json under root, whatever the layout; status.WatchDir yields
	// the same, then every committed change.
	for e, err := range status.List(root) {
		if err != nil {
			fmt.Println(err) // a corrupt document (path and byte offset); the walk goes on
			continue
		}
		rel, _ := filepath.Rel(root, e.Path)
		fmt.Println(rel, e.Value.State)
	}
	// Output:
	// running 1 <nil>
	// running <nil>
	// 0 <nil>
	// 42/status.json completed
}

func Example_readmeConfig() {
	dir, err := os.MkdirTemp("", "readme")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "agents.yaml")
	if err := os.WriteFile(file, []byte("dispatch:\n  max_workers: 4\n"), 0o644); err != nil {
		log.Fatal(err)
	}

	c := config.New()
	if err := c.LoadFile(file); err != nil { // YAML or JSON; integers stay int64
		log.Fatal(err)
	}
	// AGENTS_DISPATCH__MAX_WORKERS overrides dispatch.max_workers, typed like it.
	if err := c.FromEnv("AGENTS", []string{"AGENTS_DISPATCH__MAX_WORKERS=8"}); err != nil {
		log.Fatal(err)
	}
	type Dispatch struct {
		MaxWorkers int `json:"max_workers"`
	}
	d, err := config.Decode[Dispatch](c.Snapshot(), "dispatch") // a copy; errors name the key
	fmt.Println(d.MaxWorkers, err)

	cancel := c.OnChange(func(ch config.Change) { // once per real change, no lock held
		fmt.Println("changed:", ch.Keys, ch.New.Int("db.port"))
	}, "db")
	defer cancel()
	if err := c.Set("db", map[string]any{"host": "localhost", "port": 5432}); err != nil {
		log.Fatal(err)
	}
	s := c.Snapshot()                                  // reads: lock-free, no allocation
	fmt.Println(s.String("db.host"), s.Int("db.port")) // one version, never mixed

	m, _ := s.Get("db") // a deep copy: change it freely
	m.(map[string]any)["port"] = 1
	fmt.Println(s.Int("db.port"))
	fmt.Println(c.Set("ratio", math.NaN()) != nil) // refused: Save could not write it
	// Output:
	// 8 <nil>
	// changed: [db] 5432
	// localhost 5432
	// 5432
	// true
}

func Example_readmeLogger() {
	fmt.Println(logger.Default() != nil) // anywhere, before or after setup

	// A logger whose calls would panic is refused: nil, the zero slog.Logger,
	// a nil handler such as slog.New((*slog.TextHandler)(nil)).
	_, err := logger.SetDefault(nil)
	fmt.Println(errors.Is(err, logger.ErrNilLogger)) // and nothing changed

	restore, err := logger.SetDefault(slog.New(slog.NewJSONHandler(os.Stderr, nil)))
	if err != nil {
		log.Fatal(err)
	}
	defer restore() // puts the previous logger back only if ours is still current
	// Output:
	// true
	// true
}

func Example_readmeCore() {
	root, err := os.MkdirTemp("", "readme")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	ctx := context.Background()

	c, err := core.New(root) // logger.Default() and config.New() unless given
	if err != nil {
		log.Fatal(err)
	}
	drained := make(chan struct{})
	err = c.Go("queue-drain", func(ctx context.Context) { close(drained) }) // tracked
	fmt.Println(err)

	if err := c.Fs().MkdirAll("acme/api/fix-42", 0o755); err != nil { // the root as an fs.Fs
		log.Fatal(err)
	}
	ws, err := c.Status("acme", "api", "fix-42") // refuses "..", separators, links out of the root
	if err != nil {
		log.Fatal(err)
	}
	mu := c.Lock("acme/api/fix-42") // one *sync.Mutex per name, for this process's goroutines
	mu.Lock()
	st, err := ws.Mutate(ctx, status.Transition(status.Queued)) // locked across processes too
	mu.Unlock()
	fmt.Println(st.State, err)

	<-drained
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	fmt.Println(c.Shutdown(sctx)) // cancels tasks, waits, names those that did not stop
	// Output:
	// <nil>
	// queued <nil>
	// <nil>
}

// agentProgram is the command of the agent of slot id in registry reg. In
// README.md it is the Python agent shown there; in this example, a
// process that runs until stop ends it.
func agentProgram(reg, id string) *exec.Cmd {
	return exec.Command("sleep", "600")
}

// stop ends an agent of the example and waits for it.
func stop(agent *exec.Cmd) {
	agent.Process.Kill()
	agent.Wait()
}

func Example_readmeFleet() {
	dir, err := os.MkdirTemp("", "fleet")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	// The registry: one JSON document, with the fleet's policy.
	reg := status.NewStore[slots.Registry](filepath.Join(dir, "AGENT_REGISTRY.json"))
	if _, err := reg.Create(ctx, slots.Registry{MaxConcurrent: 2}); err != nil {
		log.Fatal(err)
	}
	me, err := claim.Self() // the dispatcher owns a slot until its agent runs
	if err != nil {
		log.Fatal(err)
	}
	for _, task := range []string{"fix-42", "fix-43", "fix-44", "fix-42"} {
		s, err := slots.Reserve(ctx, reg, slots.Request{Key: task, Owner: me})
		if err != nil {
			fmt.Println(task, "not started: full", errors.Is(err, slots.ErrFull), "running", errors.Is(err, slots.ErrExists))
			continue
		}
		agent := agentProgram(reg.Name(), s.ID) // python3 agent.py AGENT_REGISTRY.json SLOT
		if err := agent.Start(); err != nil {
			slots.Abort(ctx, reg, s.ID)
			continue
		}
		defer stop(agent) // here; a dispatcher waits for its agents
		to, err := claim.Of(agent.Process.Pid)
		if err == nil {
			_, err = slots.HandOver(ctx, reg, s.ID, to) // the slot is the agent's now
		}
		fmt.Println(task, "started", err)
	}
	// Output:
	// fix-42 started <nil>
	// fix-43 started <nil>
	// fix-44 not started: full true running false
	// fix-42 not started: full false running true
}
