//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A scenario is a load shape; every system runs it in the same round.
type scenario struct {
	name        string
	desc        string
	procs       int
	goroutines  int // per process
	recs        int
	readers     int // lock-free (or shared-lock) readers in process 0
	readerPause time.Duration
	pick        map[string]bool // the systems chosen to run (-systems); nil: all
}

var scenarios = []scenario{
	{name: "a", desc: "one caller, one record", procs: 1, goroutines: 1, recs: 1},
	{name: "b", desc: "64 goroutines, one record", procs: 1, goroutines: 64, recs: 1},
	{name: "c", desc: "64 goroutines, 64 records (one per task dir)", procs: 1, goroutines: 64, recs: 64},
	{name: "d", desc: "4 processes × 16 goroutines, one record", procs: 4, goroutines: 16, recs: 1},
	{name: "d32", desc: "32 processes × 2 goroutines, one record", procs: 32, goroutines: 2, recs: 1},
	{name: "d32x1", desc: "32 processes × 1 goroutine, one record", procs: 32, goroutines: 1, recs: 1},
	{name: "e", desc: "64 goroutines on one record + 4 readers in a tight loop", procs: 1, goroutines: 64, recs: 1, readers: 4},
	{name: "f", desc: "as e, readers pause 1 ms between reads", procs: 1, goroutines: 64, recs: 1, readers: 4, readerPause: time.Millisecond},
}

// runs reports whether sys takes part in sc.
func (sc scenario) runs(sys system) bool {
	switch {
	case sc.pick != nil && !sc.pick[sys.name]:
		return false
	case sys.ownRecord:
		return sc.procs == 1 && sc.recs == sc.goroutines
	case sc.procs > 1:
		return sys.multiProc
	}
	return true
}

// cellResult is one system's figures for one scenario in one round.
type cellResult struct {
	opsPerSec     float64
	p50, p99, max time.Duration
	fairness      float64 // slowest / fastest process by calls done in the window (1 with one process)
	fsyncs        float64 // fsync-family system calls per acknowledged call (trace pass only)
	acked, errors int
	firstErr      string
	reads         int
	cpuPerOp      time.Duration // CPU time (user + system, all processes) per acknowledged call
}

