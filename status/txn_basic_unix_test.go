//go:build linux

package status

// A transaction's recovery next to clients that follow only the basic
// protocol, next to the documented deletion of a workspace, and next to
// another recovery of the same transaction; and MutateAll on hard links.
// Each test counts over its rounds and runs the same rounds with the
// protection switched off: that control must show the failure.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/agentstate/core/status/internal/journal"
)

// crashCommitted runs spawn on reg and task in a MutateAll that stops, as
// if its process died there, just after its commit point: the journal
// exists, no document is installed. (TestTxSIGKILLAtEveryStep shows that a
// real SIGKILL there leaves the same files.)
func crashCommitted(t *testing.T, reg *Store[txReg], task *Store[Status]) {
	t.Helper()
	needHooks(t)
	txSeams(t).Crash = func(step string) bool { return step == "committed" }
	_, err := MutateAll(context.Background(), []AnyStore{reg, task}, spawn(reg, task))
	txSeams(t).Crash = nil
	if !errors.Is(err, errCrashed) {
		t.Fatalf("MutateAll: %v, want the simulated crash", err)
	}
}

// A basic client follows the locking protocol without its recovery step:
// lock, read, replace, unlock. Real ones: the Python package with its
// recovery switched off (testdata/interop_counter.py, mode basic) and
// util-linux flock(1) with jq.
type basicClient struct {
	name   string
	need   []string
	n      int                                        // increments per round
	incr   func(t *testing.T, path string, n int) int // returns the increments acknowledged
	remove func(t *testing.T, path string)
}

var counterPy = filepath.Join("..", "internal", "proof", "status", "testdata", "interop_counter.py")

var basicClients = []basicClient{
	{
		name: "python fcntl", need: []string{"python3"}, n: 100,
		incr: func(t *testing.T, path string, n int) int {
			cmd := exec.Command("python3", counterPy, path, strconv.Itoa(n), "basic")
			cmd.Stdin = strings.NewReader("go\n")
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("interop_counter.py basic: %v", err)
			}
			var res struct{ Acked int }
			for sc := bufio.NewScanner(strings.NewReader(string(out))); sc.Scan(); {
				if rest, ok := strings.CutPrefix(sc.Text(), "result "); ok {
					if err := json.Unmarshal([]byte(rest), &res); err != nil {
						t.Fatal(err)
					}
				}
			}
			return res.Acked
		},
		remove: func(t *testing.T, path string) {
			if out, err := exec.Command("python3", counterPy, path, "0", "basic-remove").CombinedOutput(); err != nil {
				t.Fatalf("interop_counter.py basic-remove: %v\n%s", err, out)
			}
		},
	},
	{
		name: "flock+jq", need: []string{"flock", "jq"}, n: 30,
		incr: func(t *testing.T, path string, n int) int {
			out, err := exec.Command("sh", "-c", `acked=0
for i in $(seq "$2"); do
	flock "$1.lock" sh -c 'jq ".runs += 1" "$1" > "$1.jq" && mv "$1.jq" "$1"' sh "$1" && acked=$((acked+1))
done
echo "$acked"`, "sh", path, strconv.Itoa(n)).Output()
			if err != nil {
				t.Fatalf("flock+jq: %v", err)
			}
			acked, err := strconv.Atoi(strings.TrimSpace(string(out)))
			if err != nil {
				t.Fatal(err)
			}
			return acked
		},
		remove: func(t *testing.T, path string) {
			if out, err := exec.Command("flock", path+LockSuffix, "rm", path).CombinedOutput(); err != nil {
				t.Fatalf("flock rm: %v\n%s", err, out)
			}
		},
	},
}

