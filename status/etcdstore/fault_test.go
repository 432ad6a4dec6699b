package etcdstore

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/etcdstore/internal/etcdtest"
)

// faults sits between a client and the server as a gRPC interceptor and
// makes document commits (transactions that put a document key) ambiguous
// the two ways a network can: the request is lost (never applied), or the
// response is lost (applied, but the client sees an error). Both look the
// same to the client, which is the point.
type faults struct {
	loseRequest  atomic.Int64 // the next n commits are never sent
	loseResponse atomic.Int64 // then the next n commits are applied, but fail
	randomPct    atomic.Int64 // each other commit: lost request or response with this chance (%)
	injected     atomic.Int64
	// onLoss runs after each injected fault (e.g. to end the caller's ctx).
	onLoss func()
}

var errInjected = grpcstatus.Error(codes.Unavailable, "injected fault")

func take(n *atomic.Int64) bool {
	for {
		v := n.Load()
		if v <= 0 {
			return false
		}
		if n.CompareAndSwap(v, v-1) {
			return true
		}
	}
}

// isCommit: a transaction whose success branch writes a document (fences
// write only a marker key).
func isCommit(req any) bool {
	tr, ok := req.(*pb.TxnRequest)
	if !ok {
		return false
	}
	for _, op := range tr.Success {
		if p := op.GetRequestPut(); p != nil && !strings.Contains(string(p.Key), "#txn/") {
			return true
		}
	}
	return false
}

func (f *faults) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if !isCommit(req) {
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	loseReq := take(&f.loseRequest)
	loseResp := !loseReq && take(&f.loseResponse)
	if !loseReq && !loseResp && rand.N(int64(100)) < f.randomPct.Load() {
		loseReq = rand.N(2) == 0
		loseResp = !loseReq
	}
	if loseReq {
		f.injected.Add(1)
		if f.onLoss != nil {
			f.onLoss()
		}
		return errInjected
	}
	err := invoker(ctx, method, req, reply, cc, opts...)
	if err != nil || !loseResp {
		return err
	}
	f.injected.Add(1)
	if f.onLoss != nil {
		f.onLoss()
	}
	return errInjected
}

func newFaultyClient(t testing.TB, endpoints []string, f *faults) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: 10 * time.Second,
		Logger:      zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(f.intercept)},
	})
	if err != nil {
		t.Fatalf("etcd client: %v", err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// naiveRetryBackend is the CONTROL for exactly-once: guarded by ModRevision
// like the real backend, but on a transport error it simply starts over,
// as a retry loop without commit markers would.
type naiveRetryBackend struct{ bareBackend }

func withNaiveRetry(cli *clientv3.Client) status.Option {
	return status.WithBackend(func(path string) status.Backend {
		return &naiveRetryBackend{bareBackend{cli: cli, path: path, key: key(path)}}
	})
}

func (b *naiveRetryBackend) Update(ctx context.Context, apply func([]byte) ([]byte, error)) error {
	bo := newBackoff(newConfig(nil))
	for ; ctx.Err() == nil; bo.wait(ctx, b.cli) {
		resp, err := b.cli.Get(ctx, b.key)
		if err != nil {
			continue
		}
		cur, rev := value(resp.Kvs)
		next, err := apply(cur)
		if err != nil {
			return err
		}
		tr, err := b.cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(b.key), "=", rev)).
			Then(clientv3.OpPut(b.key, string(next))).Commit()
		if err == nil && tr.Succeeded {
			return nil
		}
	}
	return ctx.Err()
}

// TestExactlyOnce: a commit whose request or response is lost is applied
// exactly once, and the caller's last fn call is the one that committed.
// The CONTROL (retry without markers) applies a lost-response increment
// twice under the same fault.
func TestExactlyOnce(t *testing.T) {
	endpoint := sharedServer(t).Endpoint()
	direct := newClient(t, endpoint)
	for _, tc := range []struct {
		name               string
		loseReq, loseResp  int64
		control            bool
		wantN, wantFnCalls int
	}{
		{name: "response lost", loseResp: 1, wantN: 1, wantFnCalls: 1},
		{name: "request lost", loseReq: 1, wantN: 1, wantFnCalls: 2},
		{name: "two requests, then a response lost", loseReq: 2, loseResp: 1, wantN: 1, wantFnCalls: 3},
		{name: "CONTROL naive retry, response lost", loseResp: 1, control: true, wantN: 2, wantFnCalls: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &faults{}
			f.loseRequest.Store(tc.loseReq)
			f.loseResponse.Store(tc.loseResp)
			cli := newFaultyClient(t, []string{endpoint}, f)
			opt := With(cli, WithBackoff(time.Microsecond, time.Millisecond))
			if tc.control {
				opt = withNaiveRetry(cli)
			}
			path := docPath(t)
			calls := 0
			got, err := status.NewStore[counter](path, opt).Mutate(testCtx(t), func(c *counter) error {
				calls++
				c.N++
				return nil
			})
			if err != nil {
				t.Fatalf("Mutate: %v", err)
			}
			if f.injected.Load() != tc.loseReq+tc.loseResp {
				t.Fatalf("injected %d faults, want %d", f.injected.Load(), tc.loseReq+tc.loseResp)
			}
			stored, err := status.NewStore[counter](path, With(direct)).Load(testCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			if stored.N != tc.wantN || calls != tc.wantFnCalls {
				t.Errorf("stored n=%d after %d fn calls; want n=%d after %d", stored.N, calls, tc.wantN, tc.wantFnCalls)
			}
			if !tc.control && got != stored {
				t.Errorf("Mutate returned %+v, stored %+v: the committed fn call was not the last", got, stored)
			}
		})
	}
}

