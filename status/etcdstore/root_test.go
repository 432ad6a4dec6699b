package etcdstore

import (
	"context"
	"crypto/rand"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentstate/core/status"
)

// TestRootSharedAcrossHosts: two hosts mount one workspace at different
// paths and increment the same document, each naming it by its own path.
// With each host's root set, both reach one key and no increment is lost.
// The CONTROL (absolute-path keys, the default) gives the two hosts two
// keys: each sees only its own increments.
func TestRootSharedAcrossHosts(t *testing.T) {
	endpoint := sharedServer(t).Endpoint()
	const perHost = 50
	for _, tc := range []struct {
		name    string
		control bool
	}{{"WithRoot", false}, {"CONTROL absolute paths", true}} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := WithPrefix("/roots/" + rand.Text()) // a fresh key space
			hosts := []struct{ root, path string }{
				{"/srv/ws", "/srv/ws/org/repo/task/status.json"},
				{"/home/agent/ws", "/home/agent/ws/org/repo/task/status.json"},
			}
			stores := make([]*status.Store[counter], len(hosts))
			for i, h := range hosts {
				opts := []Option{prefix}
				if !tc.control {
					opts = append(opts, WithRoot(h.root))
				}
				stores[i] = status.NewStore[counter](h.path, With(newClient(t, endpoint), opts...))
			}
			var wg sync.WaitGroup
			for _, st := range stores {
				wg.Go(func() {
					for range perHost {
						if _, err := st.Mutate(testCtx(t), func(c *counter) error { c.N++; return nil }); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			got, err := stores[0].Load(testCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			want := perHost * len(hosts)
			switch {
			case tc.control && got.N == want:
				t.Fatalf("CONTROL: host A sees %d increments, all of both hosts': the harness does not separate the mounts", got.N)
			case !tc.control && got.N != want:
				t.Fatalf("host A sees %d increments, want %d (both hosts')", got.N, want)
			}
		})
	}
}

// TestOutsideRoot: a document outside the root is refused by every call
// with an error that matches ErrOutsideRoot and names the path once, and
// nothing is written; the root's own documents are watched under their
// local paths.
func TestOutsideRoot(t *testing.T) {
	cli := newClient(t, sharedServer(t).Endpoint())
	ctx := testCtx(t)
	dir := t.TempDir()
	root := filepath.Join(dir, "ws")
	prefix := "/outside/" + rand.Text()
	opts := []Option{WithRoot(root), WithPrefix(prefix)}
	outside := filepath.Join(dir, "elsewhere", "status.json")
	st := status.NewStore[counter](outside, With(cli, opts...))

	check := func(op string, err error) {
		t.Helper()
		path := outside
		if op == "WatchDir" {
			path = filepath.Dir(outside)
		}
		if !errors.Is(err, ErrOutsideRoot) {
			t.Errorf("%s outside the root: %v; want an error matching ErrOutsideRoot", op, err)
		} else if n := strings.Count(err.Error(), path); n != 1 {
			t.Errorf("%s: error %q names the path %d times, want once", op, err, n)
		}
	}
	_, err := st.Mutate(ctx, func(c *counter) error { c.N++; return nil })
	check("Mutate", err)
	_, err = st.Load(ctx)
	check("Load", err)
	for _, err := range Watch(ctx, cli, outside, opts...) {
		check("Watch", err)
	}
	for _, err := range WatchDir(ctx, cli, filepath.Dir(outside), opts...) {
		check("WatchDir", err)
	}
	resp, err := cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Count != 0 {
		t.Errorf("%d keys written under the prefix", resp.Count)
	}

	// Inside the root: events carry the document's local path.
	inside := filepath.Join(root, "org", "status.json")
	if _, err := status.NewStore[counter](inside, With(cli, opts...)).Mutate(ctx, func(c *counter) error { c.N = 7; return nil }); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for ev, err := range WatchDir(wctx, cli, root, opts...) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Path != inside || ev.Key != prefix+"/org/status.json" {
			t.Errorf("event for %q (key %q); want %q (key %q)", ev.Path, ev.Key, inside, prefix+"/org/status.json")
		}
		break
	}
}
