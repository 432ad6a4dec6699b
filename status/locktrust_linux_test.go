package status

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentstate/core/status/internal/flock"
)

// The writer children of TestForeignLockFileInStickyDirectory: each adds 1
// to the document's count lockTrustN times and reports what it was told.
const (
	lockTrustDoc     = "STATUS_LOCKTRUST_DOC"
	lockTrustN       = "STATUS_LOCKTRUST_N"
	lockTrustControl = "STATUS_LOCKTRUST_CONTROL"
)

func init() {
	if os.Getenv(lockTrustDoc) != "" {
		lockTrustChild()
	}
}

// A writer's report.
type writerReport struct {
	Acked, Failed int
	First         string
	Untrusted     bool // the first error matched ErrLockUntrusted
}

func lockTrustChild() {
	flock.TestSeams().TrustAnyOwner = os.Getenv(lockTrustControl) != "" // the parent skipped in a build without them
	var n int
	fmt.Sscan(os.Getenv(lockTrustN), &n)
	s := NewStore[limitDoc](os.Getenv(lockTrustDoc))
	var r writerReport
	for range n {
		_, err := s.Mutate(context.Background(), func(d *limitDoc) error { d.N++; return nil })
		if err == nil {
			r.Acked++
			continue
		}
		if r.Failed++; r.First == "" {
			r.First, r.Untrusted = err.Error(), errors.Is(err, ErrLockUntrusted)
		}
	}
	json.NewEncoder(os.Stdout).Encode(r)
	os.Exit(0)
}

// A member of a sticky directory (1777, like /tmp) creates the lock file
// of a root service's document before the service does (a predictable
// name), and then keeps replacing it with new files of theirs: by unlink
// and create, or by renaming another file over it. Root's writers, each in
// a process of its own, must refuse the member's lock file
// (ErrLockUntrusted, naming it) and so lose nothing. The CONTROL takes the
// lock file whoever owns it, as before: writers lock different files, all
// report success, and updates are lost.
func TestForeignLockFileInStickyDirectory(t *testing.T) {
	needRoot(t)
	needHooks(t)
	const writers, each = 4, 150
	loops := map[string]string{
		// A new file every millisecond: a writer that opens one and
		// locks it within that time finds it still named.
		"unlink and create": `exec python3 -c 'import os, time
while True:
    try: os.unlink("doc.json.lock")
    except OSError: pass
    os.close(os.open("doc.json.lock", os.O_CREAT | os.O_WRONLY, 0o644))
    time.sleep(0.001)'`,
		"rename over": `exec python3 -c 'import os
while True:
    os.close(os.open("l.new", os.O_CREAT | os.O_WRONLY, 0o644))
    os.rename("l.new", "doc.json.lock")'`,
	}
	for name, loop := range loops {
		t.Run(name, func(t *testing.T) {
			run := func(control bool) (acked, stored int, reports []writerReport) {
				ws := workspace(t, true)
				doc := filepath.Join(ws, "doc.json")
				writeOwned(t, doc, `{"n": 0}`, 0, 0o644)
				asMember(t, ws, `: > doc.json.lock`)
				loopCmd := exec.Command("sh", "-c", loop)
				loopCmd.Dir = ws
				loopCmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: member, Gid: member, Groups: []uint32{}}}
				if err := loopCmd.Start(); err != nil {
					t.Fatal(err)
				}
				defer func() { loopCmd.Process.Kill(); loopCmd.Wait() }()
				cmds := make([]*exec.Cmd, writers)
				outs := make([]*strings.Builder, writers)
				for i := range cmds {
					cmds[i] = exec.Command(os.Args[0], "-test.run=^$")
					cmds[i].Env = append(os.Environ(), lockTrustDoc+"="+doc, fmt.Sprintf("%s=%d", lockTrustN, each))
					if control {
						cmds[i].Env = append(cmds[i].Env, lockTrustControl+"=1")
					}
					outs[i] = new(strings.Builder)
					cmds[i].Stdout = outs[i]
					if err := cmds[i].Start(); err != nil {
						t.Fatal(err)
					}
				}
				for i, c := range cmds {
					if err := c.Wait(); err != nil {
						t.Fatalf("writer %d: %v", i, err)
					}
					var r writerReport
					if err := json.Unmarshal([]byte(outs[i].String()), &r); err != nil {
						t.Fatalf("writer %d said %q: %v", i, outs[i], err)
					}
					acked += r.Acked
					reports = append(reports, r)
				}
				loopCmd.Process.Kill()
				loopCmd.Wait()
				v, err := NewStore[limitDoc](doc).Load(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				return acked, v.N, reports
			}
			acked, stored, reports := run(false)
			// Once a writer creates its own lock file in the instant the name
			// is missing, the member can no longer unlink it: a run of the
			// CONTROL may end before anything is lost. It runs again, a few
			// times at most.
			var cacked, cstored, runs int
			for runs = 1; runs <= 8 && cacked == cstored; runs++ {
				cacked, cstored, _ = run(true)
			}
			t.Logf("%s: %d of %d increments acknowledged, %d lost; CONTROL (run %d): %d acknowledged, %d lost; a writer was told: %s",
				name, acked, writers*each, acked-stored, runs-1, cacked, cacked-cstored, reports[0].First)
			if stored != acked {
				t.Errorf("%d acknowledged increments lost", acked-stored)
			}
			for _, r := range reports {
				if r.Failed > 0 && (!r.Untrusted || !strings.Contains(r.First, "lock file")) {
					t.Errorf("a writer failed with %q, want ErrLockUntrusted naming the lock file", r.First)
				}
			}
			if cstored == cacked {
				t.Errorf("CONTROL: writers that take the member's lock file lost nothing: the harness cannot see it")
			}
		})
	}
}