// TestOutcomeUnknown: when ctx ends between a lost request or response and
// its fence, Update reports an *OutcomeError (matching ErrOutcomeUnknown and
// the ctx error), and Resolve settles it later: committed for a lost
// response, not committed (and fenced: it can never apply) for a lost
// request.
func TestOutcomeUnknown(t *testing.T) {
	endpoint := sharedServer(t).Endpoint()
	direct := newClient(t, endpoint)
	for _, tc := range []struct {
		name     string
		loseResp bool
	}{{"response lost", true}, {"request lost", false}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(testCtx(t))
			defer cancel()
			// The fault ends the caller's ctx and holds the commit's
			// driver until the caller has returned, so the caller
			// cannot learn the outcome in time.
			returned := make(chan struct{})
			f := &faults{onLoss: func() { cancel(); <-returned }}
			if tc.loseResp {
				f.loseResponse.Store(1)
			} else {
				f.loseRequest.Store(1)
			}
			path := docPath(t)
			st := status.NewStore[counter](path, With(newFaultyClient(t, []string{endpoint}, f)))
			var err error
			go func() {
				defer close(returned)
				_, err = st.Mutate(ctx, func(c *counter) error { c.N++; return nil })
			}()
			<-returned
			var oe *OutcomeError
			if !errors.As(err, &oe) || !errors.Is(err, ErrOutcomeUnknown) || !errors.Is(err, context.Canceled) {
				t.Fatalf("Mutate error = %v; want an *OutcomeError matching ErrOutcomeUnknown and context.Canceled", err)
			}
			committed, err := Resolve(testCtx(t), direct, oe)
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			stored, err := status.NewStore[counter](path, With(direct)).Load(testCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			if committed != tc.loseResp || stored.N != btoi(committed) {
				t.Fatalf("Resolve = %v with n=%d stored; want %v", committed, stored.N, tc.loseResp)
			}
			// Resolving again gives the same answer (the fence is idempotent).
			if again, err := Resolve(testCtx(t), direct, oe); err != nil || again != committed {
				t.Fatalf("second Resolve = %v, %v; want %v", again, err, committed)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestClientClosedMidCall: closing the client while a Mutate is under way
// makes it return an error matching ErrClosed — never hang, even with a
// context that never ends — and nothing is written.
func TestClientClosedMidCall(t *testing.T) {
	t.Run("during fn", func(t *testing.T) {
		endpoint := sharedServer(t).Endpoint()
		cli := newClient(t, endpoint)
		path := docPath(t)
		inFn, release := make(chan struct{}), make(chan struct{})
		done := make(chan error, 1)
		go func() {
			_, err := status.NewStore[counter](path, With(cli)).Mutate(context.Background(), func(c *counter) error {
				close(inFn)
				<-release
				c.N++
				return nil
			})
			done <- err
		}()
		<-inFn
		cli.Close()
		close(release)
		err := waitReturn(t, done)
		if !errors.Is(err, ErrClosed) || errors.Is(err, ErrOutcomeUnknown) {
			t.Fatalf("Mutate error = %v; want ErrClosed (nothing was sent)", err)
		}
		if got, _ := status.NewStore[counter](path, With(newClient(t, endpoint))).Load(testCtx(t)); got.N != 0 {
			t.Fatalf("stored n=%d, want 0", got.N)
		}
	})
	t.Run("blocked on a stopped server", func(t *testing.T) {
		srv := startServer(t, etcdtest.Options{})
		cli := newClient(t, srv.Endpoint())
		st := status.NewStore[counter](docPath(t), With(cli))
		if _, err := st.Mutate(testCtx(t), func(c *counter) error { c.N++; return nil }); err != nil {
			t.Fatal(err)
		}
		srv.Stop()
		started := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			close(started)
			_, err := st.Mutate(context.Background(), func(c *counter) error { c.N++; return nil })
			done <- err
		}()
		<-started
		// Whether Close lands before or during the call's wait for the
		// server, the call must end with ErrClosed.
		cli.Close()
		if err := waitReturn(t, done); !errors.Is(err, ErrClosed) {
			t.Fatalf("Mutate error = %v; want one matching ErrClosed", err)
		}
	})
}

// waitReturn waits for a call that must not hang. The bound only turns a
// hang into a failure; it does not measure anything.
func waitReturn(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatal("call still running a minute after its client was closed")
		return nil
	}
}
