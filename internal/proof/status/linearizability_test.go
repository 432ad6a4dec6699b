package status_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/internal/linhist"
	"github.com/agentstate/core/status"
	"github.com/anishathalye/porcupine"
)

// The linearizability model: the part of the status document the history
// touches. Inputs are data ("increment", "set note", "transition"), not
// closures, so that the checker can replay them.
type linState struct {
	Runs  int
	Note  string
	State status.State
}

type linInput struct {
	Op       string // "inc", "set", "transition", "read"
	Value    string // for "set"
	From, To status.State
}

type linOutput struct {
	linState
	Conflict bool   // the transition was refused; State is the state it found
	Err      string // any other error: never legal
}

var linModel = porcupine.Model{
	Init: func() any { return linState{State: status.Queued} },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(linState), input.(linInput), output.(linOutput)
		if out.Err != "" {
			return false, s
		}
		switch in.Op {
		case "read":
			return !out.Conflict && out.linState == s, s
		case "inc":
			s.Runs++
		case "set":
			s.Note = in.Value
		case "transition":
			if s.State != in.From {
				return out.Conflict && out.State == s.State, s
			}
			s.State = in.To
		}
		return !out.Conflict && out.linState == s, s
	},
	DescribeOperation: func(input, output any) string {
		return fmt.Sprintf("%+v -> %+v", input, output)
	},
}

// linCycle keeps transitions possible: queued → running → completed → queued.
var linCycle = [][2]status.State{
	{status.Queued, status.Running}, {status.Running, status.Completed}, {status.Completed, status.Queued},
}

// linRandomInput draws an operation with intN (rand.IntN, or a seeded
// generator's).
func linRandomInput(intN func(int) int, client, i int) linInput {
	switch r := intN(10); {
	case r < 3:
		return linInput{Op: "inc"}
	case r < 5:
		return linInput{Op: "set", Value: fmt.Sprintf("c%d-%d", client, i)}
	case r < 7:
		c := linCycle[intN(len(linCycle))]
		return linInput{Op: "transition", From: c[0], To: c[1]}
	default:
		return linInput{Op: "read"}
	}
}

// linRecord runs clients goroutines doing ops operations each through do,
// stamping call and return on one shared logical clock.
func linRecord(clients, ops int, do func(linInput) linOutput) []porcupine.Operation {
	return linhist.Record(clients, ops,
		func(c, i int) linInput { return linRandomInput(rand.IntN, c, i) },
		func(_ int, in linInput) linOutput { return do(in) })
}

func linSeed(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "status.json")
	if _, err := status.Mutate(context.Background(), path, func(s *status.Status) error {
		s.State = status.Queued
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return path
}

func project(s status.Status) linState { return linState{Runs: s.Runs, Note: s.Note, State: s.State} }

// linMutate performs in through the package under test.
func linMutate(path string) func(linInput) linOutput {
	return func(in linInput) linOutput {
		if in.Op == "read" {
			s, err := status.Load(context.Background(), path)
			if err != nil {
				return linOutput{Err: err.Error()}
			}
			return linOutput{linState: project(s)}
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
			return linOutput{linState: linState{State: ce.Current}, Conflict: true}
		}
		if err != nil {
			return linOutput{Err: err.Error()}
		}
		return linOutput{linState: project(s)}
	}
}

// linBare is the pattern Mutate replaces: read, change, write back atomically
// but without the lock.
func linBare(path string) func(linInput) linOutput {
	return func(in linInput) linOutput {
		s, err := status.Load(context.Background(), path)
		if err != nil {
			return linOutput{Err: err.Error()}
		}
		switch in.Op {
		case "read":
			return linOutput{linState: project(s)}
		case "inc":
			s.Runs++
		case "set":
			s.Note = in.Value
		case "transition":
			if err := s.Transition(in.To, in.From); err != nil {
				return linOutput{linState: linState{State: s.State}, Conflict: true}
			}
		}
		b, _ := json.Marshal(s)
		if err := fs.WriteAtomic(path, b, 0o644); err != nil {
			return linOutput{Err: err.Error()}
		}
		return linOutput{linState: project(s)}
	}
}

const linClients, linOps = 6, 50

func TestLinearizableInProcess(t *testing.T) {
	path := linSeed(t)
	history := linRecord(linClients, linOps, linMutate(path))
	res, info := porcupine.CheckOperationsVerbose(linModel, history, 30*time.Second)
	if res != porcupine.Ok {
		// Unknown (checker timeout) counts as failure too.
		t.Errorf("history of %d operations: %v, want Ok", len(history), res)
		if res == porcupine.Illegal {
			for _, p := range info.PartialLinearizationsOperations() {
				t.Logf("longest linearizable prefix ends after %d operations", len(p[0]))
				break
			}
		}
	}
}

// CONTROL: the same harness and checker must flag the unlocked pattern.
func TestLinearizableControlBareRMWIsFlagged(t *testing.T) {
	const attempts = 10
	for a := range attempts {
		path := linSeed(t)
		history := linRecord(linClients, linOps, linBare(path))
		if res := porcupine.CheckOperationsTimeout(linModel, history, 30*time.Second); res == porcupine.Illegal {
			t.Logf("bare read-modify-write flagged Illegal on attempt %d", a+1)
			return
		}
	}
	t.Fatalf("checker never flagged the unlocked read-modify-write in %d histories: the harness cannot see lost updates", attempts)
}
