package status

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
)

// A member of a group workspace plants a marker on a root service's
// document naming a journal reached through a link of theirs, and flips
// the link between their own directory (where a journal of theirs lists the
// document) and a directory only root may enter, where root's own
// transaction, committed and crashed with one of its two documents
// installed, keeps a journal of the same name.
// Recovery opens the journal's directory, checks the journal there, and
// removes it at the end. It must act only in the directory it checked
// (through its descriptor): root's directory is never changed, and root's
// transaction completes whole. The CONTROL reaches the files by path again
// (txSeams(t).ByPath, as before): a flip between the check and the
// removal deletes root's journal, and root's transaction is left half
// applied.
func TestRecoveryActsInTheDirectoryItChecked(t *testing.T) {
	needRoot(t)
	needHooks(t)
	const rounds = 300
	run := func(t *testing.T, byPath bool) (lost, recovered int, torn bool) {
		priv := privateDir(t)
		a, b := filepath.Join(priv, "a.json"), filepath.Join(priv, "b.json")
		stores := limitStores([]string{a, b})
		for _, p := range []string{a, b} {
			if err := os.WriteFile(p, []byte(`{"n": 0}`), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		txSeams(t).Crash = func(step string) bool { return step == "renamed 0" } // a installed, b not yet
		_, err := MutateAll(context.Background(), stores, bumpEach(stores))
		txSeams(t).Crash = nil
		if !errors.Is(err, errCrashed) {
			t.Fatalf("root's transaction: %v, want it crashed after its commit point", err)
		}
		victim := journalOf(t, priv)
		before := listing(t, priv)

		ws := workspace(t, false)
		doc := filepath.Join(ws, "doc.json")
		writeOwned(t, doc, `{"runs":1}`, 0, 0o664)
		mdir, link := filepath.Join(ws, "member"), filepath.Join(ws, "member", "link")
		asMember(t, ws, `mkdir member && ln -s "$1" member/link`, mdir)
		named := filepath.Join(link, filepath.Base(victim))
		flipper := exec.Command("sh", "-c", `while :; do ln -sfn "$1" link.new && mv -Tf link.new link; ln -sfn "$2" link.new && mv -Tf link.new link; done`, "sh", priv, mdir)
		flipper.Dir = mdir
		flipper.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: member, Gid: member, Groups: []uint32{}}}
		if err := flipper.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { flipper.Process.Kill(); flipper.Wait() }()

		setSeamTo(t, &txSeams(t).ByPath, byPath)
		for range rounds {
			asMember(t, ws, `[ -e "$1" ] || printf '%s' "$2" > "$1"; printf '%s' "$3" > doc.json.txn`,
				filepath.Join(mdir, filepath.Base(victim)), journalJSON(filepath.Join(link, "x.json"), doc), markerOf(t, named, doc, false))
			if _, err := Mutate(context.Background(), doc, func(*Status) error { return nil }); err == nil {
				recovered++
			}
			if _, err := os.Lstat(victim); err != nil {
				lost++
				break
			}
		}
		flipper.Process.Kill()
		flipper.Wait()
		txSeams(t).ByPath = false
		if !byPath {
			if after := listing(t, priv); after != before {
				t.Errorf("root's directory changed:\n%s\nnow:\n%s", before, after)
			}
		}
		tx, err := LoadAll(context.Background(), stores...)
		if err != nil {
			t.Fatal(err)
		}
		da, errA := stores[0].(*Store[limitDoc]).In(tx)
		db, errB := stores[1].(*Store[limitDoc]).In(tx)
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		na, nb := da.N, db.N
		return lost, recovered, na != nb
	}
	lost, recovered, torn := run(t, false)
	control, crec, ctorn := run(t, true)
	t.Logf("%d rounds of a flipping link: root's journal deleted %d times, %d recoveries completed the member's transaction, root's transaction torn: %v; CONTROL (by path): deleted %d (after %d completed), torn: %v",
		rounds, lost, recovered, torn, control, crec, ctorn)
	if lost > 0 || torn {
		t.Errorf("recovery acted outside the directory it checked")
	}
	if control == 0 || !ctorn {
		t.Errorf("CONTROL: recovery by path never deleted root's journal: the harness cannot see it")
	}
}

// journalOf returns the one journal in dir.
func journalOf(t *testing.T, dir string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, journalPrefix+"*"+journalSuffix))
	if len(m) != 1 {
		t.Fatalf("journals in %s: %v", dir, m)
	}
	return m[0]
}

// listing describes every file in dir: name, inode, size and time of change.
func listing(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		lines = append(lines, fmt.Sprintf("%s %d %d %d.%d", e.Name(), st.Ino, st.Size, st.Ctim.Sec, st.Ctim.Nsec))
	}
	sort.Strings(lines)
	return fmt.Sprint(lines)
}

// setSeamTo sets one of journal.Seams' switches to v until t ends.
func setSeamTo(t *testing.T, seam *bool, v bool) {
	*seam = v
	t.Cleanup(func() { *seam = false })
}

// The link on the way to a journal changes right after recovery opened the
// journal's directory (through the recovery's hook, so at that exact
// moment). The journal it reads is the one in the directory it opened,
// which is no longer the directory its documents' paths name: recovery
// refuses it (ErrTxUntrusted) and removes nothing. The CONTROL, by path,
// reads and removes the journal of the other directory.
func TestRecoveryRefusesJournalDirectoryThatMoved(t *testing.T) {
	needHooks(t)
	for _, byPath := range []bool{false, true} {
		t.Run(map[bool]string{false: "descriptor", true: "CONTROL_by_path"}[byPath], func(t *testing.T) {
			w := t.TempDir()
			doc := filepath.Join(w, "doc.json")
			m1, m2, link := filepath.Join(w, "m1"), filepath.Join(w, "m2"), filepath.Join(w, "link")
			for _, d := range []string{m1, m2} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(journalName(d), []byte(journalJSON(filepath.Join(link, "x.json"), doc)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink(m1, link); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(doc, []byte(`{"runs":1}`), 0o644); err != nil {
				t.Fatal(err)
			}
			named := journalName(link)
			if err := os.WriteFile(doc+markerSuffix, []byte(markerOf(t, named, doc, false)), 0o644); err != nil {
				t.Fatal(err)
			}
			setSeamTo(t, &txSeams(t).ByPath, byPath)
			txSeams(t).Hook = func(event, name string) {
				if event == "open" && name == named {
					os.Remove(link)
					os.Symlink(m2, link)
				}
			}
			t.Cleanup(func() { txSeams(t).Hook = nil })
			_, err := Mutate(context.Background(), doc, func(*Status) error { return nil })
			_, e1 := os.Lstat(journalName(m1))
			_, e2 := os.Lstat(journalName(m2))
			t.Logf("Mutate: %v; journal in m1: %v, in m2: %v", err, e1, e2)
			switch {
			case byPath && e2 == nil:
				t.Fatal("CONTROL: recovery by path left the other directory's journal: the harness cannot see it")
			case !byPath && (!errors.Is(err, ErrTxUntrusted) || !errNames(err, named)):
				t.Fatalf("Mutate = %v, want ErrTxUntrusted naming %s", err, named)
			case !byPath && (e1 != nil || e2 != nil):
				t.Fatal("a refused recovery removed a journal")
			}
		})
	}
}
