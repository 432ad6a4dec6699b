package etcdstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestKey(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	abs := func(p string) string { return filepath.ToSlash(filepath.Join(wd, p)) }
	for _, tc := range []struct {
		path string
		opts []Option
		want string
	}{
		{"/ws/status.json", nil, "/agentstate/status/ws/status.json"},
		{"/ws/./x/../status.json", nil, "/agentstate/status/ws/status.json"},
		{"ws/status.json", nil, "/agentstate/status" + abs("ws/status.json")},
		{"/ws/status.json", []Option{WithPrefix("/fleet/a/")}, "/fleet/a/ws/status.json"},
		{"/ws/status.json", []Option{WithPrefix("")}, "/ws/status.json"},
		// Two hosts mount one workspace at different paths: one key.
		{"/srv/ws/org/repo/status.json", []Option{WithRoot("/srv/ws")}, "/agentstate/status/org/repo/status.json"},
		{"/home/agent/ws/org/repo/status.json", []Option{WithRoot("/home/agent/ws/")}, "/agentstate/status/org/repo/status.json"},
		{"/srv/ws/a/../org/./repo/status.json", []Option{WithRoot("/srv/x/../ws")}, "/agentstate/status/org/repo/status.json"},
		{"ws/status.json", []Option{WithRoot(".")}, "/agentstate/status/ws/status.json"},
		// Root "/" is the absolute-path mapping; "" switches a root off.
		{"/srv/ws/status.json", []Option{WithRoot("/")}, "/agentstate/status/srv/ws/status.json"},
		{"/srv/ws/status.json", []Option{WithRoot("/elsewhere"), WithRoot("")}, "/agentstate/status/srv/ws/status.json"},
	} {
		got, err := Key(tc.path, tc.opts...)
		if err != nil || got != tc.want {
			t.Errorf("Key(%q) = %q, %v; want %q", tc.path, got, err, tc.want)
		}
	}
	for _, path := range []string{
		"/srv/other/status.json",
		"/srv/wsx/status.json", // shares a string prefix with the root, not a directory
		"/srv/ws/../status.json",
		"/srv/ws", // the root itself names no document
		"relative/status.json",
	} {
		got, err := Key(path, WithRoot("/srv/ws"))
		if !errors.Is(err, ErrOutsideRoot) || got != "" {
			t.Errorf("Key(%q) with root /srv/ws = %q, %v; want an error matching ErrOutsideRoot", path, got, err)
		} else if n := strings.Count(err.Error(), path); n != 1 {
			t.Errorf("error %q names the path %d times, want once", err, n)
		}
	}
}

