//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package status_test

// Cross-process test harness: the test binary re-executes itself as a child
// (os.Args[0] -test.run=^TestCrossprocHelper$ with an environment flag), the
// standard library's pattern. Children talk to the parent over two channels
// that need no sleeps:
//
//   - stdin is a start gate: a child reports "ready", then blocks reading
//     one line from stdin; the parent writes the line once every child is
//     ready, so all of them start hammering the file together.
//   - file descriptor 3 (a pipe) carries the child's reports, one line each,
//     each with a single write(2). The short lines of the SIGKILL test are
//     below PIPE_BUF, so a line written before the child died is readable
//     in full after its death.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

const (
	cpEnvMode = "STATUS_CROSSPROC_MODE" // selects a child mode; empty in the parent
	cpEnvArgs = "STATUS_CROSSPROC_ARGS" // JSON cpArgs for the child
)

// cpArgs parameterises a child.
type cpArgs struct {
	Path       string // the document
	Writer     string // how to increment: see cpIncrement and the modes
	Goroutines int
	Iterations int    // per goroutine (bench: per process)
	Client     int    // first client id (linearizability)
	Hold       bool   // kill test: block inside fn after Iterations increments
	Seed       uint64 // for the child's random choices
}

// cpModes maps a mode name to the child's body. It is filled by package-level
// variable initialisers in the crossproc_* files (test code only). The body
// reports to w; a returned error makes the child exit with status 2.
var cpModes = map[string]func(a cpArgs, w *cpReporter) error{}

func cpRegister(mode string, run func(a cpArgs, w *cpReporter) error) bool {
	cpModes[mode] = run
	return true
}

// TestCrossprocHelper is not a test: it is the body of the child processes
// the crossproc tests start. In the parent (no mode in the environment) it
// returns at once. In a child it runs the mode and ends the process with
// os.Exit, so that nothing else of the test binary (other tests, goleak's
// TestMain check) runs in the child.
func TestCrossprocHelper(t *testing.T) {
	mode := os.Getenv(cpEnvMode)
	if mode == "" {
		return
	}
	run := cpModes[mode]
	if run == nil {
		fmt.Fprintf(os.Stderr, "crossproc child: unknown mode %q\n", mode)
		os.Exit(2)
	}
	var a cpArgs
	if err := json.Unmarshal([]byte(os.Getenv(cpEnvArgs)), &a); err != nil {
		fmt.Fprintf(os.Stderr, "crossproc child: args: %v\n", err)
		os.Exit(2)
	}
	w := &cpReporter{f: os.NewFile(3, "report")}
	if err := run(a, w); err != nil {
		fmt.Fprintf(os.Stderr, "crossproc child %s: %v\n", mode, err)
		os.Exit(2)
	}
	os.Exit(0)
}

// cpReporter writes report lines to the parent, one write(2) per line.
type cpReporter struct {
	mu sync.Mutex
	f  *os.File
}

func (w *cpReporter) line(format string, args ...any) error {
	s := fmt.Sprintf(format, args...) + "\n"
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err := w.f.WriteString(s)
	return err
}

// json writes v as one report line: "kind <json>".
func (w *cpReporter) json(kind string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return w.line("%s %s", kind, b)
}

// cpGate reports "ready" and waits for the parent's start line on stdin.
func cpGate(w *cpReporter) error {
	if err := w.line("ready"); err != nil {
		return err
	}
	_, err := bufio.NewReader(os.Stdin).ReadString('\n')
	return err
}

// A cpChild is a running child process as the parent sees it.
type cpChild struct {
	name   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  *bufio.Scanner // report lines
	rd     *os.File       // read end of the report pipe
	stderr bytes.Buffer   // read only after wait
	waited bool
	err    error // from Wait
}

// cpStartGo starts the test binary as a child in mode.
func cpStartGo(t testing.TB, name, mode string, a cpArgs) *cpChild {
	t.Helper()
	return cpStart(t, name, cpCommand(t, os.Args[0], mode, a), true)
}

