package etcdstore

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/etcdstore/internal/etcdtest"
)

// A workload is a set of workers that increment one document until
// stopped, each call under its own deadline, while the test breaks the
// cluster between phases. Every call's outcome is accounted for: an ack,
// an unknown outcome (resolved at the end), or a failure, which must be a
// ctx deadline: a call during an outage ends when its ctx says so.
type workload struct {
	t        *testing.T
	results  chan error
	stop     chan struct{}
	wg       sync.WaitGroup
	acks     int
	failures int // since the last waitFailures
	unknown  []*OutcomeError
}

const (
	workers      = 6
	perCallLimit = 500 * time.Millisecond
	phaseLimit   = 2 * time.Minute // a phase that takes longer is a failure
)

// startWorkload starts one worker per option, all on path.
func startWorkload(t *testing.T, path string, opts []status.Option) *workload {
	w := &workload{t: t, results: make(chan error, 1024), stop: make(chan struct{})}
	for _, opt := range opts {
		st := status.NewStore[counter](path, opt)
		w.wg.Go(func() {
			for {
				select {
				case <-w.stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), perCallLimit)
				_, err := st.Mutate(ctx, func(c *counter) error { c.N++; return nil })
				cancel()
				w.results <- err
			}
		})
	}
	return w
}

// collect accounts for outcomes until done holds or the workers have
// stopped.
func (w *workload) collect(phase string, done func() bool) {
	w.t.Helper()
	deadline := time.NewTimer(phaseLimit)
	defer deadline.Stop()
	for !done() {
		select {
		case err, ok := <-w.results:
			if !ok {
				return
			}
			w.account(err)
		case <-deadline.C:
			w.t.Fatalf("%s: not done after %v (%d acks, %d failures)", phase, phaseLimit, w.acks, w.failures)
		}
	}
}

func (w *workload) account(err error) {
	w.t.Helper()
	var oe *OutcomeError
	switch {
	case err == nil:
		w.acks++
		return
	case !errors.Is(err, context.DeadlineExceeded):
		w.t.Errorf("Mutate: %v; want success or a ctx deadline", err)
	case errors.As(err, &oe):
		w.unknown = append(w.unknown, oe)
	}
	w.failures++
}

func (w *workload) waitAcks(phase string, n int) {
	w.t.Helper()
	base := w.acks
	w.collect(phase, func() bool { return w.acks >= base+n })
}

// waitFailures waits until n calls have failed (every worker has met the
// outage, say).
func (w *workload) waitFailures(phase string, n int) {
	w.t.Helper()
	w.failures = 0
	w.collect(phase, func() bool { return w.failures >= n })
}

// probe makes one call whose ctx ends after d; it must end with that ctx
// (or succeed, if mayPass).
func (w *workload) probe(st *status.Store[counter], d time.Duration, mayPass bool) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_, err := st.Mutate(ctx, func(c *counter) error { c.N++; return nil })
	switch {
	case err == nil && mayPass:
		w.acks++
	case !errors.Is(err, context.DeadlineExceeded):
		w.t.Errorf("Mutate with a %v ctx: %v; want an error wrapping context.DeadlineExceeded", d, err)
	}
	var oe *OutcomeError
	if errors.As(err, &oe) {
		w.unknown = append(w.unknown, oe)
	}
}

// finish stops the workers, resolves the unknown outcomes and checks the
// count: it must be exactly the acknowledged increments plus the unknown
// ones that committed. For a CONTROL it must not be.
func (w *workload) finish(direct *clientv3.Client, path string, control bool) {
	w.t.Helper()
	close(w.stop)
	go func() { w.wg.Wait(); close(w.results) }()
	w.collect("drain", func() bool { return false })
	committed := 0
	for _, oe := range w.unknown {
		ok, err := Resolve(testCtx(w.t), direct, oe)
		if err != nil {
			w.t.Fatalf("Resolve: %v", err)
		}
		committed += btoi(ok)
	}
	final, err := status.NewStore[counter](path, With(direct)).Load(testCtx(w.t))
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Logf("%d acknowledged, %d unknown outcomes (%d committed); final count %d", w.acks, len(w.unknown), committed, final.N)
	switch want := w.acks + committed; {
	case control && final.N == want:
		w.t.Fatalf("CONTROL count %d == %d acknowledged + %d committed unknowns: the harness does not see updates applied twice", final.N, w.acks, committed)
	case !control && final.N != want:
		w.t.Errorf("final count %d, want %d = %d acknowledged + %d unknown outcomes that committed", final.N, want, w.acks, committed)
	}
}

