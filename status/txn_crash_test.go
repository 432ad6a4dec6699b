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
)

// commitSteps records the steps of one commit of n documents.
func commitSteps(t *testing.T, n int) []string {
	t.Helper()
	dir := t.TempDir()
	docs, _ := crashDocs(t, dir, n)
	var steps []string
	txCrash = func(step string) bool { steps = append(steps, step); return false }
	defer func() { txCrash = nil }()
	if _, err := MutateAll(context.Background(), docs, bumpAll(docs)); err != nil {
		t.Fatal(err)
	}
	return steps
}

// crashDocs makes n documents in different directories, each with seq 0.
func crashDocs(t *testing.T, dir string, n int) ([]Doc, []*Store[txReg]) {
	t.Helper()
	var docs []Doc
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
func bumpAll(docs []Doc) func(*Tx) error {
	return func(tx *Tx) error {
		for _, d := range docs {
			d.(*Store[txReg]).In(tx).Active++
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
	txCrash = func(s string) bool { return s == step }
	_, err := MutateAll(ctx, docs, bumpAll(docs))
	txCrash = nil
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
			if got := s.In(tx).Active; got != want+1 {
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
		if got := s.In(tx).Active; got != want {
			t.Fatalf("document %d: active %d, want %d (crash at %q, committed %v)", i, got, want, step, committed)
		}
	}
	if l := leftovers(t, dir); len(l) > 0 {
		t.Fatalf("recovery left %v", l)
	}
}

// The recovery's decisions on markers that no complete commit of this
// package would leave.
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
	check := func(t *testing.T, s *Store[txReg], want int) {
		t.Helper()
		got, err := s.Mutate(ctx, func(*txReg) error { return nil })
		if err != nil || got.Active != want {
			t.Fatalf("after recovery: %+v, %v; want active %d", got, err, want)
		}
		if _, err := os.Lstat(s.Name() + markerSuffix); !errors.Is(err, os.ErrNotExist) {
			t.Fatal("marker left")
		}
	}
	t.Run("not a journal name", func(t *testing.T) {
		_, s, key := setup(t)
		os.WriteFile(key+markerSuffix, []byte("/etc/passwd\n"), 0o644)
		check(t, s, 0)
		if _, err := os.Stat("/etc/passwd"); err != nil {
			t.Fatal("recovery removed what a marker named")
		}
	})
	t.Run("torn journal", func(t *testing.T) {
		dir, s, key := setup(t)
		j := filepath.Join(dir, journalPrefix+"0123456789abcdef"+journalSuffix)
		os.WriteFile(j, []byte(`{"documents": ["`+key), 0o644)
		os.WriteFile(key+markerSuffix, []byte(j+"\n"), 0o644)
		check(t, s, 0)
		if _, err := os.Lstat(j); !errors.Is(err, os.ErrNotExist) {
			t.Fatal("a torn journal was left")
		}
	})
	t.Run("journal of other documents", func(t *testing.T) {
		dir, s, key := setup(t)
		j := filepath.Join(dir, journalPrefix+"0123456789abcdef"+journalSuffix)
		os.WriteFile(j, []byte(`{"documents": ["/elsewhere/doc.json"]}`), 0o644)
		os.WriteFile(key+markerSuffix, []byte(j+"\n"), 0o644)
		check(t, s, 0)
		if _, err := os.Lstat(j); err != nil {
			t.Fatal("another transaction's journal was removed")
		}
	})
	t.Run("committed, named by another spelling", func(t *testing.T) {
		dir, s, key := setup(t)
		if err := os.Symlink(filepath.Dir(key), filepath.Join(dir, "alias")); err != nil {
			t.Fatal(err)
		}
		j := filepath.Join(dir, journalPrefix+"0123456789abcdef"+journalSuffix)
		os.WriteFile(j, []byte(`{"documents": ["`+filepath.Join(dir, "alias", "doc.json")+`"]}`), 0o644)
		os.WriteFile(key+markerSuffix, []byte(j+"\n"), 0o644)
		check(t, s, 9)
		if _, err := os.Lstat(j); !errors.Is(err, os.ErrNotExist) {
			t.Fatal("a finished journal was left")
		}
	})
	t.Run("marker is a directory", func(t *testing.T) {
		_, s, key := setup(t)
		os.Mkdir(key+markerSuffix, 0o755)
		called := false
		_, err := s.Mutate(ctx, func(*txReg) error { called = true; return nil })
		if !errors.Is(err, fs.ErrNotRegular) || called || !strings.Contains(err.Error(), "transaction marker "+key+markerSuffix+": not a regular file") {
			t.Fatalf("Mutate with a directory as marker: %v (fn called %v)", err, called)
		}
	})
	t.Run("leftover new content without marker", func(t *testing.T) {
		dir, s, key := setup(t)
		other := NewStore[txReg](filepath.Join(dir, "other.json"))
		if _, err := MutateAll(ctx, []Doc{s, other}, func(tx *Tx) error {
			s.In(tx).Active = 2
			other.In(tx).Active = 2
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		check(t, s, 2)
		if _, err := os.Lstat(key + txTempSuffix); !errors.Is(err, os.ErrNotExist) {
			t.Fatal("temp left")
		}
	})
}
