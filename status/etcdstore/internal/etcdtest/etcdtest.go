// Package etcdtest runs real etcd clusters for tests, each member a
// separate process (the program in ./member, built once per test binary)
// on loopback, with ports chosen by the kernel and data in a directory the
// test owns.
//
// A member can be stopped cleanly, killed (SIGKILL), paused and resumed
// (SIGSTOP and SIGCONT: a member cut off from everyone, its connections
// open but silent), and restarted on the same URLs and data directory. The
// fault tests need exactly that: clients keep their endpoints and see
// members go away and come back with their data.
//
// A test binary that uses this package calls Cleanup after its tests (in
// TestMain) to delete the member program. The environment variable
// ETCDTEST_MEMBER names a member program built beforehand (make test
// builds one for all the test binaries), used instead of a build per test
// binary.
package etcdtest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Options tune a Cluster.
type Options struct {
	// Members is the cluster's size (default 1).
	Members int
	// Fsync keeps etcd's fsyncs. Tests leave it off for speed (a killed
	// process loses nothing that it wrote: the kernel keeps it);
	// benchmarks turn it on so that etcd pays for durability like the
	// file backend does.
	Fsync bool
	// TickMs and ElectionMs are the heartbeat interval and election
	// timeout (defaults 10 and 100 for one member, 50 and 500 for more:
	// short enough for quick elections, long enough not to lose leaders
	// on a loaded machine).
	TickMs, ElectionMs uint
}

// A Cluster is a set of etcd members.
type Cluster struct {
	Members []*Member
}

// A Member is one etcd process.
type Member struct {
	Name string
	// ID is the member's ID, as in etcd's responses (e.g. Status.Leader).
	ID uint64

	dir, client, peer, cluster string
	opts                       Options

	mu        sync.Mutex
	cmd       *exec.Cmd // nil while the member is not running
	stdin     io.Closer
	exited    chan struct{} // closed when cmd has been waited for
	readyLine chan string   // the first line of its stdout
	stderr    *tail
}

// Start starts a cluster whose members keep their data under dir
// (normally t.TempDir()). Ports are chosen by the kernel once and then
// kept for restarts.
func Start(dir string, opts Options) (*Cluster, error) {
	if opts.Members <= 0 {
		opts.Members = 1
	}
	if opts.TickMs == 0 {
		opts.TickMs, opts.ElectionMs = 10, 100
		if opts.Members > 1 {
			opts.TickMs, opts.ElectionMs = 50, 500
		}
	}
	var lastErr error
	// Reserving a port and releasing it for etcd leaves a small window in
	// which another process may take it; try a few fresh sets.
	for try := range 4 {
		c, err := start(filepath.Join(dir, "try"+strconv.Itoa(try)), opts)
		if err == nil {
			return c, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func start(dir string, opts Options) (*Cluster, error) {
	c := &Cluster{}
	var peers []string
	for i := range opts.Members {
		cp, err := freePort()
		if err != nil {
			return nil, err
		}
		pp, err := freePort()
		if err != nil {
			return nil, err
		}
		m := &Member{
			Name:   "m" + strconv.Itoa(i),
			dir:    filepath.Join(dir, "m"+strconv.Itoa(i)),
			client: "http://" + net.JoinHostPort("127.0.0.1", cp),
			peer:   "http://" + net.JoinHostPort("127.0.0.1", pp),
			opts:   opts,
		}
		peers = append(peers, m.Name+"="+m.peer)
		c.Members = append(c.Members, m)
	}
	for _, m := range c.Members {
		m.cluster = strings.Join(peers, ",")
		if err := m.spawn(); err != nil {
			c.Kill()
			return nil, err
		}
	}
	// A member of a larger cluster is ready only once a quorum runs, so
	// all are started before any is waited for.
	for _, m := range c.Members {
		if err := m.ready(); err != nil {
			c.Kill()
			return nil, err
		}
	}
	return c, nil
}

// Endpoint is the first member's client URL (http://127.0.0.1:port); it
// does not change across restarts.
func (c *Cluster) Endpoint() string { return c.Members[0].client }

// Endpoints are the client URLs of all members.
func (c *Cluster) Endpoints() []string {
	var eps []string
	for _, m := range c.Members {
		eps = append(eps, m.client)
	}
	return eps
}

// Stop stops every member cleanly and waits for them.
func (c *Cluster) Stop() {
	for _, m := range c.Members {
		m.Stop()
	}
}

// Kill kills every member and waits for them.
func (c *Cluster) Kill() {
	for _, m := range c.Members {
		m.Kill()
	}
}

// Restart restarts every stopped member (see Member.Restart).
func (c *Cluster) Restart() error {
	for _, m := range c.Members {
		if err := m.spawn(); err != nil && !errors.Is(err, errRunning) {
			return err
		}
	}
	for _, m := range c.Members {
		if err := m.ready(); err != nil {
			return err
		}
	}
	return nil
}

// Leader returns the member that the running members agree leads the
// cluster, or nil if they do not agree (an election is under way).
func (c *Cluster) Leader(ctx context.Context) (*Member, error) {
	var leader uint64
	for _, m := range c.Members {
		if !m.running() {
			continue
		}
		id, err := m.leader(ctx)
		if err != nil {
			return nil, err
		}
		if id == 0 || leader != 0 && id != leader {
			return nil, nil
		}
		leader = id
	}
	for _, m := range c.Members {
		if m.ID == leader && m.running() {
			return m, nil
		}
	}
	return nil, nil
}

// Endpoint is the member's client URL.
func (m *Member) Endpoint() string { return m.client }

// Dir is the member's data directory.
func (m *Member) Dir() string { return m.dir }

// leader asks the member whom it follows (0: nobody).
func (m *Member) leader(ctx context.Context) (uint64, error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{m.client}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return 0, err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := cli.Status(ctx, m.client)
	if err != nil {
		return 0, fmt.Errorf("etcdtest: status of %s: %w", m.Name, err)
	}
	return resp.Leader, nil
}

var (
	errRunning    = errors.New("etcdtest: member already running")
	errNotRunning = errors.New("etcdtest: member not running")
)

// Restart starts a stopped or killed member again on the same URLs and
// data directory, and waits until it serves clients (which for a member of
// a larger cluster needs a quorum).
func (m *Member) Restart() error {
	if err := m.spawn(); err != nil {
		return err
	}
	return m.ready()
}

func (m *Member) spawn() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd != nil {
		return errRunning
	}
	exe, err := program()
	if err != nil {
		return err
	}
	state := "new"
	if _, err := os.Stat(filepath.Join(m.dir, "member")); err == nil {
		state = "existing"
	}
	cmd := exec.Command(exe,
		"-name", m.Name, "-dir", m.dir, "-client", m.client, "-peer", m.peer,
		"-cluster", m.cluster, "-state", state, "-fsync="+strconv.FormatBool(m.opts.Fsync),
		"-tick-ms", strconv.FormatUint(uint64(m.opts.TickMs), 10),
		"-election-ms", strconv.FormatUint(uint64(m.opts.ElectionMs), 10),
	)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	m.stderr = &tail{}
	cmd.Stderr = m.stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("etcdtest: start %s: %w", m.Name, err)
	}
	m.cmd, m.stdin = cmd, stdin
	m.exited = make(chan struct{})
	lines := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		if s.Scan() {
			lines <- s.Text()
		}
		close(lines)
		io.Copy(io.Discard, stdout)
	}()
	go func(exited chan struct{}) {
		cmd.Wait()
		close(exited)
	}(m.exited)
	m.readyLine = lines
	return nil
}

