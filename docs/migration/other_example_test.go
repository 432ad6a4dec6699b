package migration_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/agentstate/core/config"
	"github.com/agentstate/core/core"
	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/logger"
)

// Pattern 4: an in-place write (os.WriteFile, the old Fs.Write) becomes
// fs.WriteAtomic: readers see the old file or the new one, never an empty
// or half-written one, and the file keeps its permission bits.
func Example_writeAtomic() {
	dir, err := os.MkdirTemp("", "migration")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "credentials.json")
	if err := fs.WriteAtomic(path, []byte(`{"token":"old"}`), 0o600); err != nil {
		log.Fatal(err)
	}

	// A host path:
	if err := fs.WriteAtomic(path, []byte(`{"token":"new"}`), 0o644); err != nil {
		log.Fatal(err)
	}
	// Or through a sandboxed Fs (names relative to its root):
	fsys, err := fs.New(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer fsys.Close()
	if err := fsys.WriteAtomic("credentials.json", []byte(`{"token":"newer"}`), 0o644); err != nil {
		log.Fatal(err)
	}

	data, _ := fsys.ReadFile("credentials.json")
	info, _ := fsys.Stat("credentials.json")
	fmt.Println(string(data), info.Mode()) // a 0600 secret stays 0600
	// Output:
	// {"token":"newer"} -rw-------
}

// Pattern 5: mutating a map returned by a config getter changed the stored
// configuration for every goroutine. Getters now return copies; change the
// configuration with Set.
func Example_configCopy() {
	c := config.New()
	if err := c.Set("limits", map[string]any{"agents": 4, "queue": 100}); err != nil {
		log.Fatal(err)
	}

	s := c.Snapshot() // reads go through an immutable snapshot
	v, _ := s.Get("limits")
	m := v.(map[string]any)
	m["agents"] = 99 // changes this caller's copy only

	fmt.Println(s.Int("limits.agents"))

	// To change the configuration, Set it: readers see the whole change
	// or none of it.
	if err := c.Set("limits.agents", 8); err != nil {
		log.Fatal(err)
	}
	s = c.Snapshot()
	fmt.Println(s.Int("limits.agents"), s.Int("limits.queue"))
	// Output:
	// 4
	// 8 100
}

// Pattern 6: code that checked Default() for nil, or crashed because a
// SetDefault(nil) made it nil, uses logger.Default, which is never nil.
func Example_loggerDefault() {
	fmt.Println(logger.Default() != nil)

	_, err := logger.SetDefault(nil)
	fmt.Println(errors.Is(err, logger.ErrNilLogger))

	// Installing a logger returns a restore function.
	h := slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // keep the output deterministic
			}
			return a
		},
	})
	restore, err := logger.SetDefault(slog.New(h))
	if err != nil {
		log.Fatal(err)
	}
	defer restore()
	logger.Info("agent started", "task", "fix-42")
	// Output:
	// true
	// true
	// level=INFO msg="agent started" task=fix-42
}

// Pattern 7: c.Lock handed out two different mutexes to two goroutines
// that asked for a new name at the same time. core's Lock creates it with an
// atomic get-or-create: every caller gets the same mutex.
func Example_coreLock() {
	root, err := os.MkdirTemp("", "migration")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	c, err := core.New(root)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Shutdown(context.Background())

	const name = "workspace/acme/api/fix-42"
	var wg sync.WaitGroup
	counter := 0
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mu := c.Lock(name) // the same *sync.Mutex for every goroutine
			mu.Lock()
			defer mu.Unlock()
			counter++
		}()
	}
	wg.Wait()
	fmt.Println(counter, c.Lock(name) == c.Lock(name))
	// Output:
	// 50 true
}

// Background loops: a fire-and-forget `go loop()` becomes a task of the
// Core, stopped and waited for by Shutdown.
func Example_coreGo() {
	root, err := os.MkdirTemp("", "migration")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	c, err := core.New(root)
	if err != nil {
		log.Fatal(err)
	}

	started := make(chan struct{})
	if err := c.Go("queue-drain", func(ctx context.Context) {
		close(started)
		<-ctx.Done() // a real loop selects on ctx.Done() next to its work
	}); err != nil {
		log.Fatal(err)
	}
	<-started
	fmt.Println(c.Running())

	// Shutdown cancels every task's context and waits for all of them.
	if err := c.Shutdown(context.Background()); err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.Running())
	// Output:
	// [queue-drain]
	// []
}
