//go:build linux

package status_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"golang.org/x/sys/unix"
)

// Linearizability across processes. Each child process runs a few clients
// (goroutines) that apply random operations to one status document and
// stamp each operation's call and return with CLOCK_MONOTONIC, which on
// Linux is one clock for the whole machine (Go's monotonic time.Now reading
// is only comparable inside one process). The parent merges the children's
// records into one porcupine history.
//
// Stamps are sound for the checker: the call stamp is taken before the
// operation starts and the return stamp after it ended, so every real
// interval lies within its recorded one; porcupine orders equal stamps call
// before return, which only makes more operations concurrent.

// cpLinOutput is linOutput as the children (and interop_lin.py) report
// it: the state under "Doc".
type cpLinOutput struct {
	Doc      linState
	Conflict bool   // a refused transition; Doc.State is the state found
	Err      string // any other error: never legal
}

func cpLinWire(o linOutput) cpLinOutput {
	return cpLinOutput{Doc: o.linState, Conflict: o.Conflict, Err: o.Err}
}

func (o cpLinOutput) lin() linOutput {
	return linOutput{linState: o.Doc, Conflict: o.Conflict, Err: o.Err}
}

type cpLinRecord struct {
	Client       int
	In           linInput
	Out          cpLinOutput
	Call, Return int64 // CLOCK_MONOTONIC, nanoseconds
}

func cpMonotonic() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err) // cannot fail on Linux with a valid clock id and pointer
	}
	return ts.Nano()
}

var _ = cpRegister("lin", func(a cpArgs, w *cpReporter) error {
	do := linMutate(a.Path)
	if a.Writer == "bare" {
		do = linBare(a.Path)
	}
	if err := cpGate(w); err != nil {
		return err
	}
	records := make([][]cpLinRecord, a.Goroutines)
	var wg sync.WaitGroup
	for g := range a.Goroutines {
		client := a.Client + g
		rng := rand.New(rand.NewPCG(a.Seed, uint64(client)))
		wg.Go(func() {
			for i := range a.Iterations {
				in := linRandomInput(rng.IntN, client, i)
				call := cpMonotonic()
				out := do(in)
				ret := cpMonotonic()
				records[g] = append(records[g], cpLinRecord{Client: client, In: in, Out: cpLinWire(out), Call: call, Return: ret})
			}
		})
	}
	wg.Wait()
	for _, rs := range records {
		for _, r := range rs {
			if err := w.json("op", r); err != nil {
				return err
			}
		}
	}
	return w.line("end")
})

// cpLinHistory runs procs children of clients goroutines each, ops
// operations per client, and returns the merged history.
func cpLinHistory(t *testing.T, writer string, procs, clients, ops int) []porcupine.Operation {
	return cpLinHistoryWithPython(t, writer, procs, clients, 0, "", ops)
}

// cpLinHistoryWithPython adds python clients (testdata/interop_lin.py, one
// client per process, in pyMode "lock" or, for a CONTROL, "bare") to the Go
// children.
func cpLinHistoryWithPython(t *testing.T, writer string, procs, clients, python int, pyMode string, ops int) []porcupine.Operation {
	t.Helper()
	path := linSeed(t)
	seed := rand.Uint64()
	var children []*cpChild
	for p := range procs {
		children = append(children, cpStartGo(t, fmt.Sprintf("lin child %d", p), "lin",
			cpArgs{Path: path, Writer: writer, Goroutines: clients, Iterations: ops, Client: p * clients, Seed: seed}))
	}
	for i := range python {
		client := procs*clients + i
		cmd := exec.Command("python3", filepath.Join("testdata", "interop_lin.py"), path, strconv.Itoa(ops), strconv.Itoa(client), strconv.FormatUint(seed, 10), pyMode)
		children = append(children, cpStart(t, fmt.Sprintf("python client %d", client), cmd, false))
	}
	cpRelease(t, children)
	var history []porcupine.Operation
	for _, c := range children {
		for {
			l, ok := c.next()
			if l == "end" {
				break
			}
			var r cpLinRecord
			if !ok || len(l) < 3 || l[:3] != "op " || json.Unmarshal([]byte(l[3:]), &r) != nil {
				c.abort(ok)
				t.Fatalf("%s: bad report %q (eof=%v): %v\n%s", c.name, l, !ok, c.err, c.stderr.String())
			}
			if r.Out.Err != "" {
				t.Errorf("%s: client %d: %+v failed: %s", c.name, r.Client, r.In, r.Out.Err)
			}
			history = append(history, porcupine.Operation{ClientId: r.Client, Input: r.In, Call: r.Call, Output: r.Out.lin(), Return: r.Return})
		}
		c.mustExit(t)
	}
	if want := (procs*clients + python) * ops; len(history) != want {
		t.Fatalf("history has %d operations, want %d", len(history), want)
	}
	return history
}

