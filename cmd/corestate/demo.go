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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status"
)

type demoConfig struct {
	procs, goroutines, updates, readers int
	dir                                 string
	timeout                             time.Duration
}

// sideResult is one row of the demo's table.
type sideResult struct {
	mode         string
	procs        int
	goroutines   int
	attempted    int64 // updates the workers started
	kept         int64 // the final "runs": updates that survived
	writerTorn   int64 // control: updates abandoned because the writer read a torn file
	errors       int64 // updates that returned an error
	firstError   string
	reads        int64 // lock-free reads by the parent's readers
	readerTorn   int64 // of which did not decode (empty or partial file)
	finalCorrupt bool  // the file does not decode at the end
	elapsed      time.Duration
}

func (r sideResult) lost() int64 { return r.attempted - r.kept }
func (r sideResult) torn() int64 { return r.readerTorn + r.writerTorn }

func (r sideResult) throughput() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.kept) / r.elapsed.Seconds()
}

func cmdDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fl := newFlags("demo")
	var cfg demoConfig
	fl.IntVar(&cfg.procs, "procs", 4, "worker processes per side")
	fl.IntVar(&cfg.goroutines, "goroutines", 8, "writer goroutines per process")
	fl.IntVar(&cfg.updates, "updates", 100, "updates per goroutine")
	fl.IntVar(&cfg.readers, "readers", 2, "lock-free reader goroutines per side")
	fl.StringVar(&cfg.dir, "dir", "", "run in this directory and keep it")
	fl.DurationVar(&cfg.timeout, "timeout", time.Minute, "give up after this long")
	pos, err := parseFlags(fl, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return fmt.Errorf("%w: demo takes no arguments, got %q", errUsage, pos)
	}
	if err := cfg.check(); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("demo: cannot re-execute myself: %w", err)
	}
	dir := cfg.dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "corestate-demo-"); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		defer os.RemoveAll(dir)
	} else if err := fs.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()

	var results []sideResult
	for _, mode := range []string{modeControl, modeAtomic, modeMutate} {
		r, err := runSide(ctx, exe, cfg, mode, filepath.Join(dir, mode+".json"), stderr)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("demo: %s side: timed out after --timeout %v (lower --updates or raise --timeout): %w", mode, cfg.timeout, err)
			}
			return fmt.Errorf("demo: %s side: %w", mode, err)
		}
		results = append(results, r)
	}
	printTable(stdout, results)
	return printVerdict(stdout, results, dir, cfg.dir != "")
}

func (c demoConfig) check() error {
	for _, f := range []struct {
		name          string
		v, low, limit int
	}{
		{"procs", c.procs, 1, 64},
		{"goroutines", c.goroutines, 1, 1024},
		{"updates", c.updates, 1, 1_000_000},
		{"readers", c.readers, 0, 64},
	} {
		if f.v < f.low || f.v > f.limit {
			return fmt.Errorf("%w: demo: --%s %d out of range (%d..%d)", errUsage, f.name, f.v, f.low, f.limit)
		}
	}
	if c.timeout <= 0 {
		return fmt.Errorf("%w: demo: --timeout must be positive", errUsage)
	}
	return nil
}

// workerEvent is a line from a worker's stdout, or (exited) its end.
type workerEvent struct {
	worker   int
	ready    bool
	progress int64
	result   *workerResult
	exited   bool
	err      error // with exited: the wait error, with stderr appended
}

