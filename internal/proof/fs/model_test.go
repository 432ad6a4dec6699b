package fs_test

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/agentstate/core/fs"
)

// entry is the model of one name: a directory, or a file with content.
type entry struct {
	Dir  bool
	Data string
}

// fsModel is the in-memory model an Fs is compared with: slash names to
// entries; the root "." is implicit.
type fsModel map[string]entry

func (m fsModel) isDir(name string) bool { return name == "." || m[name].Dir && m.has(name) }
func (m fsModel) isFile(name string) bool {
	e, ok := m[name]
	return ok && !e.Dir
}
func (m fsModel) has(name string) bool { _, ok := m[name]; return ok }

func (m fsModel) children(dir string) []string {
	var names []string
	for n := range m {
		if path.Dir(n) == dir {
			names = append(names, path.Base(n))
		}
	}
	slices.Sort(names)
	return names
}

// fileAbove reports whether a proper ancestor of name is a file.
func (m fsModel) fileAbove(name string) bool {
	for d := path.Dir(name); d != "."; d = path.Dir(d) {
		if m.isFile(d) {
			return true
		}
	}
	return false
}

// snapshot reads the real tree under dir into the model's shape. Temp
// files would show up as unexpected entries.
func snapshot(t *rapid.T, dir string) fsModel {
	got := fsModel{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			got[rel] = entry{Dir: true}
			return nil
		}
		b, err := os.ReadFile(p)
		got[rel] = entry{Data: string(b)}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestFsStateMachine drives an Fs with random sequences of writes,
// overwrites, reads, renames, removals, mkdirs, existence checks and
// listings, and compares every result and the whole tree with the model.
func TestFsStateMachine(t *testing.T) {
	var names []string
	for _, a := range []string{"a", "b", "c"} {
		names = append(names, a)
		for _, b := range []string{"a", "b"} {
			names = append(names, a+"/"+b)
			names = append(names, a+"/"+b+"/c")
		}
	}
	base := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		dir, err := os.MkdirTemp(base, "")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		fsys, err := fs.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer fsys.Close()
		m := fsModel{}
		name := rapid.SampledFrom(names)
		content := rapid.StringMatching(`[a-z]{0,12}`)

		// expect compares an operation's success with the model's prediction.
		expect := func(op string, err error, ok bool) {
			t.Helper()
			if (err == nil) != ok {
				t.Fatalf("%s: err = %v, model predicted success=%v", op, err, ok)
			}
		}
		t.Repeat(map[string]func(*rapid.T){
			"write": func(t *rapid.T) {
				n, data := name.Draw(t, "name"), content.Draw(t, "data")
				var err error
				if rapid.Bool().Draw(t, "stream") {
					_, err = fsys.WriteAtomicFrom(context.Background(), n, strings.NewReader(data), 0o644)
				} else {
					err = fsys.WriteAtomic(n, []byte(data), 0o644)
				}
				ok := m.isDir(path.Dir(n)) && !m.isDir(n)
				expect("write "+n, err, ok)
				if ok {
					m[n] = entry{Data: data}
				}
			},
			"append": func(t *rapid.T) {
				n, data := name.Draw(t, "name"), content.Draw(t, "data")
				err := fsys.Append(n, []byte(data))
				ok := m.isDir(path.Dir(n)) && !m.isDir(n)
				expect("append "+n, err, ok)
				if ok {
					m[n] = entry{Data: m[n].Data + data}
				}
			},
			"read": func(t *rapid.T) {
				n := name.Draw(t, "name")
				b, err := fsys.ReadFile(n)
				expect("read "+n, err, m.isFile(n))
				if err == nil && string(b) != m[n].Data {
					t.Fatalf("read %s = %q, model has %q", n, b, m[n].Data)
				}
			},
			"rename": func(t *rapid.T) {
				from, to := name.Draw(t, "from"), name.Draw(t, "to")
				if !m.isFile(from) {
					t.Skip("only files are renamed in the model")
				}
				err := fsys.Rename(from, to)
				ok := m.isDir(path.Dir(to)) && !m.isDir(to)
				expect("rename "+from+" -> "+to, err, ok)
				if ok {
					e := m[from]
					delete(m, from)
					m[to] = e
				}
			},
			"remove": func(t *rapid.T) {
				n := name.Draw(t, "name")
				err := fsys.Remove(n)
				ok := m.isFile(n) || m.isDir(n) && len(m.children(n)) == 0
				expect("remove "+n, err, ok)
				if ok {
					delete(m, n)
				}
			},
			"removeAll": func(t *rapid.T) {
				n := name.Draw(t, "name")
				if m.fileAbove(n) {
					t.Skip("RemoveAll below a file is not modelled")
				}
				expect("remove all "+n, fsys.RemoveAll(n), true)
				for k := range m {
					if k == n || strings.HasPrefix(k, n+"/") {
						delete(m, k)
					}
				}
			},
			"mkdirAll": func(t *rapid.T) {
				n := name.Draw(t, "name")
				err := fsys.MkdirAll(n, 0o755)
				ok := !m.isFile(n) && !m.fileAbove(n)
				expect("mkdir all "+n, err, ok)
				for d := n; ok && d != "."; d = path.Dir(d) {
					m[d] = entry{Dir: true}
				}
			},
			"exists": func(t *rapid.T) {
				n := name.Draw(t, "name")
				got, err := fsys.Exists(n)
				if err != nil || got != m.has(n) {
					t.Fatalf("exists %s = %v, %v; model says %v", n, got, err, m.has(n))
				}
			},
			"readDir": func(t *rapid.T) {
				n := rapid.SampledFrom(append([]string{"."}, names...)).Draw(t, "dir")
				ents, err := fsys.ReadDir(n)
				expect("read dir "+n, err, m.isDir(n))
				if err != nil {
					return
				}
				var got []string
				for _, e := range ents {
					got = append(got, e.Name())
				}
				if diff := cmp.Diff(m.children(n), got); diff != "" {
					t.Fatalf("read dir %s (-model +fs):\n%s", n, diff)
				}
			},
			"": func(t *rapid.T) {
				if diff := cmp.Diff(m, snapshot(t, dir)); diff != "" {
					t.Fatalf("tree differs from the model (-model +disk):\n%s", diff)
				}
			},
		})
	})
}
