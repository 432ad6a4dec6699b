package fs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/internal/linhist"
	"github.com/agentstate/core/internal/payload"
)

// registerOp is the input of one operation on the file seen as a register.
type registerOp struct {
	write bool
	value int // the value written; unused for reads
}

// registerModel: a file replaced by whole-file writes is a read/write
// register. A read must return the value of the last write linearized
// before it; an invalid (torn) read returns -1, which no write produced.
var registerModel = porcupine.Model{
	Init: func() any { return 0 },
	Step: func(state, input, output any) (bool, any) {
		in := input.(registerOp)
		if in.write {
			return true, in.value
		}
		return output.(int) == state.(int), state
	},
	DescribeOperation: func(input, output any) string {
		if in := input.(registerOp); in.write {
			return fmt.Sprintf("write(%d)", in.value)
		}
		return fmt.Sprintf("read() -> %d", output)
	},
}

// registerHistory runs 3 writers (writesEach writes each) and 3 readers
// (while writers run, at most readsEach reads each) against one file and
// records every operation's call and return on a shared logical clock.
func registerHistory(t *testing.T, writesEach, readsEach int, write func(v int) error, read func() ([]byte, error)) []porcupine.Operation {
	t.Helper()
	var h linhist.Recorder
	var writers, readers sync.WaitGroup
	var done atomic.Bool
	errs := make(chan error, 3)
	for w := range 3 {
		writers.Go(func() {
			for i := 1; i <= writesEach; i++ {
				v := (w+1)*100000 + i
				var err error
				h.Do(w, registerOp{write: true, value: v}, func() any { err = write(v); return 0 })
				if err != nil {
					errs <- err // fails the test: the history is not checked
					return
				}
			}
		})
	}
	for r := range 3 {
		readers.Go(func() {
			for i := 0; i < readsEach && !done.Load(); i++ {
				h.Do(3+r, registerOp{}, func() any {
					b, err := read()
					if err != nil {
						return -1
					}
					seq, err := payload.Check(b)
					if err != nil {
						return -1
					}
					return seq
				})
			}
		})
	}
	writers.Wait()
	done.Store(true)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return h.Operations()
}

// TestWriteAtomicLinearizable checks with porcupine that lock-free readers
// and concurrent writers of one file behave as an atomic register: no
// torn read, and no read of a value older than a write that had already
// returned.
func TestWriteAtomicLinearizable(t *testing.T) {
	fsys, err := fs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	if err := fsys.WriteAtomic("reg.json", payload.Make(0, 64), 0o644); err != nil {
		t.Fatal(err)
	}
	ops := registerHistory(t, 30, 250,
		func(v int) error { return fsys.WriteAtomic("reg.json", payload.Make(v, payload.Size(v)), 0o644) },
		func() ([]byte, error) { return fsys.ReadFile("reg.json") })
	res := porcupine.CheckOperationsTimeout(registerModel, ops, 20*time.Second)
	t.Logf("%d operations: %s", len(ops), res)
	if res != porcupine.Ok {
		t.Fatalf("history of %d operations is %s, want Ok (Unknown counts as failure)", len(ops), res)
	}
}

// TestWriteAtomicLinearizableControl: the same harness and checker with
// the in-place os.WriteFile must find a violation.
func TestWriteAtomicLinearizableControl(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reg.json")
	if err := os.WriteFile(path, payload.Make(0, 64), 0o644); err != nil {
		t.Fatal(err)
	}
	for attempt := 1; attempt <= 20; attempt++ {
		ops := registerHistory(t, 200, 300,
			func(v int) error { return os.WriteFile(path, payload.Make(v, payload.Size(v)), 0o644) },
			func() ([]byte, error) { return os.ReadFile(path) })
		res := porcupine.CheckOperationsTimeout(registerModel, ops, 20*time.Second)
		if res == porcupine.Illegal {
			t.Logf("CONTROL os.WriteFile: attempt %d, %d operations: %s", attempt, len(ops), res)
			return
		}
	}
	t.Fatal("CONTROL: in-place os.WriteFile histories were never found non-linearizable: the harness cannot see torn writes")
}