// runSide runs one mode: it starts the workers, waits until all are ready,
// releases them together, reads the file without a lock until they finish,
// and returns the tally. Every worker is waited for before it returns, and
// killed first if the side fails or ctx ends.
func runSide(ctx context.Context, exe string, cfg demoConfig, mode, path string, progress io.Writer) (sideResult, error) {
	res := sideResult{mode: mode, procs: cfg.procs, goroutines: cfg.goroutines}
	if err := writeInitial(path); err != nil {
		return res, err
	}
	ctx, kill := context.WithCancel(ctx)
	defer kill()

	events := make(chan workerEvent)
	var workers sync.WaitGroup
	var stdins []io.WriteCloser
	var pids []string
	var started int
	// drain kills the workers and consumes their events until every one
	// has been waited for, so that no goroutine or process outlives runSide.
	drain := func() {
		kill()
		go func() { workers.Wait(); close(events) }()
		for range events {
		}
	}
	for i := range cfg.procs {
		cmd := exec.CommandContext(ctx, exe, workerCommand,
			"-mode", mode, "-file", path,
			"-goroutines", strconv.Itoa(cfg.goroutines), "-updates", strconv.Itoa(cfg.updates))
		cmd.Env = append(os.Environ(), workerEnv+"=1")
		cmd.WaitDelay = 5 * time.Second
		stdin, err1 := cmd.StdinPipe()
		stdout, err2 := cmd.StdoutPipe()
		var errOut boundedBuffer
		cmd.Stderr = &errOut
		if err := errors.Join(err1, err2); err != nil {
			drain()
			return res, err
		}
		if err := cmd.Start(); err != nil {
			drain()
			return res, fmt.Errorf("start worker: %w", err)
		}
		started++
		stdins = append(stdins, stdin)
		pids = append(pids, strconv.Itoa(cmd.Process.Pid))
		workers.Go(func() { watchWorker(i, cmd, stdout, &errOut, events) })
	}
	fmt.Fprintf(progress, "demo: %s: %d worker processes × %d goroutines × %d updates (pids %s)\n",
		sideName(mode), cfg.procs, cfg.goroutines, cfg.updates, strings.Join(pids, " "))

	// Barrier: release the workers together so that they overlap.
	for ready := 0; ready < started; {
		select {
		case ev := <-events:
			if ev.exited {
				drain()
				return res, fmt.Errorf("worker %d exited before it was ready: %v", ev.worker, ev.err)
			}
			if ev.ready {
				ready++
			}
		case <-ctx.Done():
			drain()
			return res, ctx.Err()
		}
	}

	var reads, readerTorn atomic.Int64
	stopReaders := make(chan struct{})
	var readers sync.WaitGroup
	for range cfg.readers {
		readers.Go(func() { readUntil(path, stopReaders, &reads, &readerTorn) })
	}
	stopAll := func() {
		close(stopReaders)
		readers.Wait()
	}

	start := time.Now()
	for _, in := range stdins {
		io.WriteString(in, "go\n") // a worker that died is reported by its exit event
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	attempted := make([]int64, cfg.procs)
	results := make([]*workerResult, cfg.procs)
	for exited := 0; exited < started; {
		select {
		case ev := <-events:
			switch {
			case ev.result != nil:
				results[ev.worker] = ev.result
				attempted[ev.worker] = ev.result.Attempted
				res.elapsed = time.Since(start)
			case ev.exited && (ev.err != nil || results[ev.worker] == nil):
				stopAll()
				drain()
				return res, fmt.Errorf("worker %d failed: %v", ev.worker, ev.err)
			case ev.exited:
				exited++
			default:
				attempted[ev.worker] = ev.progress
			}
		case <-tick.C:
			var sum int64
			for _, n := range attempted {
				sum += n
			}
			fmt.Fprintf(progress, "demo: %s: %3.0fs  %d/%d updates attempted, %d torn reads so far\n",
				sideName(mode), time.Since(start).Seconds(), sum,
				int64(cfg.procs*cfg.goroutines*cfg.updates), readerTorn.Load())
		case <-ctx.Done():
			stopAll()
			drain()
			return res, ctx.Err()
		}
	}
	stopAll()
	workers.Wait()

	for _, r := range results {
		res.attempted += r.Attempted
		res.writerTorn += r.WriterTorn
		res.errors += r.Errors
		if res.firstError == "" {
			res.firstError = r.FirstError
		}
	}
	res.reads, res.readerTorn = reads.Load(), readerTorn.Load()
	if s, ok := decodeFile(path); ok {
		res.kept = int64(s.Runs)
	} else {
		res.finalCorrupt = true
	}
	return res, nil
}

// watchWorker turns a worker's stdout into events, then waits for it.
func watchWorker(i int, cmd *exec.Cmd, stdout io.Reader, errOut *boundedBuffer, events chan<- workerEvent) {
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		ev := workerEvent{worker: i}
		switch {
		case line == "ready":
			ev.ready = true
		case strings.HasPrefix(line, "progress "):
			ev.progress, _ = strconv.ParseInt(strings.TrimPrefix(line, "progress "), 10, 64)
		case strings.HasPrefix(line, "result "):
			var r workerResult
			if json.Unmarshal([]byte(strings.TrimPrefix(line, "result ")), &r) != nil {
				continue
			}
			ev.result = &r
		default:
			continue
		}
		events <- ev
	}
	err := cmd.Wait()
	if err != nil {
		if msg := strings.TrimSpace(errOut.String()); msg != "" {
			err = fmt.Errorf("%w: %s", err, oneLine(msg))
		}
	}
	events <- workerEvent{worker: i, exited: true, err: err}
}

// readUntil is a lock-free reader: it reads and decodes the file as fast as
// it can and counts the reads that see an empty or partial document.
func readUntil(path string, stop <-chan struct{}, reads, torn *atomic.Int64) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		reads.Add(1)
		if _, ok := decodeFile(path); !ok {
			torn.Add(1)
		}
	}
}

func decodeFile(path string) (status.Status, bool) {
	var s status.Status
	data, err := os.ReadFile(path)
	if err != nil {
		return s, false
	}
	return s, json.Unmarshal(data, &s) == nil
}

func writeInitial(path string) error {
	data, err := json.MarshalIndent(status.Status{
		State: status.Running, Agent: "demo", Repo: "demo", Task: filepath.Base(path),
		StartedAt: time.Now().UTC(), UpdatedAt: time.Now().UTC(),
	}, "", "  ")
	if err != nil {
		return err
	}
	return fs.WriteAtomic(path, data, 0o644)
}

func sideName(mode string) string {
	switch mode {
	case modeControl:
		return "control: bare RMW"
	case modeAtomic:
		return "control: RMW+rename"
	}
	return "status.Mutate"
}

// boundedBuffer keeps the first 4 KiB a worker writes to stderr, for the
// error message; it is written by exec's copying goroutine and read after
// Wait.
type boundedBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p[:min(len(p), max(0, 4096-len(b.buf)))]...)
	return len(p), nil
}

func (b *boundedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