// Failure 5: a transaction committed and crashed; then basic clients,
// which never recover transactions, change or remove a document of it.
// Recovery must not install the transaction's copy over their
// acknowledged writes: it reports a conflict and keeps the copy. The
// control installs it anyway (the conflict check off).
func TestRecoveryKeepsBasicClientsWrites(t *testing.T) {
	for _, c := range basicClients {
		n := c.n
		t.Run(c.name, func(t *testing.T) {
			for _, tool := range c.need {
				if _, err := exec.LookPath(tool); err != nil {
					t.Skipf("%s not found: make deps installs it", tool)
				}
			}
			noCheck := false // the control's conflict check is off
			increments := func(t *testing.T) (acked, lost int) {
				dir := t.TempDir()
				reg, task := txDocs(t, dir)
				seedTx(t, reg, task)
				crashCommitted(t, reg, task)
				acked = c.incr(t, task.Name(), n)
				_, err := task.Mutate(context.Background(), func(*Status) error { return nil })
				if !noCheck && (!errors.Is(err, ErrTxConflict) || !errNames(err, task.Name(), task.Name()+journal.ConflictSuffix)) {
					t.Fatalf("the next Mutate: %v, want ErrTxConflict naming the document and its copy", err)
				}
				got, err := task.Mutate(context.Background(), func(*Status) error { return nil })
				if err != nil {
					t.Fatalf("a retry: %v", err)
				}
				return acked, max(0, acked-got.Runs)
			}
			removal := func(t *testing.T) bool {
				dir := t.TempDir()
				reg, task := txDocs(t, dir)
				seedTx(t, reg, task)
				crashCommitted(t, reg, task)
				c.remove(t, task.Name())
				_, err := LoadAll(context.Background(), reg, task)
				if !noCheck && !errors.Is(err, ErrTxConflict) {
					t.Fatalf("LoadAll: %v, want ErrTxConflict", err)
				}
				_, serr := os.Lstat(task.Name())
				return serr == nil // it came back
			}
			acked, lost := increments(t)
			back := removal(t)
			setSeam(t, &txSeams(t).NoConflictCheck)
			noCheck = true
			cacked, clost := increments(t)
			cback := removal(t)
			t.Logf("%s: %d of %d acknowledged increments lost, removed document back %v; without the conflict check: %d of %d lost, back %v",
				c.name, lost, acked, back, clost, cacked, cback)
			if acked != n || lost > 0 || back {
				t.Errorf("acknowledged writes of a basic client were overwritten")
			}
			if clost == 0 || !cback {
				t.Errorf("CONTROL: without the conflict check nothing was lost: the harness cannot see the loss")
			}
		})
	}
}

// Failure 6: a transaction over the registry and a task crashed after its
// commit point; then the task's workspace is deleted as documented (Remove,
// then the directory). (a) the journal lies in the registry's directory:
// the registry must go on working and get its half (the earlier recovery
// synced the removed directory and failed for good with
// fs.ErrDurabilityUnknown); (b) the journal lies in the task's directory
// (the README's layout): the registry must get its half (without Remove
// completing the transaction first, deleting the directory deletes the
// journal, and the registry's half is undone without an error).
func TestWorkspaceDeletionCompletesTransaction(t *testing.T) {
	const rounds = 10
	ctx := context.Background()
	run := func(t *testing.T, taskDir string) (broken, notEmpty int) {
		for range rounds {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, taskDir), 0o755); err != nil {
				t.Fatal(err)
			}
			reg := NewStore[txReg](filepath.Join(dir, "registry.json"))
			task := NewStore[Status](filepath.Join(dir, taskDir, "status.json"))
			seedTx(t, reg, task)
			crashCommitted(t, reg, task)
			if legacyInUse {
				legacyMarkers(t, reg.Name(), task.Name())
			}
			if err := task.Remove(ctx); err != nil {
				t.Fatalf("Remove: %v", err)
			}
			if err := os.Remove(filepath.Dir(task.Name())); err != nil {
				notEmpty++
				os.RemoveAll(filepath.Dir(task.Name()))
			}
			r, err := reg.Mutate(ctx, func(*txReg) error { return nil })
			if err != nil || r.Active != 1 {
				if broken++; broken == 1 {
					t.Logf("registry after the deletion: %+v, %v", r, err)
				}
			}
		}
		return broken, notEmpty
	}
	// Journals go in the directory of the first document in path order.
	for _, c := range []struct{ name, taskDir string }{{"journal with the registry", "task"}, {"journal with the task", "42"}} {
		t.Run(c.name, func(t *testing.T) {
			broken, notEmpty := run(t, c.taskDir)
			t.Logf("%s: %d of %d registries broken or without their half, %d directories not empty after Remove", c.name, broken, rounds, notEmpty)
			if broken+notEmpty > 0 {
				t.Errorf("the deletion broke the transaction")
			}
			if c.taskDir == "task" {
				useLegacyRecovery(t, nil)
			} else {
				setSeam(t, &fileSeams(t).NoPendingCheck)
			}
			cbroken, _ := run(t, c.taskDir)
			t.Logf("CONTROL: %d of %d registries broken or without their half", cbroken, rounds)
			if cbroken == 0 {
				t.Errorf("CONTROL: nothing broke without the protection: the harness cannot see it")
			}
		})
	}
}

