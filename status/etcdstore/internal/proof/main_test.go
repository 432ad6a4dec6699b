// Package etcdstore_test holds the tests of status/etcdstore that need
// libraries the package's own tests must not import (porcupine, through
// internal/linhist): a module that imports etcdstore records the modules
// imported by etcdstore's tests in its go.sum, not these. They use only
// the public API.
package etcdstore_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/etcdstore"
	"github.com/agentstate/core/status/etcdstore/internal/etcdtest"
)

var server *etcdtest.Cluster

// TestMain runs one etcd server (a separate process) for the package's
// tests, and stops it before goleak looks for leftover goroutines.
func TestMain(m *testing.M) { goleak.VerifyTestMain(serverM{m}) }

type serverM struct{ m *testing.M }

func (s serverM) Run() int {
	defer etcdtest.Cleanup()
	dir, err := os.MkdirTemp("", "etcdstore-proof-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if server, err = etcdtest.Start(dir, etcdtest.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, "etcd:", err)
		return 1
	}
	defer server.Kill()
	return s.m.Run()
}

// newClient connects a fresh client (its own gRPC connection) and closes
// it when the test ends.
func newClient(t testing.TB) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: server.Endpoints(), DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatalf("etcd client: %v", err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// testCtx bounds a test's calls so that a bug shows up as a failure rather
// than as the whole binary timing out.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// docPath returns a fresh document path; its key is unique to the test.
func docPath(t testing.TB) string { return filepath.Join(t.TempDir(), "status.json") }

// withBare is the CONTROL backend: the read-modify-write that a naive etcd
// port would do, a Get and then a Put without the ModRevision guard.
func withBare(cli *clientv3.Client) status.Option {
	return status.WithBackend(func(path string) status.Backend {
		key, err := etcdstore.Key(path)
		return &bareBackend{cli: cli, path: path, key: key, err: err}
	})
}

type bareBackend struct {
	cli       *clientv3.Client
	path, key string
	err       error
}

func (b *bareBackend) Name() string { return b.path }

func (b *bareBackend) Load(ctx context.Context) ([]byte, error) {
	if b.err != nil {
		return nil, b.err
	}
	resp, err := b.cli.Get(ctx, b.key)
	if err != nil || len(resp.Kvs) == 0 {
		return nil, err
	}
	return resp.Kvs[0].Value, nil
}

func (b *bareBackend) Update(ctx context.Context, apply func([]byte) ([]byte, error)) error {
	cur, err := b.Load(ctx)
	if err != nil {
		return err
	}
	next, err := apply(cur)
	if err != nil || bytes.Equal(next, cur) {
		return err
	}
	_, err = b.cli.Put(ctx, b.key, string(next))
	return err
}
