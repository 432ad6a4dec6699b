package etcdtest

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"
	"go.uber.org/zap"
)

// TestMain deletes the member program before goleak looks for leftover
// goroutines (VerifyTestMain exits the process, so a deferred call would
// not run).
func TestMain(m *testing.M) { goleak.VerifyTestMain(cleanupM{m}) }

type cleanupM struct{ m *testing.M }

func (c cleanupM) Run() int {
	defer Cleanup()
	return c.m.Run()
}

// TestRestartKeepsData proves the harness property the fault tests rely on:
// the same endpoint and data survive a clean stop, and a SIGKILL, followed
// by a restart.
func TestRestartKeepsData(t *testing.T) {
	c, err := Start(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{c.Endpoint()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i, stop := range []func(){c.Stop, c.Kill} {
		v := []string{"after stop", "after kill"}[i]
		if _, err := cli.Put(ctx, "k", v); err != nil {
			t.Fatal(err)
		}
		stop()
		if err := c.Restart(); err != nil {
			t.Fatal(err)
		}
		resp, err := cli.Get(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != v {
			t.Fatalf("after restart: got %v, want k=%s", resp.Kvs, v)
		}
	}
}
