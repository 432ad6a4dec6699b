package status_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

// Child processes re-execute the test binary with a role in the
// environment; TestMain runs the role and exits before any test or leak
// check. A child reports to the parent one line at a time on stdout (one
// write each) and starts when the parent writes a line to its stdin.
const (
	envRole = "PROOF_STATUS_ROLE"
	envArgs = "PROOF_STATUS_ARGS"
)

// childArgs parameterise a child.
type childArgs struct {
	Dir        string
	Variant    string
	Proc       int
	Goroutines int
	Ops        int
	Seed       uint64
}

var roles = map[string]func(a childArgs, out *reporter) error{}

func register(role string, run func(a childArgs, out *reporter) error) bool {
	roles[role] = run
	return true
}

func TestMain(m *testing.M) {
	if role := os.Getenv(envRole); role != "" {
		var a childArgs
		err := json.Unmarshal([]byte(os.Getenv(envArgs)), &a)
		if err == nil {
			err = roles[role](a, &reporter{w: os.Stdout})
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "child %s: %v\n", role, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// reporter writes whole lines, one write each, from any goroutine.
type reporter struct {
	mu sync.Mutex
	w  io.Writer
}

func (r *reporter) line(format string, args ...any) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, err := io.WriteString(r.w, fmt.Sprintf(format, args...)+"\n")
	return err
}

func (r *reporter) json(kind string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return r.line("%s %s", kind, b)
}

// stdin is the child's view of the parent's lines.
var stdin = bufio.NewReader(os.Stdin)

// gate reports "ready" and waits for the parent's start line.
func gate(out *reporter) error {
	if err := out.line("ready"); err != nil {
		return err
	}
	_, err := stdin.ReadString('\n')
	return err
}

// A child is a running child process as the parent sees it.
type child struct {
	name   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  *bufio.Scanner
	stderr strings.Builder
	done   bool
	err    error
}

func startChild(t *testing.T, role string, a childArgs) *child {
	t.Helper()
	args, _ := json.Marshal(a)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envRole+"="+role, envArgs+"="+string(args))
	return startCmd(t, fmt.Sprintf("%s %d", role, a.Proc), cmd)
}

// startCmd starts any program that speaks the line protocol (the Python
// agent too).
func startCmd(t *testing.T, name string, cmd *exec.Cmd) *child {
	t.Helper()
	c := &child{name: name, cmd: cmd}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = &c.stderr
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c.lines = bufio.NewScanner(stdout)
	c.lines.Buffer(make([]byte, 0, 64<<10), 64<<20)
	t.Cleanup(func() {
		if !c.done {
			cmd.Process.Kill()
			c.wait()
		}
	})
	return c
}

func (c *child) next() (string, bool) {
	if c.lines.Scan() {
		return c.lines.Text(), true
	}
	return "", false
}

// expect returns the rest of the next line, which must start with prefix.
func (c *child) expect(t *testing.T, prefix string) string {
	t.Helper()
	l, ok := c.next()
	if !ok || !strings.HasPrefix(l, prefix) {
		if ok {
			c.cmd.Process.Kill()
		}
		c.wait()
		t.Fatalf("%s: got %q (eof=%v), want %q...; %v; stderr:\n%s", c.name, l, !ok, prefix, c.err, c.stderr.String())
	}
	return strings.TrimPrefix(strings.TrimPrefix(l, prefix), " ")
}

func (c *child) wait() error {
	if !c.done {
		c.stdin.Close()
		for c.lines.Scan() { // drain, so that the child never blocks on a full pipe
		}
		c.err = c.cmd.Wait()
		c.done = true
	}
	return c.err
}

func (c *child) mustExit(t *testing.T) {
	t.Helper()
	if err := c.wait(); err != nil {
		t.Errorf("%s: %v; stderr:\n%s", c.name, err, c.stderr.String())
	}
}

// release waits for every child's "ready" and starts them together.
func release(t *testing.T, cs []*child) {
	t.Helper()
	for _, c := range cs {
		c.expect(t, "ready")
	}
	for _, c := range cs {
		if _, err := io.WriteString(c.stdin, "go\n"); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
}
