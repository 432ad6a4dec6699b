//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
)

// The parent runs every cell in child processes: it re-executes its own
// binary (the command or the test binary) with childEnv set to the
// worker's arguments as JSON. A child opens the system, prints "ready",
// waits for one line on stdin (the start gate shared by all processes of a
// cell), runs for the window and prints its result as one JSON line.
const childEnv = "PEERBENCH_WORKER"

type workerArgs struct {
	System      string
	Dir         string
	Recs        int
	Proc        int // this process's index; goroutine g uses record (Proc*Goroutines+g) % Recs
	Goroutines  int
	Readers     int
	ReaderPause time.Duration
	Window      time.Duration
}

type workerResult struct {
	Acked    []int   // acknowledged increments per record (all, also those ending after the window)
	Done     int     // calls that returned nil within the window
	Lat      []int64 // ns, every acknowledged call
	Errors   int
	FirstErr string
	Reads    int
	ReadErr  string        // a torn read or a count that went backwards
	CPU      time.Duration // user + system CPU time of the process during the run
}

// runChild is the whole life of a worker process. It reports failure on
// stderr and exits non-zero.
func runChild(argsJSON string) {
	var a workerArgs
	if err := json.Unmarshal([]byte(argsJSON), &a); err != nil {
		fail(err)
	}
	sys, err := systemByName(a.System)
	if err != nil {
		fail(err)
	}
	st, err := sys.open(a.Dir)
	if err != nil {
		fail(err)
	}
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		fail(fmt.Errorf("start gate: %w", err))
	}
	cpu0 := cpuTime()
	res := work(st, a)
	res.CPU = cpuTime() - cpu0
	if err := st.close(); err != nil {
		fail(err)
	}
	out, err := json.Marshal(res)
	if err != nil {
		fail(err)
	}
	fmt.Printf("%s\n", out)
	os.Exit(0)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "peerbench worker:", err)
	os.Exit(2)
}

func work(st store, a workerArgs) workerResult {
	// Calls in flight when the window closes complete; the bound is only
	// against a hang.
	ctx, cancel := context.WithTimeout(context.Background(), a.Window+2*time.Minute)
	defer cancel()
	start := time.Now()
	deadline := start.Add(a.Window)
	type gres struct {
		acked, done int
		lat         []int64
		errs        int
		first       error
	}
	gs := make([]gres, a.Goroutines)
	var writers sync.WaitGroup
	for g := range a.Goroutines {
		rec := (a.Proc*a.Goroutines + g) % a.Recs
		writers.Go(func() {
			r := &gs[g]
			// At least one call each, so that a starved writer still
			// gives the cell something to check.
			for first := true; first || time.Now().Before(deadline); first = false {
				t0 := time.Now()
				err := st.inc(ctx, rec)
				t1 := time.Now()
				if err != nil {
					r.errs++
					if r.first == nil {
						r.first = err
					}
					continue
				}
				r.acked++
				r.lat = append(r.lat, int64(t1.Sub(t0)))
				if !t1.After(deadline) {
					r.done++
				}
			}
		})
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	var rmu sync.Mutex
	var reads int
	var readErr string
	for r := range a.Readers {
		readers.Go(func() {
			rec := r % a.Recs
			last, n := -1, 0
			defer func() { rmu.Lock(); reads += n; rmu.Unlock() }()
			for {
				select {
				case <-stop:
					return
				default:
				}
				runs, err := st.read(rec)
				if err == nil && runs < last {
					err = fmt.Errorf("runs went from %d back to %d", last, runs)
				}
				if err != nil {
					rmu.Lock()
					if readErr == "" {
						readErr = err.Error()
					}
					rmu.Unlock()
					return
				}
				last = runs
				n++
				if a.ReaderPause > 0 {
					time.Sleep(a.ReaderPause) // the workload: a reader that polls every ms
				}
			}
		})
	}
	writers.Wait()
	close(stop)
	readers.Wait()

	res := workerResult{Acked: make([]int, a.Recs), Reads: reads, ReadErr: readErr}
	for g, r := range gs {
		res.Acked[(a.Proc*a.Goroutines+g)%a.Recs] += r.acked
		res.Done += r.done
		res.Lat = append(res.Lat, r.lat...)
		res.Errors += r.errs
		if r.first != nil && res.FirstErr == "" {
			res.FirstErr = r.first.Error()
		}
	}
	return res
}
