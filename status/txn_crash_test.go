package status

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status/internal/journal"
)

// commitSteps records the steps of one commit of n documents.
func commitSteps(t *testing.T, n int) []string {
	t.Helper()
	needHooks(t)
	dir := t.TempDir()
	docs, _ := crashDocs(t, dir, n)
	var steps []string
	txSeams(t).Crash = func(step string) bool { steps = append(steps, step); return false }
	defer func() { txSeams(t).Crash = nil }()
	if _, err := MutateAll(context.Background(), docs, bumpAll(docs)); err != nil {
		t.Fatal(err)
	}
	return steps
}

// crashDocs makes n documents in different directories, each with seq 0.
func crashDocs(t *testing.T, dir string, n int) ([]AnyStore, []*Store[txReg]) {
	t.Helper()
	var docs []AnyStore
	var stores []*Store[txReg]
	for i := range n {
		d := filepath.Join(dir, fmt.Sprintf("w%d", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		s := NewStore[txReg](filepath.Join(d, "doc.json"))
		if _, err := s.Mutate(context.Background(), func(r *txReg) error { r.Max = 1; return nil }); err != nil {
			t.Fatal(err)
		}
		docs, stores = append(docs, s), append(stores, s)
	}
	return docs, stores
}

// bumpAll counts one transaction in every document.
func bumpAll(docs []AnyStore) func(*Tx) error {
	return func(tx *Tx) error {
		for _, d := range docs {
			r, err := d.(*Store[txReg]).In(tx)
			if err != nil {
				return err
			}
			r.Active++
		}
		return nil
	}
}

// TestCommitCrashAtEveryStep stops a commit at each of its steps as if its
// process had died there (nothing cleaned up, the locks released), then
// lets the next lockers in: whatever document they lock first, every
// locker sees all the new documents or all the old ones, the new ones
// exactly when the journal was written, and no file of the commit is left.
// A reader that takes no lock sees each document old or new on its own.
func TestCommitCrashAtEveryStep(t *testing.T) {
	needHooks(t)
	for _, n := range []int{2, 3} {
		steps := commitSteps(t, n)
		commit := slices.Index(steps, "journal")
		if commit < 0 || len(steps) != 4*n+5 {
			t.Fatalf("steps %v", steps)
		}
		for k, step := range steps {
			for _, first := range []string{"all", "mutate 0", "mutate last", "transaction"} {
				t.Run(fmt.Sprintf("%d docs/%s/%s", n, step, first), func(t *testing.T) {
					crashThenRecover(t, n, step, k >= commit, first)
				})
			}
		}
	}
}

func crashThenRecover(t *testing.T, n int, step string, committed bool, first string) {
	dir := t.TempDir()
	docs, stores := crashDocs(t, dir, n)
	ctx := context.Background()
	txSeams(t).Crash = func(s string) bool { return s == step }
	_, err := MutateAll(ctx, docs, bumpAll(docs))
	txSeams(t).Crash = nil
	if !errors.Is(err, errCrashed) {
		t.Fatalf("MutateAll: %v, want the simulated crash", err)
	}
	want := 0
	if committed {
		want = 1
	}
	// Lock-free reads: whole documents, old or new.
	for _, s := range stores {
		if r, err := s.Load(ctx); err != nil || r.Active != 0 && r.Active != 1 {
			t.Fatalf("Load after the crash: %+v, %v", r, err)
		}
	}
	switch first {
	case "mutate 0", "mutate last":
		s := stores[0]
		if first == "mutate last" {
			s = stores[n-1]
		}
		got, err := s.Mutate(ctx, func(r *txReg) error { r.Agents = append(r.Agents, "next"); return nil })
		if err != nil || got.Active != want {
			t.Fatalf("the next Mutate saw %+v (%v), want active %d", got, err, want)
		}
	case "transaction":
		tx, err := MutateAll(ctx, docs, bumpAll(docs))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range stores {
			if got := in(t, s, tx).Active; got != want+1 {
				t.Fatalf("the next transaction committed %d, want %d", got, want+1)
			}
		}
		want++
	}
	tx, err := LoadAll(ctx, docs...)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range stores {
		if got := in(t, s, tx).Active; got != want {
			t.Fatalf("document %d: active %d, want %d (crash at %q, committed %v)", i, got, want, step, committed)
		}
	}
	if l := leftovers(t, dir); len(l) > 0 {
		t.Fatalf("recovery left %v", l)
	}
}

// The recovery's decisions on markers that no complete commit of this
// package would leave: a torn marker (a crash between its creation and its
// write) is recovered; every other odd state is an error that names the
// file and changes nothing.
func TestRecoverOddMarkers(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) (string, *Store[txReg], string) {
		dir := t.TempDir()
		_, stores := crashDocs(t, dir, 1)
		key := stores[0].Name()
		if err := os.WriteFile(key+txTempSuffix, []byte(`{"active_count": 9}`), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir, stores[0], key
	}
	recovered := func(t *testing.T, s *Store[txReg], want int) {
		t.Helper()
		got, err := s.Mutate(ctx, func(*txReg) error { return nil })
		if err != nil || got.Active != want {
			t.Fatalf("after recovery: %+v, %v; want active %d", got, err, want)
		}
		if _, err := os.Lstat(s.Name() + markerSuffix); !errors.Is(err, os.ErrNotExist) {
			t.Fatal("marker left")
		}
	}
	refused := func(t *testing.T, s *Store[txReg], file string, also error) {
		t.Helper()
		called := false
		_, err := s.Mutate(ctx, func(*txReg) error { called = true; return nil })
		if !errors.Is(err, ErrTxUntrusted) || also != nil && !errors.Is(err, also) || called || !strings.Contains(err.Error(), " "+file+": ") {
			t.Fatalf("Mutate = %v (fn called %v), want ErrTxUntrusted (and %v) naming %s", err, called, also, file)
		}
		if b, _ := os.ReadFile(s.Name()); !strings.Contains(string(b), `"active_count": 0`) {
			t.Fatalf("the document changed: %s", b)
		}
		for _, name := range []string{s.Name() + markerSuffix, s.Name() + txTempSuffix} {
			if _, err := os.Lstat(name); err != nil {
				t.Fatalf("%s is gone: %v", name, err)
			}
		}
	}
	journalIn := func(dir string) string { return filepath.Join(dir, journalPrefix+"0123456789abcdef"+journalSuffix) }
	t.Run("torn marker", func(t *testing.T) {
		_, s, key := setup(t)
		os.WriteFile(key+markerSuffix, nil, 0o644)
		recovered(t, s, 0)
		if _, err := os.Lstat(key + txTempSuffix); !errors.Is(err, os.ErrNotExist) {
			t.Fatal("new content left")
		}
	})
	t.Run("not a journal name", func(t *testing.T) {
		_, s, key := setup(t)
		os.WriteFile(key+markerSuffix, []byte("/etc/passwd\n"), 0o644)
		refused(t, s, key+markerSuffix, nil)
		if _, err := os.Stat("/etc/passwd"); err != nil {
			t.Fatal("recovery removed what a marker named")
		}
	})
	t.Run("torn journal", func(t *testing.T) {
		_, s, key := setup(t)
		j := journalIn(filepath.Dir(key))
		os.WriteFile(j, []byte(`{"documents": ["`+key), 0o644)
		os.WriteFile(key+markerSuffix, []byte(j+"\nnone\n"), 0o644)
		refused(t, s, j, nil)
		if _, err := os.Lstat(j); err != nil {
			t.Fatal("recovery removed a journal it could not read")
		}
	})
	t.Run("journal of other documents", func(t *testing.T) {
		_, s, key := setup(t)
		j := journalIn(filepath.Dir(key))
		os.WriteFile(j, []byte(`{"documents": ["/elsewhere/doc.json", "`+filepath.Join(filepath.Dir(key), "b.json")+`"]}`), 0o644)
		os.WriteFile(key+markerSuffix, []byte(j+"\nnone\n"), 0o644)
		refused(t, s, j, nil)
		if _, err := os.Lstat(j); err != nil {
			t.Fatal("another transaction's journal was removed")
		}
	})
	t.Run("committed, named by another spelling", func(t *testing.T) {
		dir, s, key := setup(t)
		alias := filepath.Join(dir, "alias")
		if err := os.Symlink(filepath.Dir(key), alias); err != nil {
			t.Fatal(err)
		}
		j := journalIn(alias)
		os.WriteFile(j, []byte(`{"documents": ["`+filepath.Join(alias, "doc.json")+`"]}`), 0o644)
		os.WriteFile(key+markerSuffix, []byte(j+"\n"+Before(t, key)+"\n"), 0o644)
		recovered(t, s, 9)
		if _, err := os.Lstat(j); !errors.Is(err, os.ErrNotExist) {
			t.Fatal("a finished journal was left")
		}
	})
	t.Run("marker is a directory", func(t *testing.T) {
		_, s, key := setup(t)
		os.Mkdir(key+markerSuffix, 0o755)
		refused(t, s, key+markerSuffix, fs.ErrNotRegular)
	})
	t.Run("leftover new content without marker", func(t *testing.T) {
		dir, s, key := setup(t)
		other := NewStore[txReg](filepath.Join(dir, "other.json"))
		if _, _, err := MutateAll2(ctx, s, other, func(a, b *txReg) error {
			a.Active = 2
			b.Active = 2
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		recovered(t, s, 2)
		if _, err := os.Lstat(key + txTempSuffix); !errors.Is(err, os.ErrNotExist) {
			t.Fatal("temp left")
		}
	})
}

// Before is the BEFORE line of a marker for the document at path as it is.
func Before(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return journal.Before(nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return journal.Before(data)
}
