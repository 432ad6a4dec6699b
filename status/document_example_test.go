package status_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentstate/core/status"
)

// A program that does not know every member of a document changes one and
// keeps the others exactly; LoadExisting tells it when there is no document.
func ExampleDocument() {
	dir, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "status.json")
	store := status.NewStore[status.Document](path)
	ctx := context.Background()

	_, err := store.LoadExisting(ctx)
	fmt.Println(errors.Is(err, os.ErrNotExist))

	os.WriteFile(path, []byte(`{"status": "queued", "budget": 12345678901234567890.5}`), 0o644)
	doc, err := store.Mutate(ctx, func(d *status.Document) error {
		var runs int
		if err := d.Decode("runs", &runs); err != nil {
			return err
		}
		return d.Encode("runs", runs+1)
	})
	budget, _ := doc.Get("budget")
	fmt.Println(string(budget), err)
	for name := range doc.All() {
		fmt.Print(name, " ")
	}
	fmt.Println()
	// Output:
	// true
	// 12345678901234567890.5 <nil>
	// status updated_at runs budget
}