// crashCase is a run of a crash test: the real backend, or the CONTROL,
// which retries after any error without markers (so a commit whose reply
// was lost is applied again). Both lose one reply in ten; the control's
// first three commits lose theirs for certain.
type crashCase struct {
	name    string
	control bool
}

var crashCases = []crashCase{{"guarded", false}, {"CONTROL naive retry", true}}

// options returns the workers' options: half with a client each, half
// sharing one client and With (group commit), all with faults f.
func (tc crashCase) options(t *testing.T, endpoints []string, f *faults) []status.Option {
	if tc.control {
		f.loseResponse.Store(3)
	}
	f.randomPct.Store(10)
	shared := With(newFaultyClient(t, endpoints, f))
	var opts []status.Option
	for i := range workers {
		switch {
		case tc.control:
			opts = append(opts, withNaiveRetry(newFaultyClient(t, endpoints, f)))
		case i%2 == 0:
			opts = append(opts, With(newFaultyClient(t, endpoints, f)))
		default:
			opts = append(opts, shared)
		}
	}
	return opts
}

func crashCycles() int {
	if os.Getenv("SOAK") != "" {
		return 5
	}
	return 1
}

// TestServerKilled runs etcd as a separate process and kills it (SIGKILL,
// with requests in flight) in the middle of a run, then restarts it on the
// same URL and data directory. No acknowledged increment is lost and none
// is applied twice: the final count is exactly the acknowledged ones plus
// the unknown outcomes that Resolve finds committed. Calls during the
// outage end with their ctx.
func TestServerKilled(t *testing.T) {
	for _, tc := range crashCases {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, etcdtest.Options{})
			f := &faults{}
			path := docPath(t)
			w := startWorkload(t, path, tc.options(t, srv.Endpoints(), f))
			probe := status.NewStore[counter](path, With(newClient(t, srv.Endpoint())))
			for range crashCycles() {
				w.waitAcks("before the kill", 100)
				srv.Kill()
				w.probe(probe, 50*time.Millisecond, false)
				w.waitFailures("outage", workers)
				if err := srv.Restart(); err != nil {
					t.Fatal(err)
				}
			}
			w.waitAcks("after the restart", 100)
			w.finish(newClient(t, srv.Endpoint()), path, tc.control)
			if f.injected.Load() == 0 {
				t.Errorf("no fault was injected")
			}
		})
	}
}

// TestLeaderKilled runs a 3-member cluster (each member a process) and
// kills its leader in the middle of a run: writes go on once the others
// have elected a new one. Then a second member is killed: without a
// quorum nothing can commit, and calls end with their ctx. The members
// are restarted one by one on their data, and writes go on again. The
// count is checked as in TestServerKilled.
func TestLeaderKilled(t *testing.T) {
	for _, tc := range crashCases {
		t.Run(tc.name, func(t *testing.T) {
			cl := startServer(t, etcdtest.Options{Members: 3})
			f := &faults{}
			path := docPath(t)
			w := startWorkload(t, path, tc.options(t, cl.Endpoints(), f))
			probe := status.NewStore[counter](path, With(newClientTo(t, cl.Endpoints())))
			w.waitAcks("3 members", 60)
			leader := waitLeader(t, w, cl)
			leader.Kill()
			w.probe(probe, 100*time.Millisecond, true) // during the election, or after it
			w.waitAcks("after the election", 60)
			var other *etcdtest.Member
			for _, m := range cl.Members {
				if m != leader {
					other = m
					break
				}
			}
			other.Kill()
			w.probe(probe, 100*time.Millisecond, false) // no quorum: no leader
			w.waitFailures("no quorum", workers)
			if err := leader.Restart(); err != nil {
				t.Fatal(err)
			}
			w.waitAcks("quorum again", 60)
			if err := other.Restart(); err != nil {
				t.Fatal(err)
			}
			w.waitAcks("3 members again", 60)
			w.finish(newClientTo(t, cl.Endpoints()), path, tc.control)
		})
	}
}

// waitLeader returns the cluster's leader, letting the workload run while
// the members do not agree on one.
func waitLeader(t *testing.T, w *workload, cl *etcdtest.Cluster) *etcdtest.Member {
	t.Helper()
	for range 100 {
		m, err := cl.Leader(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		if m != nil {
			return m
		}
		w.waitAcks("no leader yet", 1)
	}
	t.Fatal("the members did not agree on a leader")
	return nil
}
