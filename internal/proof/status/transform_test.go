package status_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentstate/core/status"
	"pgregory.net/rapid"
)

// TestTransformProperties drives status.Transform with random functions
// (a new content, the same content, nil, an error, a panic, and another
// program replacing the file in between) and compares the file with a
// model after every step: fn sees exactly the current bytes, the file
// holds what the last successful call returned, and a call that fails or
// changes nothing leaves the file's bytes and inode as they were and no
// temporary file behind.
func TestTransformProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		dir, err := os.MkdirTemp("", "transform")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "doc.toml")
		var model []byte // nil: no file
		contents := rapid.SliceOfN(rapid.Byte(), 0, 64)
		errFn := errors.New("fn refuses")
		for range rapid.IntRange(1, 30).Draw(t, "steps") {
			action := rapid.SampledFrom([]string{"set", "same", "nil", "error", "panic", "foreign"}).Draw(t, "action")
			if action == "foreign" {
				// another program replaces the file (any bytes: Transform
				// judges none of them)
				model = contents.Draw(t, "foreign")
				if err := os.WriteFile(path, model, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			before, _ := os.Stat(path)
			next := contents.Draw(t, "content")
			var seen []byte
			fn := func(cur []byte) ([]byte, error) {
				seen = bytes.Clone(cur)
				if cur == nil {
					seen = nil
				}
				switch action {
				case "set":
					return next, nil
				case "same":
					return bytes.Clone(cur), nil
				case "nil":
					return nil, nil
				case "error":
					return nil, errFn
				}
				panic("fn panics")
			}
			var callErr error
			panicked := func() (p bool) {
				defer func() { p = recover() != nil }()
				callErr = status.Transform(context.Background(), path, fn)
				return false
			}()
			if (seen == nil) != (model == nil) || !bytes.Equal(seen, model) {
				t.Fatalf("%s: fn saw %q, the file held %q", action, seen, model)
			}
			switch {
			case action == "panic" && !panicked:
				t.Fatalf("fn's panic did not reach the caller")
			case action == "error" && !errors.Is(callErr, errFn):
				t.Fatalf("error: Transform = %v, want fn's error", callErr)
			case action != "error" && action != "panic" && callErr != nil:
				t.Fatalf("%s: Transform = %v", action, callErr)
			}
			changed := false
			switch action {
			case "set":
				changed = model == nil || !bytes.Equal(next, model)
				if model != nil || next != nil {
					model = bytes.Clone(next)
					if model == nil {
						model = []byte{}
					}
				}
			case "nil":
				if model != nil {
					changed = len(model) > 0
					model = []byte{}
				}
			}
			got, err := os.ReadFile(path)
			switch {
			case model == nil && !errors.Is(err, os.ErrNotExist):
				t.Fatalf("%s: a file %q exists, want none (%v)", action, got, err)
			case model != nil && (err != nil || !bytes.Equal(got, model)):
				t.Fatalf("%s: file = %q (%v), want %q", action, got, err, model)
			}
			if after, err := os.Stat(path); !changed && before != nil && (err != nil || !os.SameFile(before, after)) {
				t.Fatalf("%s: the file was replaced, though nothing changed", action)
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if n := e.Name(); n != "doc.toml" && n != "doc.toml"+status.LockSuffix {
					t.Fatalf("%s: left behind: %s", action, n)
				}
			}
		}
	})
}
