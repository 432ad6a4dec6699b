package watch_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status"
)

// Tasks at several depths; "a" holds two, so removing it removes both.
var tasks = []string{"a/t1", "a/t2", "b/c/t3", "t4"}

// machine is the model: for each task's document, what a reader sees
// ("runs=N" or "corrupt"); absent when there is no document.
type machine struct {
	root, outside string
	model         map[string]string
	committed     map[string]map[string]bool // path -> every state it had
	view          map[string]string          // what the watch has reported
	next          func() (status.Entry[status.Status], error, bool)
	stop          func()
	yields        int
}

func (m *machine) path(task string) string {
	return filepath.Join(m.root, task, status.StatusFile)
}

func (m *machine) commit(t *rapid.T, task, state, content string) {
	p := m.path(task)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := fs.WriteAtomic(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	m.set(p, state)
}

func (m *machine) set(p, state string) {
	m.model[p] = state
	if m.committed[p] == nil {
		m.committed[p] = map[string]bool{}
	}
	m.committed[p][state] = true
}

func (m *machine) write(t *rapid.T) {
	task := rapid.SampledFrom(tasks).Draw(t, "task")
	n := rapid.IntRange(0, 3).Draw(t, "runs") // small: the same bytes come back often
	m.commit(t, task, fmt.Sprintf("runs=%d", n), fmt.Sprintf(`{"runs": %d}`, n))
}

func (m *machine) corrupt(t *rapid.T) {
	task := rapid.SampledFrom(tasks).Draw(t, "task")
	n := rapid.IntRange(0, 1).Draw(t, "garbage")
	m.commit(t, task, "corrupt", fmt.Sprintf(`{"runs": %d`, n))
}

func (m *machine) remove(t *rapid.T) {
	task := rapid.SampledFrom(tasks).Draw(t, "task")
	p := m.path(task)
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	delete(m.model, p)
}

// removeTree removes a top-level directory and every task under it.
func (m *machine) removeTree(t *rapid.T) {
	top := rapid.SampledFrom([]string{"a", "b", "t4"}).Draw(t, "top")
	if err := os.RemoveAll(filepath.Join(m.root, top)); err != nil {
		t.Fatal(err)
	}
	m.dropUnder(filepath.Join(m.root, top))
}

func (m *machine) dropUnder(dir string) {
	for p := range m.model {
		if rel, err := filepath.Rel(dir, p); err == nil && filepath.IsLocal(rel) {
			delete(m.model, p)
		}
	}
}

// moveIn builds a task outside the root and renames it in, replacing
// whatever was there.
func (m *machine) moveIn(t *rapid.T) {
	task := rapid.SampledFrom(tasks).Draw(t, "task")
	n := rapid.IntRange(0, 3).Draw(t, "runs")
	src := filepath.Join(m.outside, "staged")
	os.RemoveAll(src)
	os.MkdirAll(src, 0o755)
	fs.WriteAtomic(filepath.Join(src, status.StatusFile), fmt.Appendf(nil, `{"runs": %d}`, n), 0o644)
	dst := filepath.Join(m.root, task)
	os.MkdirAll(filepath.Dir(dst), 0o755)
	if err := os.RemoveAll(dst); err != nil {
		t.Fatal(err)
	}
	m.dropUnder(dst)
	if err := os.Rename(src, dst); err != nil {
		t.Fatal(err)
	}
	m.set(m.path(task), fmt.Sprintf("runs=%d", n))
}

// moveOut renames a task's directory out of the root.
func (m *machine) moveOut(t *rapid.T) {
	task := rapid.SampledFrom(tasks).Draw(t, "task")
	src := filepath.Join(m.root, task)
	if _, err := os.Stat(src); err != nil {
		t.Skip("no such task")
	}
	dst := filepath.Join(m.outside, "gone")
	os.RemoveAll(dst)
	if err := os.Rename(src, dst); err != nil {
		t.Fatal(err)
	}
	m.dropUnder(src)
}

func describe(e status.Entry[status.Status], err error) string {
	switch {
	case err != nil:
		var ce *status.CorruptError
		if errors.As(err, &ce) {
			return "corrupt"
		}
		return "error: " + err.Error()
	case e.Removed:
		return ""
	}
	return fmt.Sprintf("runs=%d", e.Value.Runs)
}

// check: List equals the model now; the watch converges to it, each yield
// a state its document really had, never the same state twice in a row.
func (m *machine) check(t *rapid.T) {
	listed := map[string]string{}
	for e, err := range status.List(m.root) {
		listed[e.Path] = describe(e, err)
	}
	if diff := cmp.Diff(m.model, listed); diff != "" {
		t.Fatalf("List differs from the model (-model +List):\n%s", diff)
	}
	for !maps.Equal(m.view, m.model) {
		e, err, ok := m.next()
		if !ok {
			t.Fatalf("the watch ended; it reports (-model +watch):\n%s", cmp.Diff(m.model, m.view))
		}
		m.yields++
		state := describe(e, err)
		prev, had := m.view[e.Path]
		switch {
		case state == "" && !had:
			t.Fatalf("%s: removal reported for a document not reported present", e.Path)
		case state != "" && had && state == prev && state != "corrupt":
			t.Fatalf("%s: %s yielded twice in a row", e.Path, state)
		case state != "" && !m.committed[e.Path][state]:
			t.Fatalf("%s: yielded %q, a state it never had", e.Path, state)
		}
		if state == "" {
			delete(m.view, e.Path)
		} else {
			m.view[e.Path] = state
		}
	}
}

func TestWatchDirConvergesToModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := &machine{
			root: mkdirTemp(t), outside: mkdirTemp(t),
			model: map[string]string{}, committed: map[string]map[string]bool{}, view: map[string]string{},
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		next, stop := iter.Pull2(status.WatchDir(ctx, m.root))
		defer stop()
		m.next = next
		t.Repeat(map[string]func(*rapid.T){
			"write":      m.write,
			"corrupt":    m.corrupt,
			"remove":     m.remove,
			"removeTree": m.removeTree,
			"moveIn":     m.moveIn,
			"moveOut":    m.moveOut,
			"":           m.check,
		})
		if len(slices.Collect(maps.Keys(m.model))) > 0 && m.yields == 0 {
			t.Fatal("the watch never yielded")
		}
	})
}

// mkdirTemp makes a directory removed when the check ends (rapid.T has no
// TempDir).
func mkdirTemp(t *rapid.T) string {
	dir, err := os.MkdirTemp("", "watchmodel")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
