package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status"
)

// The demo runs its writers in child processes: it re-executes itself
// (os.Executable) with this first argument.
const workerCommand = "worker"

// Modes of a demo side.
const (
	modeControl = "control"        // bare read-modify-write, in-place write
	modeAtomic  = "control-atomic" // read-modify-write, atomic rename, no lock
	modeMutate  = "mutate"         // status.Mutate
)

// workerResult is what a worker reports on its last line of stdout.
type workerResult struct {
	Attempted  int64  `json:"attempted"`   // updates started
	WriterTorn int64  `json:"writer_torn"` // control: reads by the writer itself that did not decode (update abandoned)
	Errors     int64  `json:"errors"`      // updates that returned an error
	FirstError string `json:"first_error,omitempty"`
}

// runWorker is one demo worker process. Protocol on stdio with the parent:
// the worker prints "ready", waits for the line "go" on stdin, runs its
// goroutines, prints "progress N" about five times a second and finally
// "result {json}". If stdin closes (the parent died or gave up), the worker
// stops early, so it never outlives the demo.
func runWorker(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	fl := newFlags(workerCommand)
	mode := fl.String("mode", "", "control, control-atomic or mutate")
	path := fl.String("file", "", "document to update")
	goroutines := fl.Int("goroutines", 1, "writer goroutines")
	updates := fl.Int("updates", 1, "updates per goroutine")
	if err := fl.Parse(args); err != nil {
		return fmt.Errorf("%w: worker: %v", errUsage, err)
	}
	update, ok := map[string]func(context.Context, string) (bool, error){
		modeControl: bareIncrement,
		modeAtomic:  atomicIncrement,
		modeMutate:  mutateIncrement,
	}[*mode]
	if !ok || *path == "" {
		return fmt.Errorf("%w: worker: bad -mode %q or -file %q", errUsage, *mode, *path)
	}

	out := &lockedWriter{w: stdout}
	out.println("ready")
	in := bufio.NewReader(stdin)
	if line, err := in.ReadString('\n'); err != nil || line != "go\n" {
		return errors.New("worker: parent went away before the start")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// This goroutine ends with the process: a read of stdin cannot be
	// interrupted portably, and the worker exits right after its result.
	go func() {
		io.Copy(io.Discard, in)
		cancel()
	}()

	var res workerResult
	var mu sync.Mutex // guards res.FirstError
	var attempted, torn, failed atomic.Int64
	var writers sync.WaitGroup
	for range *goroutines {
		writers.Go(func() {
			for range *updates {
				if ctx.Err() != nil {
					return
				}
				attempted.Add(1)
				wasTorn, err := update(ctx, *path)
				if wasTorn {
					torn.Add(1)
				}
				if err != nil {
					failed.Add(1)
					mu.Lock()
					if res.FirstError == "" {
						res.FirstError = err.Error()
					}
					mu.Unlock()
				}
			}
		})
	}

	done := make(chan struct{})
	var reporter sync.WaitGroup
	reporter.Go(func() {
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				out.println(fmt.Sprintf("progress %d", attempted.Load()))
			}
		}
	})
	writers.Wait()
	close(done)
	reporter.Wait()

	res.Attempted, res.WriterTorn, res.Errors = attempted.Load(), torn.Load(), failed.Load()
	b, _ := json.Marshal(res) // plain struct, always encodes
	out.println("result " + string(b))
	return out.err
}

// bareIncrement is the CONTROL: the agent services' pattern before this
// module. Read, decode, change, write back in place, no lock.
func bareIncrement(_ context.Context, path string) (torn bool, err error) {
	return unlockedIncrement(path, os.WriteFile)
}

// atomicIncrement is the second CONTROL: the same read-modify-write,
// but the write replaces the file atomically (fs.WriteAtomic: temp file,
// fsync, rename). Readers no longer see torn files, yet with no lock around
// the cycle a writer still writes back a stale copy and erases the
// increments made since its read.
func atomicIncrement(_ context.Context, path string) (torn bool, err error) {
	return unlockedIncrement(path, fs.WriteAtomic)
}

// unlockedIncrement is the read-modify-write both controls share; only the
// final write differs. Like the services' callers, it gives up when the file
// does not decode, and reports that it saw a torn file.
func unlockedIncrement(path string, write func(string, []byte, os.FileMode) error) (torn bool, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return true, nil
	}
	var s status.Status
	if json.Unmarshal(data, &s) != nil {
		return true, nil
	}
	s.Runs++
	s.UpdatedAt = time.Now().UTC()
	data, err = json.MarshalIndent(s, "", "  ")
	if err != nil {
		return false, err
	}
	return false, write(path, data, 0o644)
}

// mutateIncrement is the same change through this module.
func mutateIncrement(ctx context.Context, path string) (torn bool, err error) {
	_, err = status.Mutate(ctx, path, func(s *status.Status) error {
		s.Runs++
		return nil
	})
	return errors.Is(err, status.ErrCorrupt), err
}

// lockedWriter serialises whole lines from several goroutines and keeps the
// first write error.
type lockedWriter struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

func (l *lockedWriter) println(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		_, l.err = io.WriteString(l.w, s+"\n")
	}
}
