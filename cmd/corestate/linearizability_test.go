package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/agentstate/core/internal/linhist"
)

// The part of the document the history touches.
type linState struct {
	Runs   int
	Status string
}

type linInput struct {
	Op       string // "incr", "move" (set status=To --if status=From), "get"
	From, To string
}

type linOutput struct {
	linState      // the document printed (committed, or read by get)
	Conflict bool // exit 8: nothing was written
	Err      string
}

var linModel = porcupine.Model{
	Init: func() any { return linState{Status: "queued"} },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(linState), input.(linInput), output.(linOutput)
		if out.Err != "" {
			return false, s
		}
		switch in.Op {
		case "get":
			return !out.Conflict && out.linState == s, s
		case "incr":
			s.Runs++
		case "move":
			if s.Status != in.From {
				return out.Conflict, s
			}
			s.Status = in.To
		}
		return !out.Conflict && out.linState == s, s
	},
	DescribeOperation: func(input, output any) string { return fmt.Sprintf("%+v -> %+v", input, output) },
}

// The cycle keeps moves possible; completed → queued needs the --if that
// names the final state.
var linCycle = [][2]string{{"queued", "running"}, {"running", "completed"}, {"completed", "queued"}}

// linRecord runs clients goroutines of ops random operations each through
// do, stamping call and return on one logical clock.
func linRecord(clients, ops int, do func(linInput) linOutput) []porcupine.Operation {
	return linhist.Record(clients, ops, func(int, int) linInput {
		switch r := rand.N(10); {
		case r < 4:
			return linInput{Op: "incr"}
		case r < 7:
			m := linCycle[rand.N(len(linCycle))]
			return linInput{Op: "move", From: m[0], To: m[1]}
		default:
			return linInput{Op: "get"}
		}
	}, func(_ int, in linInput) linOutput { return do(in) })
}

// runDoc runs corestate and decodes the document it prints; exit 8 is a
// conflict, any other failure an error.
func runDoc(args ...string) linOutput {
	var out, errOut bytes.Buffer
	switch code := run(args, &out, &errOut); code {
	case exitOK:
	case exitConflict:
		return linOutput{Conflict: true}
	default:
		return linOutput{Err: fmt.Sprintf("%q: exit %d: %s", args, code, errOut.String())}
	}
	var s linState
	if err := json.Unmarshal(out.Bytes(), &s); err != nil {
		return linOutput{Err: err.Error()}
	}
	return linOutput{linState: s}
}

func linSeed(t *testing.T) string {
	t.Helper()
	path := tempFile(t, "status.json")
	if code := run([]string{"set", path, "status=queued"}, io.Discard, io.Discard); code != exitOK {
		t.Fatalf("seed: exit %d", code)
	}
	return path
}

// TestLinearizable: concurrent incr, guarded moves and lock-free gets form
// a linearizable history of one register {runs, status}.
func TestLinearizable(t *testing.T) {
	path := linSeed(t)
	history := linRecord(4, 25, func(in linInput) linOutput {
		switch in.Op {
		case "incr":
			return runDoc("incr", path, "runs")
		case "move":
			return runDoc("set", path, "status="+in.To, "--if", "status="+in.From)
		}
		return runDoc("get", path)
	})
	if res, _ := porcupine.CheckOperationsVerbose(linModel, history, 30*time.Second); res != porcupine.Ok {
		t.Fatalf("history of %d operations is not linearizable (%s)", len(history), res)
	}
}

// TestLinearizableControl: the same harness with each move done as a
// script did before --if (get status, compare, then an unguarded set that
// names the final state it saw, as a script overriding the rule would)
// must produce a non-linearizable history.
func TestLinearizableControl(t *testing.T) {
	for attempt := 1; ; attempt++ {
		path := linSeed(t)
		history := linRecord(4, 25, func(in linInput) linOutput {
			switch in.Op {
			case "incr":
				return runDoc("incr", path, "runs")
			case "move":
				var out bytes.Buffer
				if code := run([]string{"get", path, "status"}, &out, io.Discard); code != exitOK {
					return linOutput{Err: fmt.Sprintf("get: exit %d", code)}
				}
				if strings.TrimSpace(out.String()) != in.From {
					return linOutput{Conflict: true}
				}
				return runDoc("set", path, "status="+in.To, "--if", "status="+strings.ReplaceAll(stateList(), " ", ""))
			}
			return runDoc("get", path)
		})
		if res, _ := porcupine.CheckOperationsVerbose(linModel, history, 30*time.Second); res == porcupine.Illegal {
			t.Logf("attempt %d: get-then-set moves gave a non-linearizable history, as expected", attempt)
			return
		}
		if attempt == 5 {
			t.Fatal("CONTROL: get-then-set moves stayed linearizable in 5 runs: the checker does not see the race")
		}
	}
}
