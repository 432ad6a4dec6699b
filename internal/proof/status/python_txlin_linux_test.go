//go:build linux

package status_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/agentstate/core/status"
	"github.com/anishathalye/porcupine"
)

// Transactions of the Python package (python/, import agentstate; driven
// by testdata/txlin.py) in one history with the Go package's, over the two
// documents of the transaction linearizability test: Python clients
// commit transactions, Mutate one document and read both under their
// locks next to Go processes doing the same. The merged history must be
// linearizable and the final counts must hold every operation (0 lost).
// The CONTROL makes each Python transaction two mutate calls: the checker
// must reject the history.

func pyTxLinClient(mode string, ops int) func(t *testing.T, dir string, seed uint64, client int) *cpChild {
	return func(t *testing.T, dir string, seed uint64, client int) *cpChild {
		cmd := exec.Command("python3", filepath.Join("testdata", "txlin.py"), dir, strconv.Itoa(ops), strconv.Itoa(client), strconv.FormatUint(seed, 10), mode)
		return cpStart(t, fmt.Sprintf("python txlin client %d", client), cmd, false)
	}
}

// txLinSum returns the counts every operation of the history adds up to.
func txLinSum(hist []porcupine.Operation) (a, b int) {
	for _, op := range hist {
		in := op.Input.(txLinIn)
		switch in.Op {
		case "tx":
			a, b = a+in.DA, b+in.DB
		case "a":
			a += in.DA
		case "b":
			b += in.DA
		}
	}
	return a, b
}

func TestTxLinearizableWithPython(t *testing.T) {
	cpNeedPython(t)
	const procs, goroutines, python, ops = 2, 2, 2, 30
	var dir string
	capture := func(t *testing.T, d string, seed uint64, client int) *cpChild {
		dir = d
		return pyTxLinClient("tx", ops)(t, d, seed, client)
	}
	hist := txLinHistory(t, "tx", procs, goroutines, ops, capture, pyTxLinClient("tx", ops))
	if want := (procs*goroutines + python) * ops; len(hist) != want {
		t.Fatalf("history of %d operations, want %d", len(hist), want)
	}
	res := porcupine.CheckOperationsTimeout(txLinModel, hist, time.Minute)
	if res != porcupine.Ok {
		t.Fatalf("history of %d operations (%d from Python) over two documents: %v, want linearizable", len(hist), python*ops, res)
	}
	d := openTxLinDocs(dir)
	tx, err := status.LoadAll(context.Background(), d.a, d.b)
	if err != nil {
		t.Fatal(err)
	}
	wantA, wantB := txLinSum(hist)
	if a, b := inTx(d.a, tx).N, inTx(d.b, tx).N; a != wantA || b != wantB {
		t.Fatalf("final counts (%d, %d), the operations add up to (%d, %d): %d lost", a, b, wantA, wantB, wantA+wantB-a-b)
	}
	t.Logf("%d operations (%d from Python): linearizable, final counts (%d, %d) hold every one", len(hist), python*ops, wantA, wantB)
}

// CONTROL: the Python clients make each transaction two mutate calls.
func TestTxLinearizableWithPythonControlTwoMutates(t *testing.T) {
	cpNeedPython(t)
	const attempts = 3
	for a := range attempts {
		hist := txLinHistory(t, "tx", 2, 2, 30, pyTxLinClient("two", 40), pyTxLinClient("two", 40))
		if res := porcupine.CheckOperationsTimeout(txLinModel, hist, time.Minute); res == porcupine.Illegal {
			t.Logf("Python transactions as two mutate calls: not linearizable (attempt %d)", a+1)
			return
		}
	}
	t.Fatalf("CONTROL: in %d histories, Python transactions made of two mutate calls were never caught: the checker cannot see a torn Python transaction", attempts)
}