// cpLinVisualize writes porcupine's visualization of an Illegal history
// outside t.TempDir, so that it survives the test.
func cpLinVisualize(t *testing.T, res porcupine.CheckResult, info porcupine.LinearizationInfo) {
	t.Helper()
	if res != porcupine.Illegal {
		return
	}
	if f, err := os.CreateTemp("", "crossproc-linearizability-*.html"); err == nil {
		if porcupine.Visualize(linModel, info, f) == nil {
			t.Logf("visualization: %s", f.Name())
		}
		f.Close()
	}
}

const cpLinProcs, cpLinClients, cpLinOps = 4, 2, 100

func TestCrossprocLinearizable(t *testing.T) {
	rounds := 1
	if cpSoak() {
		rounds = 3
	}
	for range rounds {
		history := cpLinHistory(t, "mutate", cpLinProcs, cpLinClients, cpLinOps)
		// Unknown (the checker ran out of time) fails as well as Illegal.
		res, info := porcupine.CheckOperationsVerbose(linModel, history, 60*time.Second)
		if res != porcupine.Ok {
			t.Errorf("history of %d operations from %d processes: %v, want Ok", len(history), cpLinProcs, res)
			cpLinVisualize(t, res, info)
			return
		}
	}
	t.Logf("%d histories of %d operations (%d processes × %d clients) linearizable", rounds, cpLinProcs*cpLinClients*cpLinOps, cpLinProcs, cpLinClients)
}

// CONTROL: the same harness and checker must flag the unlocked
// read-modify-write across processes.
func TestCrossprocLinearizableControlBareRMW(t *testing.T) {
	const attempts = 5
	for a := range attempts {
		history := cpLinHistory(t, "bare", cpLinProcs, cpLinClients, cpLinOps)
		if res := porcupine.CheckOperationsTimeout(linModel, history, 60*time.Second); res == porcupine.Illegal {
			t.Logf("unlocked read-modify-write flagged Illegal on attempt %d", a+1)
			return
		}
	}
	t.Fatalf("checker never flagged the unlocked read-modify-write across processes in %d histories: the harness cannot see lost updates", attempts)
}

// Python clients of the Python package (interop_lin.py, with the same
// CLOCK_MONOTONIC stamps) join Go processes in one history: the history
// must still be linearizable.
func TestCrossprocLinearizableWithPython(t *testing.T) {
	cpNeedPython(t)
	const procs, clients, python, ops = 2, 2, 2, 80
	history := cpLinHistoryWithPython(t, "mutate", procs, clients, python, "lock", ops)
	res, info := porcupine.CheckOperationsVerbose(linModel, history, 60*time.Second)
	if res != porcupine.Ok {
		t.Errorf("history of %d operations (%d Go processes × %d clients, %d python clients): %v, want Ok", len(history), procs, clients, python, res)
		cpLinVisualize(t, res, info)
		return
	}
	t.Logf("history of %d operations (%d from python) linearizable", len(history), python*ops)
}

// CONTROL: the same history with the Python clients' changes made without
// the lock must be flagged.
func TestCrossprocLinearizableWithPythonControlBare(t *testing.T) {
	cpNeedPython(t)
	const attempts = 5
	for a := range attempts {
		history := cpLinHistoryWithPython(t, "mutate", 2, 2, 3, "bare", 80)
		if res := porcupine.CheckOperationsTimeout(linModel, history, 60*time.Second); res == porcupine.Illegal {
			t.Logf("python without the lock flagged Illegal on attempt %d", a+1)
			return
		}
	}
	t.Fatalf("checker never flagged python clients that skip the lock in %d histories: the harness cannot see what Python's lock prevents", attempts)
}