// runCell runs sys under sc for window in fresh child processes and
// checks that every acknowledged increment is in the stored records.
// With trace set, each child runs under strace -f -c to count its
// fsync-family system calls.
func runCell(base string, sc scenario, sys system, window time.Duration, trace bool) (cellResult, error) {
	dir, err := os.MkdirTemp(base, sc.name+"-"+sys.name+"-")
	if err != nil {
		return cellResult{}, err
	}
	defer os.RemoveAll(dir)
	if err := sys.seed(dir, sc.recs); err != nil {
		return cellResult{}, fmt.Errorf("seed: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), window+3*time.Minute)
	defer cancel()
	children := make([]*child, sc.procs)
	defer func() {
		for _, c := range children {
			if c != nil {
				c.kill()
			}
		}
	}()
	for p := range children {
		a := workerArgs{System: sys.name, Dir: dir, Recs: sc.recs, Proc: p, Goroutines: sc.goroutines, Window: window}
		if p == 0 {
			a.Readers, a.ReaderPause = sc.readers, sc.readerPause
		}
		var traceOut string
		if trace {
			traceOut = filepath.Join(dir, fmt.Sprintf("strace.%d", p))
		}
		if children[p], err = startChild(ctx, a, traceOut); err != nil {
			return cellResult{}, err
		}
	}
	for _, c := range children {
		if err := c.expect("ready"); err != nil {
			return cellResult{}, err
		}
	}
	for _, c := range children {
		if _, err := io.WriteString(c.stdin, "go\n"); err != nil {
			return cellResult{}, err
		}
	}
	var res cellResult
	var lat []int64
	acked := make([]int, sc.recs)
	minDone, maxDone := -1, 0
	var syncs int
	var cpu time.Duration
	for p, c := range children {
		line, err := c.line()
		if err != nil {
			return cellResult{}, err
		}
		var wr workerResult
		if err := json.Unmarshal([]byte(line), &wr); err != nil {
			return cellResult{}, fmt.Errorf("child %d: %q: %w", p, line, err)
		}
		if err := c.wait(); err != nil {
			return cellResult{}, err
		}
		if wr.ReadErr != "" {
			return cellResult{}, fmt.Errorf("reader: %s", wr.ReadErr)
		}
		for i, n := range wr.Acked {
			acked[i] += n
		}
		lat = append(lat, wr.Lat...)
		res.errors += wr.Errors
		if res.firstErr == "" {
			res.firstErr = wr.FirstErr
		}
		res.reads += wr.Reads
		cpu += wr.CPU
		res.opsPerSec += float64(wr.Done) / window.Seconds()
		if minDone < 0 || wr.Done < minDone {
			minDone = wr.Done
		}
		maxDone = max(maxDone, wr.Done)
		if trace {
			n, err := countSyncs(c.traceOut)
			if err != nil {
				return cellResult{}, err
			}
			syncs += n
		}
	}
	children = nil
	if err := verify(sys, dir, acked); err != nil {
		return cellResult{}, err
	}
	for _, n := range acked {
		res.acked += n
	}
	if maxDone > 0 {
		res.fairness = float64(minDone) / float64(maxDone)
	}
	if res.acked > 0 {
		res.fsyncs = float64(syncs) / float64(res.acked)
		res.cpuPerOp = cpu / time.Duration(res.acked)
	}
	slices.Sort(lat)
	if n := len(lat); n > 0 {
		res.p50 = time.Duration(lat[n/2])
		res.p99 = time.Duration(lat[n*99/100])
		res.max = time.Duration(lat[n-1])
	}
	return res, nil
}

// verify reads every record back: its runs must equal the increments
// acknowledged for it (none lost, none applied twice).
func verify(sys system, dir string, acked []int) error {
	st, err := sys.open(dir)
	if err != nil {
		return err
	}
	defer st.close()
	for rec, want := range acked {
		got, err := st.read(rec)
		if err != nil {
			return fmt.Errorf("verify record %d: %w", rec, err)
		}
		if got != want {
			return fmt.Errorf("record %d: runs = %d, %d increments acknowledged: %w", rec, got, want, errLost)
		}
	}
	return nil
}

var errLost = errors.New("lost or duplicated update")

type child struct {
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	out      *bufio.Reader
	stderr   strings.Builder
	traceOut string
	done     bool
}

func startChild(ctx context.Context, a workerArgs, traceOut string) (*child, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args, err := json.Marshal(a)
	if err != nil {
		return nil, err
	}
	var cmd *exec.Cmd
	if traceOut != "" {
		cmd = exec.CommandContext(ctx, "strace", "-f", "-c", "-o", traceOut,
			"-e", "trace=fsync,fdatasync,syncfs,sync_file_range,msync,sync", self)
	} else {
		cmd = exec.CommandContext(ctx, self)
	}
	// A test binary must not run its tests: TestMain hands the process to
	// the worker before that.
	// A race-enabled child would sleep 1 s at exit (the race runtime's
	// default atexit_sleep_ms).
	cmd.Env = append(os.Environ(), childEnv+"="+string(args), "GORACE=atexit_sleep_ms=0 "+os.Getenv("GORACE"))
	c := &child{cmd: cmd, traceOut: traceOut}
	cmd.Stderr = &c.stderr
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c.out = bufio.NewReader(stdout)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *child) line() (string, error) {
	s, err := c.out.ReadString('\n')
	if err != nil {
		c.kill()
		return "", fmt.Errorf("worker: %w (stderr: %s)", err, c.stderr.String())
	}
	return strings.TrimSuffix(s, "\n"), nil
}

func (c *child) expect(want string) error {
	got, err := c.line()
	if err == nil && got != want {
		err = fmt.Errorf("worker said %q, want %q", got, want)
	}
	return err
}

func (c *child) wait() error {
	c.done = true
	c.stdin.Close()
	if err := c.cmd.Wait(); err != nil {
		return fmt.Errorf("worker: %w (stderr: %s)", err, c.stderr.String())
	}
	return nil
}

// kill ends a child that was not waited for (a failed cell) and reaps it.
func (c *child) kill() {
	if c.done {
		return
	}
	c.done = true
	c.cmd.Process.Kill()
	c.stdin.Close()
	c.cmd.Wait()
}

// countSyncs sums the calls column of an strace -c summary.
func countSyncs(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) < 5 || f[len(f)-1] == "total" || f[len(f)-1] == "syscall" {
			continue
		}
		calls, err := strconv.Atoi(f[3])
		if err != nil {
			continue
		}
		n += calls
	}
	return n, nil
}
