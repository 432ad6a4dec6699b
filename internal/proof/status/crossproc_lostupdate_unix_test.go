//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package status_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status"
)

// cpSeedDoc is the document every counter test starts from. x_seed is a
// field that status.Status does not declare: Go must keep its value bytes
// exactly (odd spacing and the 2.50 included), and readers use the known
// fields to tell a complete document from a torn one.
const cpSeedDoc = `{
  "status": "running",
  "agent": "crossproc",
  "repo": "core",
  "task": "t-1",
  "started_at": "2026-01-02T03:04:05Z",
  "updated_at": "2026-01-02T03:04:05Z",
  "runs": 0,
  "x_seed": {"keep":[1, 2.50,"three"],  "nested": {"a": null}}
}
`

const cpSeedExtra = `{"keep":[1, 2.50,"three"],  "nested": {"a": null}}`

var cpSeedStarted = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func cpSeed(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "status.json")
	if err := os.WriteFile(path, []byte(cpSeedDoc), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// cpRawFields decodes a document into its top-level fields with their raw
// value bytes.
func cpRawFields(t testing.TB, path string) map[string]json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s is not a JSON object: %v\n%s", path, err, b)
	}
	return m
}

// cpIncrement adds one to runs with the given writer.
func cpIncrement(writer, path string) error {
	switch writer {
	case "mutate":
		_, err := status.Mutate(context.Background(), path, func(s *status.Status) error {
			s.Runs++
			return nil
		})
		return err
	case "store":
		// A second program with its own, smaller view of the document:
		// every field it does not declare must survive its writes.
		_, err := status.NewStore[cpRunsOnly](path).Mutate(context.Background(), func(d *cpRunsOnly) error {
			d.Runs++
			return nil
		})
		return err
	case "bare":
		return cpBareIncrement(path)
	case "oldlock":
		return cpOldLockIncrement(path)
	case "mutex":
		// What an in-process lock alone gives: goroutines of one process
		// are serialised, processes are not.
		cpProcessMu.Lock()
		defer cpProcessMu.Unlock()
		return cpBareIncrement(path)
	}
	return fmt.Errorf("unknown writer %q", writer)
}

// cpRunsOnly is a partial view of the status document, as a second service
// with its own struct would have.
type cpRunsOnly struct {
	Runs int `json:"runs"`
}

// cpProcessMu serialises the "mutex" writer inside one child process.
var cpProcessMu sync.Mutex

// cpBareIncrement is the pattern Mutate replaces: read, change, write back —
// atomically (fs.WriteAtomic, so readers still see whole documents) but
// without the lock.
func cpBareIncrement(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	var n int
	if err := json.Unmarshal(m["runs"], &n); err != nil {
		return err
	}
	m["runs"] = json.RawMessage(strconv.Itoa(n + 1))
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return fs.WriteAtomic(path, append(out, '\n'), 0o644)
}

// cpReadStats is what one lock-free reader saw.
type cpReadStats struct {
	Reads     int
	Invalid   int      // reads that failed or returned an incomplete document
	Examples  []string // the first few invalid reads
	Decreases int      // times runs went down between two reads of this reader
}

func (r *cpReadStats) add(o cpReadStats) {
	r.Reads += o.Reads
	r.Invalid += o.Invalid
	r.Decreases += o.Decreases
	if len(r.Examples) < 5 {
		r.Examples = append(r.Examples, o.Examples...)
	}
}

// cpReader reads path without the lock once per tick (the writers of its
// process tick after each acknowledged increment, so reads interleave with
// writes without spinning the shared CPUs) until done is closed, then once
// more. Every read goes through status.Load and a raw decode: a complete
// document has the seed's fields, including the unknown one, and runs never
// goes down as one reader sees it.
func cpReader(path string, tick, done <-chan struct{}) cpReadStats {
	var st cpReadStats
	last := -1
	bad := func(format string, args ...any) {
		st.Invalid++
		if len(st.Examples) < 5 {
			st.Examples = append(st.Examples, fmt.Sprintf(format, args...))
		}
	}
	for stop := false; !stop; {
		select {
		case <-tick:
		case <-done:
			stop = true
		}
		st.Reads++
		s, err := status.Load(context.Background(), path)
		if err != nil {
			bad("status.Load: %v", err)
			continue
		}
		if s.State != status.Running || s.Agent != "crossproc" || s.Task != "t-1" || !s.StartedAt.Equal(cpSeedStarted) {
			bad("status.Load: incomplete document %+v", s)
			continue
		}
		if s.Runs < last {
			st.Decreases++
		}
		last = s.Runs
		b, err := os.ReadFile(path)
		if err != nil {
			bad("read: %v", err)
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			bad("raw document does not decode: %v: %q", err, b)
			continue
		}
		if m["x_seed"] == nil || m["runs"] == nil {
			bad("raw document lacks x_seed or runs: %q", b)
		}
	}
	return st
}

// cpCounterResult is a counter child's final report.
type cpCounterResult struct {
	Acked int // increments whose call returned nil
	Read  cpReadStats
}

var _ = cpRegister("counter", func(a cpArgs, w *cpReporter) error {
	if err := cpGate(w); err != nil {
		return err
	}
	done := make(chan struct{})
	tick := make(chan struct{}, 1)
	var rs cpReadStats
	var readers, writers sync.WaitGroup
	readers.Go(func() { rs = cpReader(a.Path, tick, done) })
	var acked atomic.Int64
	var firstErr atomic.Pointer[error]
	for range a.Goroutines {
		writers.Go(func() {
			for range a.Iterations {
				if err := cpIncrement(a.Writer, a.Path); err != nil {
					firstErr.CompareAndSwap(nil, &err)
					return
				}
				acked.Add(1)
				select {
				case tick <- struct{}{}:
				default:
				}
			}
		})
	}
	writers.Wait()
	close(done)
	readers.Wait()
	if p := firstErr.Load(); p != nil {
		return *p
	}
	return w.json("result", cpCounterResult{Acked: int(acked.Load()), Read: rs})
})

