//go:build unix

package etcdstore

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
)

// A child is this test binary run again as a client process: test names
// its entry point (a TestXxxHelperProcess that acts on ETCDSTORE_HELPER),
// and the test drives it by lines, commands on its stdin and replies on
// its stdout. It is killed when the test ends.
type child struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startChild(t *testing.T, test string, env ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	t.Cleanup(c.kill)
	return c
}

func (c *child) line() string { return readLine(c.out) }

func (c *child) send(s string) { fmt.Fprintln(c.in, s) }

// kill ends the process unless it has been waited for, and reaps it.
func (c *child) kill() {
	if c.cmd.ProcessState == nil {
		c.cmd.Process.Kill()
		for c.out.Scan() {
		}
		c.cmd.Wait()
	}
}