// cpCommand returns the command that runs the test binary bin as a child in
// mode.
func cpCommand(t testing.TB, bin, mode string, a cpArgs) *exec.Cmd {
	t.Helper()
	args, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestCrossprocHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), cpEnvMode+"="+mode, cpEnvArgs+"="+string(args))
	return cmd
}

// cpStart starts cmd with a report pipe: as file descriptor 3 (viaFD3) or as
// its stdout (for programs that are not the test binary, e.g. python3).
func cpStart(t testing.TB, name string, cmd *exec.Cmd, viaFD3 bool) *cpChild {
	t.Helper()
	c := &cpChild{name: name, cmd: cmd}
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	if viaFD3 {
		cmd.ExtraFiles = []*os.File{wr}
	} else {
		cmd.Stdout = wr
	}
	cmd.Stderr = &c.stderr
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		rd.Close()
		wr.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	wr.Close() // the child holds the write end: EOF when it exits
	c.rd = rd
	c.lines = bufio.NewScanner(rd)
	c.lines.Buffer(make([]byte, 0, 64<<10), 64<<20)
	t.Cleanup(func() {
		// A test that failed half-way must not leave a child behind.
		if !c.waited {
			_ = cmd.Process.Kill()
			c.wait()
		}
		rd.Close()
	})
	return c
}

// next returns the child's next report line, or false at EOF.
func (c *cpChild) next() (string, bool) {
	if c.lines.Scan() {
		return c.lines.Text(), true
	}
	return "", false
}

// expect reads the next line and fails unless it starts with prefix; it
// returns the rest of the line.
func (c *cpChild) expect(t testing.TB, prefix string) string {
	t.Helper()
	l, ok := c.next()
	if !ok || !strings.HasPrefix(l, prefix) {
		c.abort(ok)
		t.Fatalf("%s: got report %q (eof=%v), want %q...; exit: %v; stderr:\n%s", c.name, l, !ok, prefix, c.err, c.stderr.String())
	}
	return strings.TrimPrefix(strings.TrimPrefix(l, prefix), " ")
}

// expectJSON reads a "kind <json>" line into v.
func (c *cpChild) expectJSON(t testing.TB, kind string, v any) {
	t.Helper()
	rest := c.expect(t, kind)
	if err := json.Unmarshal([]byte(rest), v); err != nil {
		t.Fatalf("%s: bad %s report %q: %v", c.name, kind, rest, err)
	}
}

// abort reaps the child after an unexpected report. A child that is still
// running (alive) is killed first: it may never exit by itself.
func (c *cpChild) abort(alive bool) {
	if alive && !c.waited {
		_ = c.cmd.Process.Kill()
	}
	c.wait()
}

func (c *cpChild) wait() error {
	if !c.waited {
		c.stdin.Close()
		c.err = c.cmd.Wait()
		c.waited = true
	}
	return c.err
}

// mustExit waits for the child and fails the test unless it exited with 0.
func (c *cpChild) mustExit(t testing.TB) {
	t.Helper()
	if err := c.wait(); err != nil {
		t.Errorf("%s: %v; stderr:\n%s", c.name, err, c.stderr.String())
	}
}

// cpRelease starts every child: it waits for each one's "ready" line, then
// writes the start line to all of them.
func cpRelease(t testing.TB, children []*cpChild) {
	t.Helper()
	for _, c := range children {
		c.expect(t, "ready")
	}
	for _, c := range children {
		if _, err := io.WriteString(c.stdin, "go\n"); err != nil {
			t.Fatalf("%s: start: %v", c.name, err)
		}
	}
}

// cpSoak reports whether the longer variants were asked for. make soak
// sets SOAK=1 and already repeats every test 60 times (-count=20 -cpu
// 1,2,4), so the crossproc tests only double or triple their size there.
func cpSoak() bool { return os.Getenv("SOAK") == "1" }