// cpCounterRun describes one run of the lost-update harness.
type cpCounterRun struct {
	procs, goroutines, iters int    // Go children
	writer                   string // "mutate", "store", "bare" or "mutex"; "mixed": mutate and store alternately
	python, pyIters          int    // python3 children and their increments each
	pyMode                   string // "lock" or "nolock"
}

type cpCounterOutcome struct {
	want, final int
	read        cpReadStats // the Go children's readers together
}

func (o cpCounterOutcome) lost() int { return o.want - o.final }

// cpRunCounter runs the children of r against the seeded document at path,
// all released at once, and returns the expected and the final count.
func cpRunCounter(t *testing.T, path string, r cpCounterRun) cpCounterOutcome {
	t.Helper()
	var children []*cpChild
	for i := range r.procs {
		writer := r.writer
		if writer == "mixed" {
			writer = []string{"mutate", "store"}[i%2]
		}
		children = append(children, cpStartGo(t, fmt.Sprintf("go child %d (%s)", i, writer), "counter",
			cpArgs{Path: path, Writer: writer, Goroutines: r.goroutines, Iterations: r.iters}))
	}
	for i := range r.python {
		cmd := exec.Command("python3", filepath.Join("testdata", "interop_counter.py"), path, strconv.Itoa(r.pyIters), r.pyMode)
		children = append(children, cpStart(t, fmt.Sprintf("python child %d", i), cmd, false))
	}
	cpRelease(t, children)

	var out cpCounterOutcome
	for i, c := range children {
		var res cpCounterResult
		c.expectJSON(t, "result", &res)
		c.mustExit(t)
		planned := r.goroutines * r.iters
		if i >= r.procs {
			planned = r.pyIters
		}
		if res.Acked != planned {
			t.Errorf("%s: %d increments acknowledged, want %d (every call should succeed)", c.name, res.Acked, planned)
		}
		out.want += res.Acked
		out.read.add(res.Read)
	}
	s, err := status.Load(context.Background(), path)
	if err != nil {
		t.Fatalf("final read: %v", err)
	}
	out.final = s.Runs
	return out
}

func TestCrossprocLostUpdates(t *testing.T) {
	t.Parallel()
	procs, goroutines, iters := 8, 8, 200
	if cpSoak() {
		iters = 400
	}
	path := cpSeed(t)
	// Half the processes use status.Mutate, half a Store of a struct that
	// declares only runs: both views share one lock and keep each other's
	// fields.
	out := cpRunCounter(t, path, cpCounterRun{procs: procs, goroutines: goroutines, iters: iters, writer: "mixed"})
	t.Logf("%d processes × %d goroutines × %d increments: final %d, want %d; %d lock-free reads", procs, goroutines, iters, out.final, out.want, out.read.Reads)
	if want := procs * goroutines * iters; out.want != want || out.final != want {
		t.Errorf("final count %d (acknowledged %d), want exactly %d: %d updates lost", out.final, out.want, want, want-out.final)
	}
	if out.read.Invalid != 0 || out.read.Decreases != 0 {
		t.Errorf("lock-free readers saw %d invalid documents and %d decreases of runs in %d reads; first: %q",
			out.read.Invalid, out.read.Decreases, out.read.Reads, out.read.Examples)
	}
	if got := string(cpRawFields(t, path)["x_seed"]); got != cpSeedExtra {
		t.Errorf("unknown field x_seed after %d Mutates = %s, want the seed's bytes %s", out.final, got, cpSeedExtra)
	}
}

// CONTROL: the bare read-modify-write in the same harness must lose
// updates, or the harness could not see the bug that status.Mutate fixes.
// Fewer iterations: every bare increment is its own durable write.
func TestCrossprocLostUpdatesControlBareRMW(t *testing.T) {
	procs, goroutines, iters := 8, 8, 10
	path := cpSeed(t)
	out := cpRunCounter(t, path, cpCounterRun{procs: procs, goroutines: goroutines, iters: iters, writer: "bare"})
	t.Logf("bare read-modify-write: final %d of %d: %d updates lost; readers saw runs go down %d times", out.final, out.want, out.lost(), out.read.Decreases)
	if out.lost() <= 0 {
		t.Fatalf("bare read-modify-write lost no update (final %d of %d): the harness cannot detect lost updates", out.final, out.want)
	}
	// The bare writer still replaces by rename, so readers see whole
	// documents: what it breaks is updates, not reads.
	if out.read.Invalid != 0 {
		t.Errorf("readers saw %d invalid documents: %q", out.read.Invalid, out.read.Examples)
	}
}

// CONTROL: a per-process mutex around the same read-modify-write (what a
// service gets from a sync.Mutex) must still lose updates
// across processes: the cross-process half of the lock is not optional.
func TestCrossprocLostUpdatesControlProcessMutexOnly(t *testing.T) {
	procs, goroutines, iters := 8, 8, 10
	path := cpSeed(t)
	out := cpRunCounter(t, path, cpCounterRun{procs: procs, goroutines: goroutines, iters: iters, writer: "mutex"})
	t.Logf("per-process mutex only: final %d of %d: %d updates lost", out.final, out.want, out.lost())
	if out.lost() <= 0 {
		t.Fatalf("per-process mutex lost no update across %d processes (final %d of %d): the harness cannot tell processes apart", procs, out.final, out.want)
	}
}
