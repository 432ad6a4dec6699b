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

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fl := newFlags("demo")
	var cfg demoConfig
	fl.IntVar(&cfg.procs, "procs", 4, "worker processes per side")
	fl.IntVar(&cfg.goroutines, "goroutines", 8, "writer goroutines per process")
	fl.IntVar(&cfg.updates, "updates", 100, "updates per goroutine")
	fl.IntVar(&cfg.readers, "readers", 2, "lock-free reader goroutines per side")
	fl.StringVar(&cfg.dir, "dir", "", "run in this directory and keep it")
	fl.DurationVar(&cfg.timeout, "timeout", time.Minute, "give up after this long")
	if err := parseFlags(fl, args, stdout); err != nil {
		return err
	}
	if err := cfg.check(); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot re-execute myself: %w", err)
	}
	dir := cfg.dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "corestate-demo-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	} else if err := fs.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()

	fmt.Fprintf(stderr, "demo: three sides run one after another (%s, %s, %s); the table follows when all are done\n",
		sideName(modeControl), sideName(modeAtomic), sideName(modeMutate))
	var results []sideResult
	for _, mode := range []string{modeControl, modeAtomic, modeMutate} {
		r, err := runSide(ctx, exe, cfg, mode, filepath.Join(dir, mode+".json"), stderr)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("%s side: timed out after --timeout %v (lower --updates or raise --timeout): %w", mode, cfg.timeout, err)
			}
			return fmt.Errorf("%s side: %w", mode, err)
		}
		results = append(results, r)
	}
	printSetup(stdout, cfg)
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
			return fmt.Errorf("%w: --%s %d out of range (%d..%d)", errUsage, f.name, f.v, f.low, f.limit)
		}
	}
	if c.timeout <= 0 {
		return fmt.Errorf("%w: --timeout must be positive", errUsage)
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
	f, err := startFleet(ctx, exe, cfg, mode, path)
	if err != nil {
		return res, err
	}
	fmt.Fprintf(progress, "demo: %s: %d worker processes × %d goroutines × %d updates (pids %s)\n",
		sideName(mode), cfg.procs, cfg.goroutines, cfg.updates, strings.Join(f.pids, " "))
	if err := f.waitReady(ctx); err != nil {
		f.stop()
		return res, err
	}

	readers := startReaders(path, cfg.readers)
	start := time.Now()
	f.release()
	total := int64(cfg.procs * cfg.goroutines * cfg.updates)
	results, end, err := f.collect(ctx, func(attempted int64) {
		fmt.Fprintf(progress, "demo: %s: %3.0fs  %d/%d updates attempted, %d torn reads so far\n",
			sideName(mode), time.Since(start).Seconds(), attempted, total, readers.torn.Load())
	})
	res.elapsed = end.Sub(start)
	res.reads, res.readerTorn = readers.stop()
	if err != nil {
		f.stop()
		return res, err
	}

	for _, r := range results {
		res.attempted += r.Attempted
		res.writerTorn += r.WriterTorn
		res.errors += r.Errors
		if res.firstError == "" {
			res.firstError = r.FirstError
		}
	}
	if s, ok := decodeFile(path); ok {
		res.kept = int64(s.Runs)
	} else {
		res.finalCorrupt = true
	}
	return res, nil
}

// A fleet is one side's worker processes and the goroutines that watch them.
type fleet struct {
	kill    context.CancelFunc // kills every worker still running
	events  chan workerEvent
	watched sync.WaitGroup // one watchWorker per started worker
	stdins  []io.WriteCloser
	pids    []string
}

// startFleet starts cfg.procs workers. The fleet kills them (SIGKILL, via
// exec.CommandContext) when ctx ends or stop is called; if this process dies
// instead, they exit by themselves (see runWorker).
func startFleet(ctx context.Context, exe string, cfg demoConfig, mode, path string) (*fleet, error) {
	ctx, kill := context.WithCancel(ctx)
	f := &fleet{kill: kill, events: make(chan workerEvent)}
	for i := range cfg.procs {
		cmd := exec.CommandContext(ctx, exe, workerCommand,
			"-mode", mode, "-file", path,
			"-goroutines", strconv.Itoa(cfg.goroutines), "-updates", strconv.Itoa(cfg.updates))
		cmd.WaitDelay = 5 * time.Second // a killed worker's pipes close by then
		stdin, err1 := cmd.StdinPipe()
		stdout, err2 := cmd.StdoutPipe()
		errOut := new(boundedBuffer)
		cmd.Stderr = errOut
		err := errors.Join(err1, err2)
		if err == nil {
			err = cmd.Start()
		}
		if err != nil {
			f.stop()
			return nil, fmt.Errorf("start worker: %w", err)
		}
		f.stdins = append(f.stdins, stdin)
		f.pids = append(f.pids, strconv.Itoa(cmd.Process.Pid))
		f.watched.Go(func() { watchWorker(i, cmd, stdout, errOut, f.events) })
	}
	return f, nil
}

// stop kills the workers and consumes their events until every one has been
// waited for, so that no goroutine or process outlives the fleet.
func (f *fleet) stop() {
	f.kill()
	go func() { f.watched.Wait(); close(f.events) }()
	for range f.events {
	}
}

// waitReady waits until every worker has printed "ready".
func (f *fleet) waitReady(ctx context.Context) error {
	for ready := 0; ready < len(f.pids); {
		select {
		case ev := <-f.events:
			if ev.exited {
				return fmt.Errorf("worker %d exited before it was ready: %v", ev.worker, ev.err)
			}
			if ev.ready {
				ready++
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// release lets all workers start at once, so that they really overlap.
func (f *fleet) release() {
	for _, in := range f.stdins {
		io.WriteString(in, "go\n") // a worker that died is reported by its exit event
	}
}

// collect gathers the workers' results until all have exited, calling
// progress with the updates attempted so far about once a second. It
// returns the results and when the last one arrived. On error the caller
// must stop the fleet.
func (f *fleet) collect(ctx context.Context, progress func(attempted int64)) (results []*workerResult, last time.Time, err error) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	attempted := make([]int64, len(f.pids))
	results = make([]*workerResult, len(f.pids))
	for exited := 0; exited < len(f.pids); {
		select {
		case ev := <-f.events:
			switch {
			case ev.result != nil:
				results[ev.worker] = ev.result
				attempted[ev.worker] = ev.result.Attempted
				last = time.Now()
			case ev.exited && ev.err != nil:
				return nil, last, fmt.Errorf("worker %d failed: %w", ev.worker, ev.err)
			case ev.exited && results[ev.worker] == nil:
				return nil, last, fmt.Errorf("worker %d exited without a result", ev.worker)
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
			progress(sum)
		case <-ctx.Done():
			return nil, last, ctx.Err()
		}
	}
	f.watched.Wait()
	f.kill() // releases the context; every worker has exited
	return results, last, nil
}

// readerPool is a set of lock-free readers of one file.
type readerPool struct {
	reads, torn atomic.Int64
	done        chan struct{}
	wg          sync.WaitGroup
}

func startReaders(path string, n int) *readerPool {
	p := &readerPool{done: make(chan struct{})}
	for range n {
		p.wg.Go(func() { readUntil(path, p.done, &p.reads, &p.torn) })
	}
	return p
}

// stop stops the readers and reports how many reads they made and how many
// of those were torn.
func (p *readerPool) stop() (reads, torn int64) {
	close(p.done)
	p.wg.Wait()
	return p.reads.Load(), p.torn.Load()
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
