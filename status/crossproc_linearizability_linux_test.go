//go:build linux

package status_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status"
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

// cpLinState is the part of the document the operations touch.
type cpLinState struct {
	Runs  int
	Note  string
	State status.State
}

// cpLinInput is an operation as data, so porcupine can replay it.
type cpLinInput struct {
	Op       string // "inc", "set", "transition", "read"
	Value    string // for "set"
	From, To status.State
}

type cpLinOutput struct {
	Doc      cpLinState
	Conflict bool   // a refused transition; Doc.State is the state found
	Err      string // any other error: never legal
}

type cpLinRecord struct {
	Client       int
	In           cpLinInput
	Out          cpLinOutput
	Call, Return int64 // CLOCK_MONOTONIC, nanoseconds
}

var cpLinModel = porcupine.Model{
	Init: func() any { return cpLinState{State: status.Queued} },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(cpLinState), input.(cpLinInput), output.(cpLinOutput)
		if out.Err != "" {
			return false, s
		}
		switch in.Op {
		case "read":
			return !out.Conflict && out.Doc == s, s
		case "inc":
			s.Runs++
		case "set":
			s.Note = in.Value
		case "transition":
			if s.State != in.From {
				return out.Conflict && out.Doc.State == s.State, s
			}
			s.State = in.To
		}
		return !out.Conflict && out.Doc == s, s
	},
	DescribeOperation: func(input, output any) string {
		return fmt.Sprintf("%+v -> %+v", input, output)
	},
}

// cpLinCycle keeps transitions possible: queued → running → completed → queued.
var cpLinCycle = [][2]status.State{
	{status.Queued, status.Running}, {status.Running, status.Completed}, {status.Completed, status.Queued},
}

func cpLinRandomInput(rng *rand.Rand, client, i int) cpLinInput {
	switch r := rng.IntN(10); {
	case r < 3:
		return cpLinInput{Op: "inc"}
	case r < 5:
		return cpLinInput{Op: "set", Value: fmt.Sprintf("c%d-%d", client, i)}
	case r < 7:
		c := cpLinCycle[rng.IntN(len(cpLinCycle))]
		return cpLinInput{Op: "transition", From: c[0], To: c[1]}
	default:
		return cpLinInput{Op: "read"}
	}
}

func cpMonotonic() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err) // cannot fail on Linux with a valid clock id and pointer
	}
	return ts.Nano()
}

func cpProject(s status.Status) cpLinState {
	return cpLinState{Runs: s.Runs, Note: s.Note, State: s.State}
}

// cpLinApply performs in through status.Mutate/Read.
func cpLinApply(path string, in cpLinInput) cpLinOutput {
	if in.Op == "read" {
		s, err := status.Read(path)
		if err != nil {
			return cpLinOutput{Err: err.Error()}
		}
		return cpLinOutput{Doc: cpProject(s)}
	}
	s, err := status.Mutate(context.Background(), path, func(s *status.Status) error {
		switch in.Op {
		case "inc":
			s.Runs++
		case "set":
			s.Note = in.Value
		case "transition":
			return s.Transition(in.To, in.From)
		}
		return nil
	})
	var ce *status.ConflictError
	if errors.As(err, &ce) {
		return cpLinOutput{Doc: cpLinState{State: ce.Current}, Conflict: true}
	}
	if err != nil {
		return cpLinOutput{Err: err.Error()}
	}
	return cpLinOutput{Doc: cpProject(s)}
}

// cpLinBare performs in with the unlocked read-modify-write (os.ReadFile,
// encoding/json, fs.WriteAtomic): the pattern P4-9 replaces.
func cpLinBare(path string, in cpLinInput) cpLinOutput {
	b, err := os.ReadFile(path)
	if err != nil {
		return cpLinOutput{Err: err.Error()}
	}
	var s status.Status
	if err := json.Unmarshal(b, &s); err != nil {
		return cpLinOutput{Err: err.Error()}
	}
	switch in.Op {
	case "read":
		return cpLinOutput{Doc: cpProject(s)}
	case "inc":
		s.Runs++
	case "set":
		s.Note = in.Value
	case "transition":
		if err := s.Transition(in.To, in.From); err != nil {
			return cpLinOutput{Doc: cpLinState{State: s.State}, Conflict: true}
		}
	}
	out, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return cpLinOutput{Err: err.Error()}
	}
	if err := fs.WriteAtomic(path, append(out, '\n'), 0o644); err != nil {
		return cpLinOutput{Err: err.Error()}
	}
	return cpLinOutput{Doc: cpProject(s)}
}

var _ = cpRegister("lin", func(a cpArgs, w *cpReporter) error {
	do := cpLinApply
	if a.Writer == "bare" {
		do = cpLinBare
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
				in := cpLinRandomInput(rng, client, i)
				call := cpMonotonic()
				out := do(a.Path, in)
				ret := cpMonotonic()
				records[g] = append(records[g], cpLinRecord{Client: client, In: in, Out: out, Call: call, Return: ret})
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
	return cpLinHistoryWithPython(t, writer, procs, clients, 0, ops)
}

// cpLinHistoryWithPython adds python clients (testdata/interop_lin.py, one
// client per process) to the Go children.
func cpLinHistoryWithPython(t *testing.T, writer string, procs, clients, python, ops int) []porcupine.Operation {
	t.Helper()
	path := filepath.Join(t.TempDir(), "status.json")
	if _, err := status.Mutate(context.Background(), path, func(s *status.Status) error {
		s.State = status.Queued
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	seed := rand.Uint64()
	var children []*cpChild
	for p := range procs {
		children = append(children, cpStartGo(t, fmt.Sprintf("lin child %d", p), "lin",
			cpArgs{Path: path, Writer: writer, Goroutines: clients, Iterations: ops, Client: p * clients, Seed: seed}))
	}
	for i := range python {
		client := procs*clients + i
		cmd := exec.Command("python3", filepath.Join("testdata", "interop_lin.py"), path, strconv.Itoa(ops), strconv.Itoa(client), strconv.FormatUint(seed, 10))
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
			history = append(history, porcupine.Operation{ClientId: r.Client, Input: r.In, Call: r.Call, Output: r.Out, Return: r.Return})
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
		if porcupine.Visualize(cpLinModel, info, f) == nil {
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
		res, info := porcupine.CheckOperationsVerbose(cpLinModel, history, 60*time.Second)
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
		if res := porcupine.CheckOperationsTimeout(cpLinModel, history, 60*time.Second); res == porcupine.Illegal {
			t.Logf("unlocked read-modify-write flagged Illegal on attempt %d", a+1)
			return
		}
	}
	t.Fatalf("checker never flagged the unlocked read-modify-write across processes in %d histories: the harness cannot see lost updates", attempts)
}

// Python clients following the documented protocol (interop_lin.py, with
// the same CLOCK_MONOTONIC stamps) join Go processes in one history: the
// history must still be linearizable.
func TestCrossprocLinearizableWithPython(t *testing.T) {
	cpNeedPython(t)
	const procs, clients, python, ops = 2, 2, 2, 80
	history := cpLinHistoryWithPython(t, "mutate", procs, clients, python, ops)
	res, info := porcupine.CheckOperationsVerbose(cpLinModel, history, 60*time.Second)
	if res != porcupine.Ok {
		t.Errorf("history of %d operations (%d Go processes × %d clients, %d python clients): %v, want Ok", len(history), procs, clients, python, res)
		cpLinVisualize(t, res, info)
		return
	}
	t.Logf("history of %d operations (%d from python) linearizable", len(history), python*ops)
}
