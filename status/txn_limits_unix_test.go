//go:build unix

package status

// A transaction's commit must stay within what its recovery accepts
// (journal.CheckLimits): at each limit it commits, one byte or one document
// past it MutateAll refuses with ErrTxTooLarge and writes nothing. The
// SIGKILL test shows what the refusal prevents: a commit past a limit,
// killed after its commit point, leaves documents that every locker refuses
// for good (the CONTROL switches the writer's check off).

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentstate/core/status/internal/journal"
)

// limitDoc is a document of the limit tests: a count and padding.
type limitDoc struct {
	N   int    `json:"n"`
	Pad string `json:"pad,omitempty"`
}

// deepDir makes and returns a directory under root whose path is exactly
// n bytes long (n > len(root)+2), of names of at most 200 bytes.
func deepDir(root string, n int) (string, error) {
	d := root
	for len(d) < n {
		k := min(200, n-len(d)-1)
		if rest := n - len(d) - 1 - k; rest > 0 && rest < 2 {
			k-- // leave room for one more "/x"
		}
		d += "/" + strings.Repeat("d", k)
	}
	if len(d) != n {
		return "", fmt.Errorf("deepDir: %d bytes, want %d", len(d), n)
	}
	return d, os.MkdirAll(d, 0o755)
}

// limitShape makes the documents of a transaction at one of the limits, or
// one past it (over), and returns their paths: "documents" (1024
// documents), "journal" (a journal of exactly 1 MiB), "marker" (markers of
// exactly 4 KiB: a document's hash and the journal's path in a directory of
// 4000 bytes).
func limitShape(root, shape string, over bool) ([]string, error) {
	extra := 0
	if over {
		extra = 1
	}
	var docs []string
	switch shape {
	case "documents":
		for i := range journal.MaxDocuments + extra {
			docs = append(docs, filepath.Join(root, fmt.Sprintf("doc-%04d.json", i)))
		}
	case "journal":
		// {"documents":[ "p1","p2",... ]} and a newline: 17 bytes, and
		// each path with its quotes and a comma (none after the last).
		const n = 400
		d, err := deepDir(root, 2450)
		if err != nil {
			return nil, err
		}
		fixed := 17 + n*(len(d)+1+2) + n - 1
		names := journal.MaxJournal + extra - fixed
		for i := range n {
			k := names / (n - i)
			names -= k
			docs = append(docs, d+"/"+fmt.Sprintf("%04d", i)+strings.Repeat("x", k-4))
		}
	case "marker":
		d, err := deepDir(root, 4000+extra)
		if err != nil {
			return nil, err
		}
		docs = []string{d + "/a.json", d + "/b.json"}
	default:
		return nil, fmt.Errorf("no shape %q", shape)
	}
	for _, d := range docs {
		if err := os.WriteFile(d, []byte(`{"n": 0}`), 0o644); err != nil {
			return nil, err
		}
	}
	return docs, nil
}

// limitRoot returns a new directory for a limit test: in /dev/shm where
// there is one, where thousands of syncs cost nothing (these tests are
// about what is written, not about its durability).
func limitRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "status-limits-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func limitDocs(t *testing.T, root, shape string, over bool) []string {
	t.Helper()
	docs, err := limitShape(root, shape, over)
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

func limitStores(docs []string, opts ...Option) []AnyStore {
	stores := make([]AnyStore, len(docs))
	for i, d := range docs {
		stores[i] = NewStore[limitDoc](d, opts...)
	}
	return stores
}

// bumpEach adds one to every document of a transaction.
func bumpEach(stores []AnyStore) func(*Tx) error {
	return func(tx *Tx) error {
		for _, s := range stores {
			v, err := s.(*Store[limitDoc]).In(tx)
			if err != nil {
				return err
			}
			v.N++
		}
		return nil
	}
}

// counts returns each document's count, read by Load.
func counts(t testing.TB, docs []string) []int {
	t.Helper()
	n := make([]int, len(docs))
	for i, d := range docs {
		v, err := NewStore[limitDoc](d).Load(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		n[i] = v.N
	}
	return n
}

func allEqual(n []int, want int) bool {
	for _, v := range n {
		if v != want {
			return false
		}
	}
	return true
}

func TestMutateAllLimits(t *testing.T) {
	for _, shape := range []string{"documents", "journal", "marker"} {
		for _, over := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/over=%v", shape, over), func(t *testing.T) {
				dir := limitRoot(t)
				docs := limitDocs(t, dir, shape, over)
				stores := limitStores(docs)
				_, err := MutateAll(context.Background(), stores, bumpEach(stores))
				switch {
				case !over && err != nil:
					t.Fatalf("at the limit: %v", err)
				case !over && !allEqual(counts(t, docs), 1):
					t.Fatal("at the limit: not every document was committed")
				case over && !errors.Is(err, ErrTxTooLarge):
					t.Fatalf("one past the limit: MutateAll = %v, want ErrTxTooLarge", err)
				case over && !allEqual(counts(t, docs), 0):
					t.Fatal("one past the limit: a document changed")
				}
				if l := leftovers(t, dir); len(l) > 0 {
					t.Fatalf("left behind: %v", l[:min(len(l), 3)])
				}
				t.Logf("%v", err)
			})
		}
	}
}

