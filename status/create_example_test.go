package status_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status"
)

func ExampleCreate() {
	dir, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "status.json")
	ctx := context.Background()

	// The first creator stores the document...
	st, err := status.Create(ctx, path, status.Status{State: status.Queued, Task: "fix-42"})
	fmt.Println(st.State, err)

	// ...a second one is told, and changes nothing.
	_, err = status.Create(ctx, path, status.Status{State: status.Running, Task: "fix-42"})
	fmt.Println(errors.Is(err, os.ErrExist))

	st, _ = status.Load(ctx, path)
	fmt.Println(st.State)
	// Output:
	// queued <nil>
	// true
	// queued
}

// reviewStatus is another program's own view of the workspace document. Its
// Stamp method makes every Store of it keep updated_at current, as a
// Store[status.Status] does.
type reviewStatus struct {
	Status    string    `json:"status"`
	Note      string    `json:"note,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

func (r *reviewStatus) Stamp(now time.Time) { r.UpdatedAt = now }

func ExampleStamper() {
	dir, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "status.json")
	ctx := context.Background()
	// A document without updated_at, written by some other program.
	if err := fs.WriteAtomic(path, []byte(`{"status":"completed","runs":2}`), 0o644); err != nil {
		fmt.Println(err)
		return
	}

	r, err := status.NewStore[reviewStatus](path).Mutate(ctx, func(r *reviewStatus) error {
		r.Note = "reviewed"
		return nil
	})
	fmt.Println(r.Note, err, r.UpdatedAt.IsZero())

	// Fields reviewStatus does not declare (runs) are kept.
	st, _ := status.Load(ctx, path)
	fmt.Println(st.State, st.Runs, st.Note, st.UpdatedAt.Equal(r.UpdatedAt))
	// Output:
	// reviewed <nil> false
	// completed 2 reviewed true
}
