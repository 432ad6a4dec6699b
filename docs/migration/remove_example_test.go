package migration_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/agentstate/core/status"
)

// Deleting a workspace: mark the document final, Remove it under its lock,
// then remove the directory. A late writer that comes after the directory
// is gone gets an error instead of recreating the workspace.
func Example_deleteWorkspace() {
	path, cleanup := newWorkspace()
	defer cleanup()
	ctx := context.Background()
	if _, err := status.Mutate(ctx, path, status.Transition(status.Running)); err != nil {
		log.Fatal(err)
	}

	// 1. Final state: writers that use Transition stop here (ErrConflict).
	if _, err := status.Mutate(ctx, path, status.Transition(status.Completed, status.Running)); err != nil {
		log.Fatal(err)
	}
	// 2. Remove the document and its lock file, under the lock.
	if err := status.Remove(ctx, path); err != nil && !errors.Is(err, os.ErrNotExist) {
		log.Fatal(err)
	}
	// 3. Remove the directory.
	if err := os.RemoveAll(filepath.Dir(path)); err != nil {
		log.Fatal(err)
	}

	_, err := status.Mutate(ctx, path, status.Transition(status.Running))
	fmt.Println("late writer, not found:", errors.Is(err, os.ErrNotExist))
	_, err = os.Stat(filepath.Dir(path))
	fmt.Println("workspace gone:", errors.Is(err, os.ErrNotExist))
	// Output:
	// late writer, not found: true
	// workspace gone: true
}