// A new content larger than its document's size limit (WithMaxSize) is
// refused: recovery would refuse to install it.
func TestMutateAllNewContentLimit(t *testing.T) {
	const limit = 200
	// The layout of {"n": 1, "pad": "..."}: the padding is what is left.
	pad := limit - len("{\n  \"n\": 1,\n  \"pad\": \"\"\n}\n")
	for _, over := range []bool{false, true} {
		t.Run(fmt.Sprintf("over=%v", over), func(t *testing.T) {
			dir := t.TempDir()
			docs := []string{filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")}
			stores := limitStores(docs, WithMaxSize(limit))
			n := pad
			if over {
				n++
			}
			_, err := MutateAll(context.Background(), stores, func(tx *Tx) error {
				for _, s := range stores {
					v, err := s.(*Store[limitDoc]).In(tx)
					if err != nil {
						return err
					}
					v.N, v.Pad = 1, strings.Repeat("p", n)
				}
				return nil
			})
			switch {
			case !over && err != nil:
				t.Fatalf("at the limit: %v", err)
			case over && !errors.Is(err, ErrTxTooLarge):
				t.Fatalf("one byte past the limit: MutateAll = %v, want ErrTxTooLarge", err)
			}
			for _, d := range docs {
				fi, err := os.Stat(d)
				switch {
				case over && !errors.Is(err, os.ErrNotExist):
					t.Fatalf("one byte past the limit: %s written (%v)", d, err)
				case !over && (err != nil || fi.Size() != limit):
					t.Fatalf("at the limit: %s: %v, want %d bytes", d, err, limit)
				}
			}
		})
	}
}

// The child of TestMutateAllPastLimitSIGKILL: commits one past the shape's
// limit in the directory, dying by SIGKILL at the commit point.
const (
	limitKillShape   = "STATUS_LIMIT_KILL_SHAPE"
	limitKillDir     = "STATUS_LIMIT_KILL_DIR"
	limitKillControl = "STATUS_LIMIT_KILL_CONTROL"
)

func init() {
	if os.Getenv(limitKillShape) != "" {
		limitKillChild()
	}
}

func limitKillChild() {
	s := journal.TestSeams() // the parent skipped in a build without them
	s.NoLimits = os.Getenv(limitKillControl) != ""
	s.Crash = func(step string) bool {
		if step == "committed" {
			os.Stdout.WriteString("dying\n")
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
		return false
	}
	docs, err := limitShape(os.Getenv(limitKillDir), os.Getenv(limitKillShape), true)
	if err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	stores := limitStores(docs)
	_, err = MutateAll(context.Background(), stores, bumpEach(stores))
	fmt.Printf("refused %v\n", errors.Is(err, ErrTxTooLarge))
	os.Exit(0)
}

// One past each limit, a committing child is SIGKILLed at its commit point
// (if it reaches it). Then every document must be usable by the next
// locker, all of the transaction or none of it. The CONTROL is the writer
// without its check: it commits, dies, and leaves documents that every
// locker refuses with ErrTxUntrusted.
func TestMutateAllPastLimitSIGKILL(t *testing.T) {
	needHooks(t)
	for _, shape := range []string{"documents", "journal", "marker"} {
		for _, control := range []bool{false, true} {
			name := shape
			if control {
				name += "/CONTROL_no_check"
			}
			t.Run(name, func(t *testing.T) {
				dir := limitRoot(t)
				docs := limitDocs(t, dir, shape, true)
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), limitKillShape+"="+shape, limitKillDir+"="+dir)
				if control {
					cmd.Env = append(cmd.Env, limitKillControl+"=1")
				}
				out, _ := cmd.StdoutPipe()
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				line, _ := bufio.NewReader(out).ReadString('\n')
				cmd.Wait()
				blocked, applied := 0, 0
				var first error
				for _, d := range docs {
					if control && blocked > 0 {
						break // one is enough, and each costs a parse of the journal
					}
					v, err := NewStore[limitDoc](d).Mutate(context.Background(), func(*limitDoc) error { return nil })
					switch {
					case errors.Is(err, ErrTxUntrusted):
						blocked++
						if first == nil {
							first = err
						}
					case err != nil:
						t.Fatal(err)
					case v.N == 1:
						applied++
					}
				}
				t.Logf("child: %q; %d documents blocked, %d applied; %v", strings.TrimSpace(line), blocked, applied, first)
				switch {
				case control && blocked == 0:
					t.Fatal("CONTROL: the unchecked commit killed after its commit point blocked no document: the harness cannot see the failure")
				case control:
				case line != "refused true\n":
					t.Fatalf("child reported %q, want the commit refused", line)
				case blocked > 0 || applied > 0:
					t.Fatalf("%d documents blocked, %d applied after a refused commit", blocked, applied)
				}
			})
		}
	}
}