// Whose lock file a writer takes, by the trust rule, in a sticky directory
// and in a group workspace: the document's owner's, the caller's and the
// directory's owner's, and no one else's, also when the document does not
// exist yet (then it can only be the caller's or the directory's owner's).
// The CONTROL takes every one.
func TestLockFileTrustRule(t *testing.T) {
	needRoot(t)
	needHooks(t)
	const other = 65533 // a third user, neither the member nor root
	cases := []struct {
		name            string
		sticky          bool
		dirOwner        int // the workspace's owner
		docOwner, owner int // -1: no document
		trusted         bool
	}{
		{"member's lock file, root's document", true, 0, 0, member, false},
		{"member's lock file, no document", true, 0, -1, member, false},
		{"member's lock file, member's document", true, 0, member, member, true},
		{"member's lock file, another's document", true, 0, other, member, false},
		{"directory owner's lock file, no document", true, other, -1, other, true},
		{"root's lock file, member's document", true, 0, member, 0, true},
		{"member's lock file in a group workspace", false, 0, 0, member, true},
	}
	for _, control := range []bool{false, true} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/control=%v", c.name, control), func(t *testing.T) {
				s := flock.TestSeams() // the test skipped in a build without them (needHooks)
				s.TrustAnyOwner = control
				t.Cleanup(func() { s.TrustAnyOwner = false })
				ws := workspace(t, c.sticky)
				if err := os.Chown(ws, c.dirOwner, member); err != nil {
					t.Fatal(err)
				}
				doc := filepath.Join(ws, "doc.json")
				if c.docOwner >= 0 {
					writeOwned(t, doc, `{"n": 1}`, c.docOwner, 0o666)
				}
				writeOwned(t, doc+LockSuffix, "", c.owner, 0o666)
				_, err := NewStore[limitDoc](doc).Mutate(context.Background(), func(d *limitDoc) error { d.N++; return nil })
				switch want := c.trusted || control; {
				case want && err != nil:
					t.Fatalf("Mutate = %v, want the lock file taken", err)
				case !want && (!errors.Is(err, ErrLockUntrusted) || !strings.Contains(err.Error(), "lock file")):
					t.Fatalf("Mutate = %v, want ErrLockUntrusted naming the lock file", err)
				}
			})
		}
	}
}