// TestBackendDirect drives the Backend without a Store, for the parts of
// the status.Backend contract that the Store hides.
func TestBackendDirect(t *testing.T) {
	cli := newClient(t, sharedServer(t).Endpoint())
	ctx := testCtx(t)
	modRev := func(key string) int64 {
		resp, err := cli.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) == 0 {
			return 0
		}
		return resp.Kvs[0].ModRevision
	}

	t.Run("absent is nil, empty is empty", func(t *testing.T) {
		b := New(cli, docPath(t))
		if v, err := b.Load(ctx); err != nil || v != nil {
			t.Fatalf("Load of an absent key = %q, %v; want nil, nil", v, err)
		}
		putRaw(t, cli, b.Key(), nil)
		if v, err := b.Load(ctx); err != nil || v == nil || len(v) != 0 {
			t.Fatalf("Load of an empty value = %#v, %v; want empty, non-nil", v, err)
		}
		var seen []byte
		if err := b.Update(ctx, func(cur []byte) ([]byte, error) { seen = cur; return cur, nil }); err != nil {
			t.Fatal(err)
		}
		if seen == nil {
			t.Fatalf("apply saw nil for an empty value")
		}
	})

	t.Run("apply error returned as is, nothing written", func(t *testing.T) {
		b := New(cli, docPath(t))
		putRaw(t, cli, b.Key(), []byte("v1"))
		before := modRev(b.Key())
		errApply := errors.New("apply failed")
		if err := b.Update(ctx, func([]byte) ([]byte, error) { return []byte("v2"), errApply }); err != errApply {
			t.Fatalf("Update error = %v; want the apply error itself", err)
		}
		if modRev(b.Key()) != before {
			t.Fatalf("key rewritten after an apply error")
		}
	})

	t.Run("equal bytes write nothing", func(t *testing.T) {
		b := New(cli, docPath(t))
		putRaw(t, cli, b.Key(), []byte("same"))
		before := modRev(b.Key())
		if err := b.Update(ctx, func(cur []byte) ([]byte, error) { return bytes.Clone(cur), nil }); err != nil {
			t.Fatal(err)
		}
		if modRev(b.Key()) != before {
			t.Fatalf("key rewritten with equal bytes")
		}
	})

	t.Run("conflict re-runs apply on the new value", func(t *testing.T) {
		b := New(cli, docPath(t))
		putRaw(t, cli, b.Key(), []byte("a"))
		var seen []string
		err := b.Update(ctx, func(cur []byte) ([]byte, error) {
			seen = append(seen, string(cur))
			if len(seen) == 1 { // another writer gets in between read and commit
				putRaw(t, cli, b.Key(), []byte("b"))
			}
			return append(bytes.Clone(cur), '+'), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := getRaw(t, cli, b.Key()); string(got) != "b+" || strings.Join(seen, ",") != "a,b" {
			t.Fatalf("stored %q after apply saw %q; want b+ after a,b", got, seen)
		}
	})

	t.Run("markers share a lease and live outside document keys", func(t *testing.T) {
		prefix := "/markers-test/" + rand.Text() // unique even with -count>1
		s := newShared(cli, newConfig([]Option{WithPrefix(prefix)}))
		b1, b2 := s.open(docPath(t)), s.open(docPath(t))
		for _, b := range []*Backend{b1, b2} {
			if err := b.Update(ctx, func([]byte) ([]byte, error) { return []byte("x"), nil }); err != nil {
				t.Fatal(err)
			}
		}
		resp, err := cli.Get(ctx, prefix+"#txn/", clientv3.WithPrefix())
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) != 2 {
			t.Fatalf("%d markers, want 2", len(resp.Kvs))
		}
		for _, kv := range resp.Kvs {
			if string(kv.Value) != markCommitted || kv.Lease == 0 || kv.Lease != resp.Kvs[0].Lease {
				t.Errorf("marker %s = %q with lease %x; want %q on one shared lease", kv.Key, kv.Value, kv.Lease, markCommitted)
			}
		}
		ttl, err := cli.TimeToLive(ctx, clientv3.LeaseID(resp.Kvs[0].Lease))
		if err != nil {
			t.Fatal(err)
		}
		if ttl.GrantedTTL != 120 {
			t.Errorf("marker lease TTL %ds, want the default 120s", ttl.GrantedTTL)
		}
	})

	t.Run("expired marker lease is replaced", func(t *testing.T) {
		b := New(cli, docPath(t))
		if err := b.Update(ctx, func([]byte) ([]byte, error) { return []byte("1"), nil }); err != nil {
			t.Fatal(err)
		}
		id, ok := b.lease.fresh()
		if !ok {
			t.Fatal("no cached lease after an update")
		}
		if _, err := cli.Revoke(ctx, id); err != nil { // as if it had expired
			t.Fatal(err)
		}
		if err := b.Update(ctx, func([]byte) ([]byte, error) { return []byte("2"), nil }); err != nil {
			t.Fatalf("Update after the lease expired: %v", err)
		}
		if got, _ := getRaw(t, cli, b.Key()); string(got) != "2" {
			t.Fatalf("stored %q, want 2", got)
		}
		if id2, _ := b.lease.fresh(); id2 == id {
			t.Fatalf("revoked lease still cached")
		}
	})

	t.Run("too large fails at once", func(t *testing.T) {
		// Over etcd's request limit (1.5 MiB) and over gRPC's message
		// limit: both are rejected before anything is applied, so Update
		// must return the error, not retry until ctx ends or report an
		// unknown outcome.
		for _, size := range []int{1600 << 10, 3 << 20} {
			b := New(cli, docPath(t))
			ctx, cancel := context.WithCancel(ctx)
			err := b.Update(ctx, func([]byte) ([]byte, error) { return bytes.Repeat([]byte("x"), size), nil })
			cancel()
			if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, ErrOutcomeUnknown) {
				t.Fatalf("Update of %d bytes: %v; want a plain rejection", size, err)
			}
			if !strings.Contains(err.Error(), b.Key()) {
				t.Errorf("error %q does not name the key", err)
			}
			if _, ok := getRaw(t, cli, b.Key()); ok {
				t.Errorf("%d-byte document was stored", size)
			}
		}
	})

	t.Run("group commit: queued caller leaves on ctx, no queue left", func(t *testing.T) {
		s := newShared(cli, newConfig(nil))
		b := s.open(docPath(t))
		// A holds the driver inside its apply, so C stays queued.
		inA, releaseA := make(chan struct{}), make(chan struct{})
		doneA := make(chan error, 1)
		go func() {
			doneA <- b.Update(ctx, func(cur []byte) ([]byte, error) {
				close(inA)
				<-releaseA
				return []byte("a"), nil
			})
		}()
		<-inA
		queued, cancelQ := context.WithCancel(ctx)
		doneQ := make(chan error, 1)
		go func() {
			doneQ <- b.Update(queued, func([]byte) ([]byte, error) { t.Error("departed caller's apply ran"); return nil, nil })
		}()
		for pending(s, b.Key()) == 0 { // C has reached the queue
			runtime.Gosched()
		}
		cancelQ() // A still holds the driver: C is queued, not taken
		if err := <-doneQ; !errors.Is(err, context.Canceled) || errors.Is(err, ErrOutcomeUnknown) {
			t.Fatalf("queued Update whose ctx ended: %v; want a plain context.Canceled", err)
		}
		close(releaseA)
		if err := <-doneA; err != nil {
			t.Fatal(err)
		}
		// Many callers at once: batched, each sees its predecessors.
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				if err := b.Update(ctx, func(cur []byte) ([]byte, error) { return append(bytes.Clone(cur), 'x'), nil }); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if got, _ := getRaw(t, cli, b.Key()); string(got) != "a"+strings.Repeat("x", 16) {
			t.Errorf("stored %q, want a and 16 x", got)
		}
		s.queues.drivers.Wait()
		if n := s.queues.len(); n != 0 {
			t.Errorf("%d queues left after all Updates returned; want 0", n)
		}
	})

	t.Run("nil client is an error, not a panic", func(t *testing.T) {
		b := New(nil, docPath(t))
		if _, err := b.Load(ctx); err == nil {
			t.Error("Load with a nil client: no error")
		}
		if err := b.Update(ctx, func([]byte) ([]byte, error) { return []byte("x"), nil }); err == nil {
			t.Error("Update with a nil client: no error")
		}
		for _, err := range Watch(ctx, nil, docPath(t)) {
			if err == nil {
				t.Error("Watch with a nil client yielded an event")
			}
		}
	})

	t.Run("nil ctx or apply is an error, not a panic", func(t *testing.T) {
		b := New(cli, docPath(t))
		var nilCtx context.Context
		if _, err := b.Load(nilCtx); err == nil {
			t.Error("Load with a nil ctx: no error")
		}
		if err := b.Update(nilCtx, func([]byte) ([]byte, error) { return []byte("x"), nil }); err == nil {
			t.Error("Update with a nil ctx: no error")
		}
		if err := b.Update(ctx, nil); err == nil {
			t.Error("Update with a nil apply: no error")
		}
		if got, ok := getRaw(t, cli, b.Key()); ok {
			t.Errorf("bad input stored %q", got)
		}
		n := 0
		for _, err := range Watch(nilCtx, cli, docPath(t)) {
			if n++; err == nil {
				t.Error("Watch with a nil ctx yielded an event")
			}
		}
		if n != 1 {
			t.Errorf("Watch with a nil ctx yielded %d times, want one error", n)
		}
	})

	t.Run("cancelled ctx", func(t *testing.T) {
		b := New(cli, docPath(t))
		ctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := b.Load(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Load: %v; want context.Canceled", err)
		}
		called := false
		err := b.Update(ctx, func([]byte) ([]byte, error) { called = true; return []byte("x"), nil })
		if !errors.Is(err, context.Canceled) || called {
			t.Errorf("Update: %v (apply called: %v); want context.Canceled before apply", err, called)
		}
	})
}

// pending is the number of queued (not yet taken) Updates of key.
func pending(s *shared, key string) int {
	s.queues.mu.Lock()
	defer s.queues.mu.Unlock()
	if q := s.queues.m[key]; q != nil {
		return len(q.pending)
	}
	return 0
}