// Failure 7: two lockers recover two documents of one committed
// transaction at once. Each first looks at the other's marker (a barrier
// holds both there); neither may leave the journal behind for good. The
// control checks that the barrier holds each recoverer after a first look
// that found the other's marker still there: the state in which a recovery
// that never looks again keeps the journal.
func TestConcurrentRecoveriesOrphanNoJournal(t *testing.T) {
	needHooks(t)
	const rounds = 30
	var held atomic.Int64 // recoverers held at the barrier with the other's marker in place
	run := func(t *testing.T, barrier bool) (orphans int) {
		for range rounds {
			dir := t.TempDir()
			docs, stores := crashDocs(t, dir, 2)
			txSeams(t).Crash = func(step string) bool { return step == "committed" }
			_, err := MutateAll(context.Background(), docs, bumpAll(docs))
			txSeams(t).Crash = nil
			if !errors.Is(err, errCrashed) {
				t.Fatal(err)
			}
			var at sync.WaitGroup
			if barrier {
				at.Add(2)
				txSeams(t).Hook = func(event, name string) {
					if event == "cleanup" {
						for _, s := range stores {
							if _, err := os.Lstat(s.Name() + markerSuffix); s.Name() != name && err == nil {
								held.Add(1)
							}
						}
						at.Done()
						at.Wait()
					}
				}
			}
			var wg sync.WaitGroup
			for _, s := range stores {
				wg.Go(func() {
					if _, err := s.Mutate(context.Background(), func(*txReg) error { return nil }); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			txSeams(t).Hook = nil
			if l := leftovers(t, dir); len(l) > 0 {
				orphans++
			}
		}
		return orphans
	}
	barrier := run(t, true)
	free := run(t, false)
	t.Logf("journals left after %d rounds of two concurrent recoveries: %d with both looking first, %d free",
		rounds, barrier, free)
	if barrier+free > 0 {
		t.Errorf("journals orphaned")
	}
	if n := held.Load(); n != 2*rounds {
		t.Errorf("CONTROL: %d of %d recoverers were held after finding the other's marker: the harness does not reach the race", n, 2*rounds)
	}
}

// Failure 10: two hard links to one file are one document; MutateAll must
// refuse them (os.ErrInvalid) rather than give each name a file of its own.
func TestMutateAllRefusesHardLinks(t *testing.T) {
	const rounds = 10
	ctx := context.Background()
	splitLinks := false // the control's check of hard links is off
	run := func(t *testing.T) (split int) {
		for i := range rounds {
			dir := t.TempDir()
			a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
			if err := os.WriteFile(a, []byte(`{"runs":1}`), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Link(a, b); err != nil {
				t.Fatal(err)
			}
			sa, sb := NewStore[Status](a), NewStore[Status](b)
			_, _, err := MutateAll2(ctx, sa, sb, func(a, b *Status) error {
				a.Runs = 10 + i
				b.Runs = 20 + i
				return nil
			})
			fa, _ := os.Stat(a)
			fb, _ := os.Stat(b)
			if !os.SameFile(fa, fb) {
				split++
				continue
			}
			if !splitLinks && (!errors.Is(err, os.ErrInvalid) || !errNames(err, a, b)) {
				t.Fatalf("MutateAll over two links = %v, want os.ErrInvalid naming both", err)
			}
		}
		return split
	}
	split := run(t)
	setSeam(t, &fileSeams(t).SplitLinks)
	splitLinks = true
	control := run(t)
	t.Logf("%d of %d hard-linked pairs split; without the check %d", split, rounds, control)
	if split > 0 {
		t.Errorf("MutateAll split hard links")
	}
	if control == 0 {
		t.Errorf("CONTROL: without the check no link was split: the harness cannot see it")
	}
}

// The Python package (python/, through testdata/txn_agent.py) recovers by
// the same rules: it installs a committed
// transaction, undoes a torn marker, keeps a document a basic client
// replaced (conflict), and refuses a planted pipe without blocking.
func TestPythonAgentRecoveryRules(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not found: make deps installs it")
	}
	agent := filepath.Join("..", "internal", "proof", "status", "testdata", "txn_agent.py")
	recoverPy := func(path string) (string, error) {
		out, err := exec.Command("python3", agent, "recover", path).CombinedOutput()
		return string(out), err
	}
	t.Run("committed", func(t *testing.T) {
		dir := t.TempDir()
		reg, task := txDocs(t, dir)
		seedTx(t, reg, task)
		crashCommitted(t, reg, task)
		for _, p := range []string{reg.Name(), task.Name()} {
			if out, err := recoverPy(p); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
		}
		if n, err := checkSpawn(t, dir); err != nil || n != 1 {
			t.Fatalf("after the agent's recovery: %d, %v", n, err)
		}
		if l := leftovers(t, dir); len(l) > 0 {
			t.Fatalf("left: %v", l)
		}
	})
	t.Run("torn marker", func(t *testing.T) {
		dir := t.TempDir()
		reg, task := txDocs(t, dir)
		seedTx(t, reg, task)
		os.WriteFile(task.Name()+markerSuffix, nil, 0o644)
		os.WriteFile(task.Name()+txTempSuffix, []byte(`{"status":"running"}`), 0o644)
		if out, err := recoverPy(task.Name()); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if l := leftovers(t, dir); len(l) > 0 {
			t.Fatalf("left: %v", l)
		}
	})
	t.Run("conflict", func(t *testing.T) {
		dir := t.TempDir()
		reg, task := txDocs(t, dir)
		seedTx(t, reg, task)
		crashCommitted(t, reg, task)
		if got := basicClients[0].incr(t, task.Name(), 3); got != 3 {
			t.Fatalf("%d increments", got)
		}
		out, err := recoverPy(task.Name())
		if err == nil || !strings.Contains(out, "conflict") || !strings.Contains(out, journal.ConflictSuffix) {
			t.Fatalf("agent: %v: %s", err, out)
		}
		if s, err := task.Load(context.Background()); err != nil || s.Runs != 3 || s.State != Queued {
			t.Fatalf("the basic client's document: %+v, %v", s, err)
		}
	})
	t.Run("planted pipe", func(t *testing.T) {
		dir := t.TempDir()
		reg, task := txDocs(t, dir)
		seedTx(t, reg, task)
		if err := syscall.Mkfifo(task.Name()+markerSuffix, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := recoverPy(task.Name())
		if err == nil || !strings.Contains(out, "untrusted") {
			t.Fatalf("agent: %v: %s", err, out)
		}
	})
}
