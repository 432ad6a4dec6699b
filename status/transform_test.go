package status_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status"
)

// ExampleTransform changes a document that is not JSON (here a list of
// "name = value" lines) with the caller's own codec, under the lock.
func ExampleTransform() {
	dir, _ := os.MkdirTemp("", "config")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "agent.conf")
	_ = os.WriteFile(path, []byte("name = fix-42\nruns = 1\n"), 0o644)

	err := status.Transform(context.Background(), path, func(cur []byte) ([]byte, error) {
		conf, err := parseConf(cur)
		if err != nil {
			return nil, err // a document it cannot read is left as it is
		}
		n, _ := strconv.Atoi(conf["runs"])
		conf["runs"] = strconv.Itoa(n + 1)
		return formatConf(conf), nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	data, _ := os.ReadFile(path)
	fmt.Print(string(data))
	// Output:
	// name = fix-42
	// runs = 2
}

// parseConf decodes "name = value" lines.
func parseConf(data []byte) (map[string]string, error) {
	conf := make(map[string]string)
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if line == "" {
			continue
		}
		name, value, ok := strings.Cut(line, " = ")
		if !ok {
			return nil, fmt.Errorf("line %d: no ' = ' in %q", i+1, line)
		}
		conf[name] = value
	}
	return conf, nil
}

func formatConf(conf map[string]string) []byte {
	var b bytes.Buffer
	for _, name := range []string{"name", "runs"} {
		if v, ok := conf[name]; ok {
			fmt.Fprintf(&b, "%s = %s\n", name, v)
		}
	}
	return b.Bytes()
}

// counterDoc is a document of one line, "runs: N".
func counterDoc(n int) []byte { return []byte("runs: " + strconv.Itoa(n) + "\n") }

func parseCounter(data []byte) (int, error) {
	if data == nil {
		return 0, nil
	}
	s, ok := strings.CutPrefix(strings.TrimSuffix(string(data), "\n"), "runs: ")
	if !ok {
		return 0, fmt.Errorf("not a counter: %q", data)
	}
	return strconv.Atoi(s)
}

func incrementCounter(cur []byte) ([]byte, error) {
	n, err := parseCounter(cur)
	if err != nil {
		return nil, err
	}
	return counterDoc(n + 1), nil
}

// bareIncrement is the read-modify-write Transform replaces: read, change,
// replace atomically, with no lock.
func bareIncrement(path string) error {
	cur, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	out, err := incrementCounter(cur)
	if err != nil {
		return err
	}
	runtime.Gosched() // what any work between the read and the write allows
	return fs.WriteAtomic(path, out, 0o644)
}

