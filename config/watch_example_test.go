package config_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/agentstate/core/config"
	"github.com/agentstate/core/fs"
)

// A service reloads its configuration when the file changes: OnChange
// runs once per real change, and a failed load leaves the last good
// content in place.
func ExampleConfig_WatchFile() {
	dir, _ := os.MkdirTemp("", "etc")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "agents.yaml")
	fs.WriteAtomic(path, []byte("dispatch:\n  max_workers: 4\n"), 0o644)

	c := config.New()
	if err := c.LoadFile(path); err != nil {
		fmt.Println(err)
		return
	}
	changed := make(chan string, 1)
	cancelSub := c.OnChange(func(ch config.Change) {
		changed <- fmt.Sprint(ch.Keys, " = ", ch.New.Int("dispatch.max_workers"))
	}, "dispatch.max_workers")
	defer cancelSub()

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		c.WatchFile(ctx, path, func(err error) {
			fmt.Println("not reloaded:", err) // the watch goes on
		})
	})

	// An operator edits the file (any editor; here an atomic replace).
	fs.WriteAtomic(path, []byte("dispatch:\n  max_workers: 8\n"), 0o644)
	fmt.Println(<-changed)

	cancel()
	wg.Wait()
	// Output: [dispatch.max_workers] = 8
}
