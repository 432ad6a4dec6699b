package status_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentstate/core/status"
)

// A program changes one member of a document whose other members it does
// not know, and keeps them exactly; LoadExisting tells it when there is no
// document.
func ExampleDocument() {
	dir, _ := os.MkdirTemp("", "registry")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "registry.json")
	store := status.NewStore[status.Document](path)
	ctx := context.Background()

	_, err := store.LoadExisting(ctx)
	fmt.Println(errors.Is(err, os.ErrNotExist))

	os.WriteFile(path, []byte(`{"max_concurrent": 4, "runs": "n/a", "budget": 12345678901234567890.5}`), 0o644)
	doc, err := store.Mutate(ctx, func(d *status.Document) error {
		var active int
		if err := d.Decode("active_count", &active); err != nil {
			return err
		}
		return d.Encode("active_count", active+1)
	})
	budget, _ := doc.Get("budget")
	fmt.Println(string(budget), err)
	for name, value := range doc.All() {
		fmt.Print(name, "=", string(value), " ")
	}
	fmt.Println()
	// Output:
	// true
	// 12345678901234567890.5 <nil>
	// active_count=1 budget=12345678901234567890.5 max_concurrent=4 runs="n/a"
}

// A status document changed as raw members: Status's fields must hold
// their types, come first, and updated_at is stamped.
func ExampleStatusDocument() {
	dir, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "status.json")
	store := status.NewStore[status.StatusDocument](path)
	ctx := context.Background()

	os.WriteFile(path, []byte(`{"status": "queued", "reviewer": "ana"}`), 0o644)
	doc, err := store.Mutate(ctx, func(d *status.StatusDocument) error {
		var runs int
		if err := d.Decode("runs", &runs); err != nil {
			return err
		}
		return d.Encode("runs", runs+1)
	})
	for name := range doc.All() {
		fmt.Print(name, " ")
	}
	fmt.Println(err)
	_, err = store.Mutate(ctx, func(d *status.StatusDocument) error { return d.Encode("runs", "n/a") })
	fmt.Println(err)
	// Output:
	// status updated_at runs reviewer <nil>
	// member "runs": "n/a" does not decode into its Status field, a Go int
}