// countIncrements runs goroutines × iters increments of the counter at path
// with inc and returns the final count.
func countIncrements(t *testing.T, path string, goroutines, iters int, inc func() error) int {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for range goroutines {
		wg.Go(func() {
			for range iters {
				if err := inc(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n, err := parseCounter(data)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestTransformLosesNoUpdate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "counter.yaml")
	ctx := context.Background()
	got := countIncrements(t, path, 16, 25, func() error { return status.Transform(ctx, path, incrementCounter) })
	if got != 16*25 {
		t.Errorf("after %d Transforms the counter is %d", 16*25, got)
	}
}

// CONTROL: the bare read-modify-write in the same harness loses updates.
func TestTransformControlBareLosesUpdates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "counter.yaml")
	got := countIncrements(t, path, 16, 25, func() error { return bareIncrement(path) })
	t.Logf("bare read-modify-write: %d of %d increments kept", got, 16*25)
	if got >= 16*25 {
		t.Fatalf("the bare read-modify-write lost no update (%d): the harness cannot see a lost update", got)
	}
}

// TestTransformWritesNothing: fn's error, a panic, content equal to the
// current one, and nil for a missing document leave the file (its inode
// included) as it was, and no temporary file behind.
func TestTransformWritesNothing(t *testing.T) {
	ctx := context.Background()
	errCorrupt := errors.New("cannot decode")
	cases := []struct {
		name    string
		initial []byte // nil: no file
		fn      func(cur []byte) ([]byte, error)
		wantErr error
		panics  bool
	}{
		{"error", []byte("runs: x\n"), func(cur []byte) ([]byte, error) { return nil, errCorrupt }, errCorrupt, false},
		{"decode error", []byte("not a counter\n"), incrementCounter, nil, false},
		{"panic", counterDoc(1), func([]byte) ([]byte, error) { panic("boom") }, nil, true},
		{"unchanged", counterDoc(1), func(cur []byte) ([]byte, error) { return bytes.Clone(cur), nil }, nil, false},
		{"nil when missing", nil, func([]byte) ([]byte, error) { return nil, nil }, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "doc.yaml")
			var before os.FileInfo
			if c.initial != nil {
				if err := os.WriteFile(path, c.initial, 0o644); err != nil {
					t.Fatal(err)
				}
				before, _ = os.Stat(path)
			}
			var err error
			func() {
				defer func() {
					if r := recover(); (r != nil) != c.panics {
						t.Errorf("panic %v, want a panic: %v", r, c.panics)
					}
				}()
				err = status.Transform(ctx, path, c.fn)
			}()
			switch {
			case c.wantErr != nil && !errors.Is(err, c.wantErr):
				t.Errorf("Transform = %v, want fn's error", err)
			case c.name == "decode error" && err == nil:
				t.Error("Transform of a document fn cannot decode returned nil")
			case c.wantErr == nil && c.name != "decode error" && err != nil:
				t.Errorf("Transform = %v", err)
			}
			after, statErr := os.Stat(path)
			switch {
			case c.initial == nil && statErr == nil:
				t.Errorf("a document was created")
			case c.initial != nil && (statErr != nil || !os.SameFile(before, after)):
				t.Errorf("the document was replaced (%v)", statErr)
			}
			if c.initial != nil {
				if data, _ := os.ReadFile(path); !bytes.Equal(data, c.initial) {
					t.Errorf("document = %q, want %q", data, c.initial)
				}
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if n := e.Name(); n != "doc.yaml" && n != "doc.yaml"+status.LockSuffix {
					t.Errorf("left behind: %s", n)
				}
			}
		})
	}
}

func TestTransformNilEmptiesAnExistingDocument(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.yaml")
	if err := os.WriteFile(path, counterDoc(3), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := status.Transform(context.Background(), path, func([]byte) ([]byte, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(path); err != nil || len(data) != 0 {
		t.Errorf("document = %q, %v; want an empty file", data, err)
	}
}

func TestTransformAll(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	ctx := context.Background()
	move := func(cur [][]byte) ([][]byte, error) {
		from, err := parseCounter(cur[0])
		if err != nil {
			return nil, err
		}
		to, err := parseCounter(cur[1])
		if err != nil {
			return nil, err
		}
		return [][]byte{counterDoc(from - 1), counterDoc(to + 1)}, nil
	}
	if err := os.WriteFile(a, counterDoc(5), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := status.TransformAll(ctx, []string{a, b}, move); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string][]byte{a: counterDoc(4), b: counterDoc(1)} {
		if data, _ := os.ReadFile(path); !bytes.Equal(data, want) {
			t.Errorf("%s = %q, want %q", filepath.Base(path), data, want)
		}
	}
	// A document fn cannot read: nothing is written, in either.
	if err := os.WriteFile(b, []byte("torn"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := status.TransformAll(ctx, []string{a, b}, move); err == nil {
		t.Error("TransformAll over a document fn cannot read returned nil")
	}
	if data, _ := os.ReadFile(a); !bytes.Equal(data, counterDoc(4)) {
		t.Errorf("a = %q after a failed transaction, want it unchanged", data)
	}
	// One result for two documents is refused.
	err := status.TransformAll(ctx, []string{a, b}, func(cur [][]byte) ([][]byte, error) { return cur[:1], nil })
	if err == nil {
		t.Error("TransformAll accepted one result for two documents")
	}
}

func TestTransformBadArguments(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.yaml")
	if err := status.Transform(nil, path, incrementCounter); err == nil {
		t.Error("Transform with a nil context returned nil")
	}
	if err := status.Transform(context.Background(), path, nil); err == nil {
		t.Error("Transform with a nil function returned nil")
	}
	if err := status.TransformAll(context.Background(), []string{path}, nil); err == nil {
		t.Error("TransformAll with a nil function returned nil")
	}
}
