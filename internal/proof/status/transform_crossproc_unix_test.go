//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package status_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status"
)

// A YAML document that several processes change with status.Transform and
// the caller's own codec, as a CLI keeps its configuration: runs counts the
// changes, keep is a part no writer touches and every writer must keep.
const yamlSeed = "runs: 0\nkeep:\n    note: do not lose me\n    list: [1, 2.5, three]\n"

type yamlDoc struct {
	Runs int            `yaml:"runs"`
	Keep map[string]any `yaml:"keep"`
}

func yamlIncrement(cur []byte) ([]byte, error) {
	var d yamlDoc
	if err := yaml.Unmarshal(cur, &d); err != nil {
		return nil, err
	}
	if d.Keep == nil {
		return nil, errors.New("not the seeded document")
	}
	d.Runs++
	return yaml.Marshal(&d)
}

// yamlBareIncrement is the round trip Transform replaces: read, decode,
// change, encode, replace atomically, with no lock.
func yamlBareIncrement(path string) error {
	cur, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := yamlIncrement(cur)
	if err != nil {
		return err
	}
	return fs.WriteAtomic(path, out, 0o644)
}

var _ = cpRegister("yamlcounter", func(a cpArgs, w *cpReporter) error {
	if err := cpGate(w); err != nil {
		return err
	}
	var acked atomic.Int64
	var firstErr atomic.Pointer[error]
	var wg sync.WaitGroup
	for range a.Goroutines {
		wg.Go(func() {
			for range a.Iterations {
				var err error
				if a.Writer == "transform" {
					err = status.Transform(context.Background(), a.Path, yamlIncrement)
				} else {
					err = yamlBareIncrement(a.Path)
				}
				if err != nil {
					firstErr.CompareAndSwap(nil, &err)
					return
				}
				acked.Add(1)
			}
		})
	}
	wg.Wait()
	if p := firstErr.Load(); p != nil {
		return *p
	}
	return w.json("result", cpCounterResult{Acked: int(acked.Load())})
})

// runYAMLCounter runs procs children that increment the seeded YAML
// document with writer, all released at once, and returns the count
// acknowledged and the document as they left it.
func runYAMLCounter(t *testing.T, procs, goroutines, iters int, writer string) (acked int, final yamlDoc) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(yamlSeed), 0o644); err != nil {
		t.Fatal(err)
	}
	var children []*cpChild
	for i := range procs {
		children = append(children, cpStartGo(t, fmt.Sprintf("child %d (%s)", i, writer), "yamlcounter",
			cpArgs{Path: path, Writer: writer, Goroutines: goroutines, Iterations: iters}))
	}
	cpRelease(t, children)
	for _, c := range children {
		var res cpCounterResult
		c.expectJSON(t, "result", &res)
		c.mustExit(t)
		acked += res.Acked
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &final); err != nil {
		t.Fatalf("the document no longer decodes: %v\n%s", err, data)
	}
	return acked, final
}

// TestCrossprocTransformYAML: processes that change one YAML document with
// Transform lose no change, and keep what none of them touches.
func TestCrossprocTransformYAML(t *testing.T) {
	procs, goroutines, iters := 6, 4, 25
	acked, final := runYAMLCounter(t, procs, goroutines, iters, "transform")
	want := procs * goroutines * iters
	t.Logf("%d processes × %d goroutines × %d Transforms: runs %d, want %d", procs, goroutines, iters, final.Runs, want)
	if acked != want || final.Runs != want {
		t.Errorf("runs = %d (acknowledged %d), want %d: %d changes lost", final.Runs, acked, want, want-final.Runs)
	}
	if final.Keep["note"] != "do not lose me" || len(final.Keep) != 2 {
		t.Errorf("keep = %v, want the seed's", final.Keep)
	}
}

// CONTROL: the same round trip without the lock, in the same harness,
// loses changes.
func TestCrossprocTransformYAMLControlBare(t *testing.T) {
	procs, goroutines, iters := 6, 4, 10
	acked, final := runYAMLCounter(t, procs, goroutines, iters, "bare")
	t.Logf("bare YAML round trip: runs %d of %d", final.Runs, acked)
	if final.Runs >= acked {
		t.Fatalf("the bare round trip lost no change (runs %d of %d): the harness cannot see a lost update", final.Runs, acked)
	}
}
