package status_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentstate/core/status"
	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// counter is the document of the state machine.
type counter struct {
	N   int    `json:"n"`
	Tag string `json:"tag,omitempty"`
}

// The model: each document's committed value, and for a document that a
// crashed commit left unfinished, the value a lock-free Load may still
// show until a locker completes or undoes it.
type txModel struct {
	dir    string
	stores []*status.Store[counter]
	val    []counter
	stale  []*counter // nil: nothing pending
}

func (m *txModel) docs(idx []int) []status.AnyStore {
	ds := make([]status.AnyStore, len(idx))
	for i, j := range idx {
		ds[i] = m.stores[j]
	}
	return ds
}

// locked records that a caller took the locks of idx: whatever a crash
// left there is settled.
func (m *txModel) locked(idx []int) {
	for _, i := range idx {
		m.stale[i] = nil
	}
}

func (m *txModel) subset(t *rapid.T, label string, least int) []int {
	n := len(m.stores)
	return rapid.SliceOfNDistinct(rapid.IntRange(0, n-1), least, n, rapid.ID[int]).Draw(t, label)
}

// TestTxStateMachine runs random sequences of transactions (some failing),
// Mutate calls, LoadAll and Load, and commits that a "process" left at a
// random step (written file by file as docs/PROTOCOL.md says,
// the way a program in another language would), against the model.
func TestTxStateMachine(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		dir, err := os.MkdirTemp("", "txsm")
		if err != nil {
			rt.Fatal(err)
		}
		defer os.RemoveAll(dir)
		m := &txModel{dir: dir}
		for i := range 4 {
			d := filepath.Join(dir, fmt.Sprintf("w%d", i%2)) // two documents per directory
			os.MkdirAll(d, 0o755)
			m.stores = append(m.stores, status.NewStore[counter](filepath.Join(d, fmt.Sprintf("doc%d.json", i))))
			m.val = append(m.val, counter{})
			m.stale = append(m.stale, nil)
		}
		ctx := context.Background()
		rt.Repeat(map[string]func(*rapid.T){
			"MutateAll": func(t *rapid.T) {
				idx := m.subset(t, "docs", 1)
				delta := rapid.IntRange(1, 9).Draw(t, "delta")
				fail := rapid.Bool().Draw(t, "fail")
				tx, err := status.MutateAll(ctx, m.docs(idx), func(tx *status.Tx) error {
					for _, i := range idx {
						if got := inTx(m.stores[i], tx); *got != m.val[i] {
							return fmt.Errorf("fn saw %+v in %d, model %+v", *got, i, m.val[i])
						}
						inTx(m.stores[i], tx).N += delta
					}
					if fail {
						return errFail
					}
					return nil
				})
				m.locked(idx)
				if fail {
					if !errors.Is(err, errFail) {
						t.Fatalf("failing transaction: %v", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				for _, i := range idx {
					m.val[i].N += delta
					if got := *inTx(m.stores[i], tx); got != m.val[i] {
						t.Fatalf("committed %+v in %d, model %+v", got, i, m.val[i])
					}
				}
			},
			"Mutate": func(t *rapid.T) {
				i := rapid.IntRange(0, len(m.stores)-1).Draw(t, "doc")
				tag := rapid.SampledFrom([]string{"", "a", "b"}).Draw(t, "tag")
				got, err := m.stores[i].Mutate(ctx, func(c *counter) error {
					if *c != m.val[i] {
						return fmt.Errorf("fn saw %+v, model %+v", *c, m.val[i])
					}
					c.Tag = tag
					return nil
				})
				m.locked([]int{i})
				if err != nil {
					t.Fatal(err)
				}
				m.val[i].Tag = tag
				if got != m.val[i] {
					t.Fatalf("Mutate returned %+v, model %+v", got, m.val[i])
				}
			},
			"LoadAll": func(t *rapid.T) {
				idx := m.subset(t, "docs", 1)
				tx, err := status.LoadAll(ctx, m.docs(idx)...)
				m.locked(idx)
				if err != nil {
					t.Fatal(err)
				}
				for _, i := range idx {
					if got := *inTx(m.stores[i], tx); got != m.val[i] {
						t.Fatalf("LoadAll read %+v in %d, model %+v", got, i, m.val[i])
					}
				}
			},
			"Load": func(t *rapid.T) {
				i := rapid.IntRange(0, len(m.stores)-1).Draw(t, "doc")
				got, err := m.stores[i].Load(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if got != m.val[i] && (m.stale[i] == nil || got != *m.stale[i]) {
					t.Fatalf("Load read %+v in %d, model %+v (or %+v before an unfinished commit)", got, i, m.val[i], m.stale[i])
				}
			},
			"CrashedCommit": func(t *rapid.T) {
				idx := m.subset(t, "docs", 2)
				stage := rapid.IntRange(0, len(crashStages)-1).Draw(t, "stage")
				delta := rapid.IntRange(1, 9).Draw(t, "delta")
				// The committer took the locks first, which settled the
				// documents.
				if _, err := status.LoadAll(ctx, m.docs(idx)...); err != nil {
					t.Fatal(err)
				}
				m.locked(idx)
				committed := crashedCommit(t, m, idx, delta, stage)
				if !committed {
					return
				}
				for _, i := range idx {
					old := m.val[i]
					m.stale[i] = &old
					m.val[i].N += delta
				}
			},
		})
		all := make([]int, len(m.stores))
		for i := range all {
			all[i] = i
		}
		tx, err := status.LoadAll(ctx, m.docs(all)...)
		if err != nil {
			rt.Fatal(err)
		}
		got := make([]counter, len(all))
		for i := range all {
			got[i] = *inTx(m.stores[i], tx)
		}
		if diff := cmp.Diff(m.val, got); diff != "" {
			rt.Fatalf("documents at the end (-model +got):\n%s", diff)
		}
		if left := protocolFiles(dir); len(left) > 0 {
			rt.Fatalf("left: %v", left)
		}
	})
}

var errFail = errors.New("fn fails")

// crashStages are the moments a committer may die at, as the protocol
// orders its steps; from "journal" on the transaction is committed.
var crashStages = []string{"first marker", "markers and contents", "journal", "first renamed", "all renamed", "journal removed", "first marker removed"}

// crashedCommit writes, as a committer that dies at crashStages[stage]
// would leave them, the files of a transaction adding delta to every
// document of idx, and reports whether it is committed.
func crashedCommit(t *rapid.T, m *txModel, idx []int, delta, stage int) bool {
	paths := make([]string, len(idx))
	for k, i := range idx {
		paths[k] = m.stores[i].Name()
	}
	name := make([]byte, 8)
	rand.Read(name)
	journal := filepath.Join(filepath.Dir(paths[0]), ".txn-"+hex.EncodeToString(name)+".journal")
	write := func(name string, data []byte) {
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for k, p := range paths {
		before := "none" // the marker's BEFORE line: the document as the committer read it
		if data, err := os.ReadFile(p); err == nil {
			sum := sha256.Sum256(data)
			before = hex.EncodeToString(sum[:])
		}
		write(p+".txn", []byte(journal+"\n"+before+"\n"))
		if stage == 0 {
			return false
		}
		next := m.val[idx[k]]
		next.N += delta
		doc, _ := json.Marshal(next)
		write(p+".txn.tmp", doc)
	}
	if stage == 1 {
		return false
	}
	doc, _ := json.Marshal(map[string][]string{"documents": paths})
	write(journal, doc)
	for k, p := range paths {
		if stage == 2 || stage == 3 && k > 0 {
			return true
		}
		if err := os.Rename(p+".txn.tmp", p); err != nil {
			t.Fatal(err)
		}
	}
	if stage == 4 {
		return true
	}
	os.Remove(journal)
	if stage == 6 {
		os.Remove(paths[0] + ".txn")
	}
	return true
}

// protocolFiles lists the files of a commit left in dir's tree.
func protocolFiles(dir string) []string {
	var found []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && (strings.HasSuffix(p, ".txn") || strings.HasSuffix(p, ".txn.tmp") || strings.HasSuffix(p, ".journal")) {
			found = append(found, p)
		}
		return err
	})
	slices.Sort(found)
	return found
}