// ready waits for the member's "ready" line.
func (m *Member) ready() error {
	m.mu.Lock()
	lines, exited := m.readyLine, m.exited
	m.mu.Unlock()
	select {
	case line, ok := <-lines:
		id, err := strconv.ParseUint(strings.TrimPrefix(line, "ready "), 10, 64)
		if !ok || !strings.HasPrefix(line, "ready ") || err != nil {
			<-exited
			return fmt.Errorf("etcdtest: %s did not start: %s", m.Name, m.stderr)
		}
		m.ID = id
		return nil
	case <-time.After(2 * time.Minute):
		m.Kill()
		return fmt.Errorf("etcdtest: %s not ready after 2 minutes: %s", m.Name, m.stderr)
	}
}

func (m *Member) running() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cmd != nil
}

// Stop stops the member cleanly (in-flight requests get up to etcd's
// request timeout to finish) and waits until it has exited. Stopping a
// stopped member does nothing.
func (m *Member) Stop() {
	m.end(func(cmd *exec.Cmd, stdin io.Closer) { stdin.Close() })
}

// Kill kills the member (SIGKILL, mid-request: nothing is flushed or
// closed) and waits until it has exited.
func (m *Member) Kill() {
	m.end(func(cmd *exec.Cmd, stdin io.Closer) { cmd.Process.Kill(); stdin.Close() })
}

func (m *Member) end(how func(*exec.Cmd, io.Closer)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd == nil {
		return
	}
	resume(m.cmd) // a paused process cannot act on a closed stdin
	how(m.cmd, m.stdin)
	<-m.exited
	m.cmd = nil
}

// tail keeps the end of a member's stderr for error messages.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if n := len(t.buf); n > 4096 {
		t.buf = t.buf[n-4096:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.buf))
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	_, port, err := net.SplitHostPort(l.Addr().String())
	return port, err
}

// The member program, built on first use.
var built struct {
	once sync.Once
	dir  string
	exe  string
	err  error
}

// program builds the member program (once per process; later builds of
// other test binaries hit the build cache), unless ETCDTEST_MEMBER names
// one.
func program() (string, error) {
	if exe := os.Getenv("ETCDTEST_MEMBER"); exe != "" {
		return exe, nil
	}
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "etcdtest-")
		if built.err != nil {
			return
		}
		built.exe = filepath.Join(built.dir, "member")
		cmd := exec.Command("go", "build", "-o", built.exe, "github.com/agentstate/core/status/etcdstore/internal/etcdtest/member")
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("etcdtest: build the member program: %v\n%s", err, out)
		}
	})
	return built.exe, built.err
}

// Cleanup deletes the member program. Call it once all members have
// stopped.
func Cleanup() {
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
}
