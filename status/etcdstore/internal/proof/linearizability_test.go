package etcdstore_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/agentstate/core/internal/linhist"
	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/etcdstore"
)

// linDoc is the document of the linearizability histories: a counter and a
// string, changed by data operations ("inc", "set v") that the model can
// replay, and read back with Load.
type linDoc struct {
	N int    `json:"n"`
	S string `json:"s,omitempty"`
}

type linInput struct {
	Op    string // "inc", "set", "read"
	Value string // for "set"
}

type linOutput struct {
	Doc linDoc
	Err string // any error: never legal in a fault-free run
}

var linModel = porcupine.Model{
	Init: func() any { return linDoc{} },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(linDoc), input.(linInput), output.(linOutput)
		if out.Err != "" {
			return false, s
		}
		switch in.Op {
		case "inc":
			s.N++
		case "set":
			s.S = in.Value
		}
		return out.Doc == s, s
	},
	DescribeOperation: func(input, output any) string {
		return fmt.Sprintf("%+v -> %+v", input, output)
	},
}

const (
	linClients = 6
	linOps     = 120 // per client: 720 operations in all
)

// recordHistory runs linClients clients, each with its own clientv3.Client
// and Store, doing a random mix of increments, sets and reads on one
// document, and records every call and return on a shared logical clock.
func recordHistory(t *testing.T, opt func(i int) status.Option) []porcupine.Operation {
	t.Helper()
	ctx := testCtx(t)
	path := docPath(t)
	stores := make([]*status.Store[linDoc], linClients)
	for i := range stores {
		stores[i] = status.NewStore[linDoc](path, opt(i))
	}
	next := func(c, i int) linInput {
		switch r := rand.N(10); {
		case r < 5:
			return linInput{Op: "inc"}
		case r < 7:
			return linInput{Op: "set", Value: fmt.Sprintf("c%d-%d", c, i)}
		default:
			return linInput{Op: "read"}
		}
	}
	return linhist.Record(linClients, linOps, next, func(c int, in linInput) linOutput {
		var doc linDoc
		var err error
		switch in.Op {
		case "read":
			doc, err = stores[c].Load(ctx)
		case "inc":
			doc, err = stores[c].Mutate(ctx, func(d *linDoc) error { d.N++; return nil })
		case "set":
			doc, err = stores[c].Mutate(ctx, func(d *linDoc) error { d.S = in.Value; return nil })
		}
		out := linOutput{Doc: doc}
		if err != nil {
			out.Err = err.Error()
		}
		return out
	})
}

// TestLinearizable: histories of the etcd backend pass porcupine; the
// CONTROL (unguarded Get+Put) fails it in the same harness. Unknown (the
// checker timed out) fails the test.
func TestLinearizable(t *testing.T) {
	for _, tc := range []struct {
		name    string
		control bool
		opt     func(cli int) status.Option
	}{
		{"guarded", false, func(int) status.Option { return etcdstore.With(newClient(t)) }},
		// Goroutines of one service: one client, one With, group commit.
		{"guarded shared With", false, func() func(int) status.Option {
			opt := etcdstore.With(newClient(t))
			return func(int) status.Option { return opt }
		}()},
		{"bare", true, func(int) status.Option { return withBare(newClient(t)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ops := recordHistory(t, tc.opt)
			res, info := porcupine.CheckOperationsVerbose(linModel, ops, 60*time.Second)
			switch {
			case res == porcupine.Unknown:
				t.Fatalf("porcupine timed out on %d operations", len(ops))
			case tc.control && res != porcupine.Illegal:
				t.Fatalf("CONTROL history of %d operations checked %s; want Illegal (the harness cannot see lost updates)", len(ops), res)
			case !tc.control && res != porcupine.Ok:
				t.Fatalf("history of %d operations is %s:\n%s", len(ops), res, describeFailure(info))
			}
			t.Logf("%s: %d operations: %s", tc.name, len(ops), res)
		})
	}
}

// describeFailure prints the longest partial linearization porcupine found.
func describeFailure(info porcupine.LinearizationInfo) string {
	var longest []porcupine.Operation
	for _, part := range info.PartialLinearizationsOperations() {
		for _, l := range part {
			if len(l) > len(longest) {
				longest = l
			}
		}
	}
	s := "longest linearizable prefix:\n"
	for _, op := range longest {
		s += fmt.Sprintf("  client %d: %s\n", op.ClientId, linModel.DescribeOperation(op.Input, op.Output))
	}
	return s
}
