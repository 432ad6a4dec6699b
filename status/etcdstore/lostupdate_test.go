package etcdstore

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentstate/core/status"
)

// counter is the document the cross-client tests increment.
type counter struct {
	N int `json:"n"`
}

const (
	lostClientsInProc = 4   // goroutines, each with its own clientv3.Client
	lostClientsProcs  = 4   // child processes, each with its own client
	lostIncrements    = 200 // per client (×5 with SOAK=1)
)

// TestLostUpdates: 8 separate clients, half of them in other processes,
// each increment one document 200 times. With the guarded transaction the
// count is exact; the CONTROL (Get then unguarded Put) run through the same
// harness must lose updates, or the harness could not see the bug.
func TestLostUpdates(t *testing.T) {
	srv := sharedServer(t)
	for _, tc := range []struct {
		mode    string
		control bool
	}{{"guarded", false}, {"bare", true}} {
		t.Run(tc.mode, func(t *testing.T) {
			path := docPath(t)
			n := lostIncrements
			if os.Getenv("SOAK") != "" {
				n *= 5
			}
			acks := runIncrementers(t, srv.Endpoint(), path, tc.mode, lostClientsInProc, lostClientsProcs, n)
			want := (lostClientsInProc + lostClientsProcs) * n
			if acks != want {
				t.Fatalf("%d of %d increments acknowledged; all should succeed", acks, want)
			}
			got, err := status.NewStore[counter](path, With(newClient(t, srv.Endpoint()))).Load(testCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			lost := want - got.N
			t.Logf("%s: %d acknowledged increments, final count %d, lost %d", tc.mode, acks, got.N, lost)
			switch {
			case tc.control && lost <= 0:
				t.Fatalf("CONTROL lost no update (count %d of %d): the harness does not exercise concurrent writers", got.N, want)
			case !tc.control && lost != 0:
				t.Fatalf("lost %d of %d acknowledged increments (count %d)", lost, want, got.N)
			}
		})
	}
}

// storeOption picks the backend by mode name (children get it by env).
func storeOption(cli *clientv3.Client, mode string) status.Option {
	if mode == "bare" {
		return withBare(cli)
	}
	return With(cli)
}

// increment runs n increments on path and returns how many succeeded.
func increment(ctx context.Context, cli *clientv3.Client, path, mode string, n int) (int, error) {
	st := status.NewStore[counter](path, storeOption(cli, mode))
	for i := range n {
		if _, err := st.Mutate(ctx, func(c *counter) error { c.N++; return nil }); err != nil {
			return i, err
		}
	}
	return n, nil
}

// runIncrementers starts procs child processes and inProc goroutines, each
// with its own client, releases them together once all are connected, and
// returns the number of acknowledged increments.
func runIncrementers(t *testing.T, endpoint, path, mode string, inProc, procs, n int) int {
	t.Helper()
	ctx := testCtx(t)
	type child struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		out   *bufio.Scanner
	}
	var children []child
	for range procs {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(),
			"ETCDSTORE_HELPER=increment",
			"ETCDSTORE_ENDPOINT="+endpoint,
			"ETCDSTORE_PATH="+path,
			"ETCDSTORE_MODE="+mode,
			"ETCDSTORE_N="+strconv.Itoa(n),
		)
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		children = append(children, child{cmd, stdin, bufio.NewScanner(stdout)})
	}
	// Every child says "ready" once its client is connected.
	for i, c := range children {
		if line := readLine(c.out); line != "ready" {
			t.Fatalf("child %d: got %q, want ready", i, line)
		}
	}
	clients := make([]*clientv3.Client, inProc)
	for i := range clients {
		clients[i] = newClient(t, endpoint)
		if _, err := clients[i].Get(ctx, "warm-up"); err != nil {
			t.Fatal(err)
		}
	}

	start := make(chan struct{})
	var acks atomic.Int64
	var wg sync.WaitGroup
	for _, cli := range clients {
		wg.Go(func() {
			<-start
			ok, err := increment(ctx, cli, path, mode, n)
			acks.Add(int64(ok))
			if err != nil {
				t.Errorf("in-process client: %v", err)
			}
		})
	}
	close(start)
	for _, c := range children {
		fmt.Fprintln(c.stdin, "go")
	}
	wg.Wait()
	for i, c := range children {
		line := readLine(c.out)
		ok, err := strconv.Atoi(strings.TrimPrefix(line, "acks "))
		if !strings.HasPrefix(line, "acks ") || err != nil {
			t.Errorf("child %d: got %q, want acks N", i, line)
		}
		acks.Add(int64(ok))
		c.stdin.Close()
		if err := c.cmd.Wait(); err != nil {
			t.Errorf("child %d: %v", i, err)
		}
	}
	return int(acks.Load())
}

func readLine(s *bufio.Scanner) string {
	if s.Scan() {
		return s.Text()
	}
	return fmt.Sprintf("<no line: %v>", s.Err())
}

// TestHelperProcess is the child side of the cross-process tests (the
// standard library's re-exec pattern). Run normally, it does nothing.
func TestHelperProcess(t *testing.T) {
	if os.Getenv("ETCDSTORE_HELPER") != "increment" {
		return
	}
	code := helperIncrement()
	os.Exit(code)
}

func helperIncrement() int {
	n, _ := strconv.Atoi(os.Getenv("ETCDSTORE_N"))
	cli, err := dial(os.Getenv("ETCDSTORE_ENDPOINT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 2
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := cli.Get(ctx, "warm-up"); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 2
	}
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	if !in.Scan() || in.Text() != "go" {
		fmt.Fprintln(os.Stderr, "helper: no go signal")
		return 2
	}
	ok, err := increment(ctx, cli, os.Getenv("ETCDSTORE_PATH"), os.Getenv("ETCDSTORE_MODE"), n)
	fmt.Printf("acks %d\n", ok)
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	return 0
}
