package etcdstore

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/agentstate/core/status/etcdstore/internal/etcdtest"
)

// Every test talks to a real etcd server: a separate process on loopback
// (see internal/etcdtest). Tests that do not stop their server share one;
// fault tests start their own.
func TestMain(m *testing.M) { goleak.VerifyTestMain(serverM{m}) }

// serverM stops the shared server after the tests and before goleak looks
// for leftover goroutines.
type serverM struct{ m *testing.M }

func (s serverM) Run() int {
	code := s.m.Run()
	if pkgServer.srv != nil {
		pkgServer.srv.Stop()
	}
	if pkgServer.dir != "" {
		os.RemoveAll(pkgServer.dir)
	}
	if benchServer.srv != nil {
		benchServer.srv.Stop()
	}
	if benchServer.dir != "" {
		os.RemoveAll(benchServer.dir)
	}
	etcdtest.Cleanup()
	return code
}

var pkgServer struct {
	once sync.Once
	srv  *etcdtest.Cluster
	err  error
	dir  string
}

// sharedServer returns the package's shared server, starting it on first
// use (helper processes never start one).
func sharedServer(t testing.TB) *etcdtest.Cluster {
	t.Helper()
	pkgServer.once.Do(func() {
		// Not t.TempDir: the server outlives the test that starts it.
		pkgServer.dir, pkgServer.err = os.MkdirTemp("", "etcdstore-test-")
		if pkgServer.err == nil {
			pkgServer.srv, pkgServer.err = etcdtest.Start(filepath.Join(pkgServer.dir, "data"), etcdtest.Options{})
		}
	})
	if pkgServer.err != nil {
		t.Fatalf("etcd: %v", pkgServer.err)
	}
	return pkgServer.srv
}

// startServer starts a private server that the test may stop and restart.
func startServer(t testing.TB, opts etcdtest.Options) *etcdtest.Cluster {
	t.Helper()
	srv, err := etcdtest.Start(t.TempDir(), opts)
	if err != nil {
		t.Fatalf("etcd: %v", err)
	}
	t.Cleanup(srv.Kill)
	return srv
}

// newClient connects a fresh client (its own gRPC connection) to endpoint
// and closes it when the test ends.
func newClient(t testing.TB, endpoint string) *clientv3.Client {
	t.Helper()
	return newClientTo(t, []string{endpoint})
}

// newClientTo is newClient for a client of several members.
func newClientTo(t testing.TB, endpoints []string) *clientv3.Client {
	t.Helper()
	cli, err := dial(endpoints...)
	if err != nil {
		t.Fatalf("etcd client: %v", err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

func dial(endpoints ...string) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: 10 * time.Second,
		Logger:      zap.NewNop(),
	})
}

// testCtx bounds a test's calls so that a bug shows up as a failure rather
// than as the whole binary timing out.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// key is the key of path with the default options.
func key(path string) string {
	k, err := Key(path)
	if err != nil {
		panic(err) // absolute-path keys cannot fail
	}
	return k
}

// docPath returns a fresh document path; its key is unique to the test.
func docPath(t testing.TB) string {
	return filepath.Join(t.TempDir(), "status.json")
}
