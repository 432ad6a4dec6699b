package etcdstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
)

// Marker values. A marker key exists only while its lease lives.
const (
	markCommitted = "committed"
	markFenced    = "fenced"
)

// ErrOutcomeUnknown is matched ([errors.Is]) by an *OutcomeError.
var ErrOutcomeUnknown = errors.New("commit outcome unknown")

// errMarkerExpired: the marker's lease is gone, so whether the commit was
// applied can no longer be told.
var errMarkerExpired = errors.New("commit marker expired")

// An OutcomeError reports an Update whose last commit was sent but whose
// outcome could not be settled before Update had to return (its ctx ended,
// the client was closed, the marker expired). The change was applied at
// most once; [Resolve] tells which.
type OutcomeError struct {
	Key    string // the document's key
	Marker string // the commit's marker key
	Err    error  // why the outcome could not be settled
	lease  clientv3.LeaseID
}

func (e *OutcomeError) Error() string {
	return fmt.Sprintf("etcdstore: update %s: commit outcome unknown (marker %s): %v", e.Key, e.Marker, e.Err)
}

// Unwrap makes the error match [ErrOutcomeUnknown] and its cause.
func (e *OutcomeError) Unwrap() []error { return []error{ErrOutcomeUnknown, e.Err} }

// Resolve settles the outcome reported by e: it fences the commit's marker,
// so the commit can no longer be applied if it has not been, and reports
// whether it was. It fails if the marker's lease has expired (the outcome is
// then lost for good) or if ctx ends first.
func Resolve(ctx context.Context, cli *clientv3.Client, e *OutcomeError) (committed bool, err error) {
	if cli == nil || e == nil {
		return false, errors.New("etcdstore: resolve: nil client or error")
	}
	bo := newBackoff(newConfig(nil))
	committed, err = fence(ctx, cli, e.Marker, e.lease, &bo)
	if err != nil {
		return false, fmt.Errorf("etcdstore: resolve %s: %w", e.Marker, err)
	}
	return committed, nil
}

// Update runs one read-modify-write cycle; see [status.Backend] and the
// package doc. Errors other than *OutcomeError mean nothing was written.
// An apply that returns nil for an existing document deletes its key (see
// [Backend.Remove]).
func (b *Backend) Update(ctx context.Context, apply func(cur []byte) ([]byte, error)) error {
	switch {
	case ctx == nil:
		return fmt.Errorf("etcdstore: update %s: %w: context", b.id(), errNilArg)
	case apply == nil:
		return fmt.Errorf("etcdstore: update %s: %w: apply function", b.id(), errNilArg)
	}
	if err := b.check("update", ctx); err != nil {
		return err
	}
	c := &call{ctx: ctx, done: make(chan struct{})}
	c.fn.init()
	b.enqueue(c)
	defer b.leave()
	renew := time.NewTicker(b.turnLease.period())
	defer renew.Stop()
	for {
		select {
		case cur := <-c.fn.readyDoc():
			c.fn.apply(apply, cur)
		case <-c.done:
			return c.result()
		case <-ctx.Done():
			return b.depart(c)
		case <-renew.C:
			b.turnLease.keep(ctx, b.cli)
		}
	}
}

// commit drives one batch to its outcome: read, run the applies, commit
// with one guarded transaction and one marker, and settle an ambiguous
// commit before the applies run again, so that at most one attempt ever
// commits and it is the one whose results the callers get. The first
// attempt is optimistic; once the batch meets contention it takes a turn
// (see turn.go) and keeps it until it commits or gives up.
func (b *Backend) commit(bt *batch) {
	ctx := bt.ctx // ends only when every member has departed
	id := rand.Text()
	bo := newBackoff(b.cfg)
	var tn *turn // the batch's place in the key's queue, once contended
	defer func() {
		if tn != nil {
			tn.release()
		}
	}()
	var (
		cur   []byte
		rev   int64
		fresh bool // cur and rev are current enough to apply without a read
	)
	// giveUp ends the batch after a failed request; it reports false when
	// the request is worth retrying (after the backoff).
	giveUp := func(err error) bool {
		switch {
		case ctx.Err() != nil: // everyone has left
			return true
		case b.closed() || terminal(err):
			bt.fail(b.wrap("update", ctx, err))
			return true
		}
		if werr := bo.wait(ctx, b.cli); werr != nil {
			if ctx.Err() == nil {
				bt.fail(b.wrap("update", ctx, werr))
			}
			return true
		}
		return false
	}
	for attempt := 0; ; attempt++ {
		if !fresh {
			var err error
			if tn == nil && !b.cfg.noTurns && b.hot.is(b.key) {
				tn = &turn{b: b}
			}
			if tn == nil {
				var queued bool
				if cur, rev, queued, err = b.read(ctx); err == nil && queued {
					tn = &turn{b: b}
				}
			}
			if tn != nil && err == nil {
				if cur, rev, err = tn.wait(ctx); err == nil {
					b.absorb(bt)
				}
			}
			if err != nil {
				if giveUp(err) {
					return
				}
				continue
			}
		}
		fresh = false

		lease, err := b.lease.get(ctx, b.cli)
		if err != nil {
			if giveUp(err) {
				return
			}
			fresh = true // nothing was sent; the read still serves
			continue
		}
		marker := b.cfg.markerPrefix() + id + "/" + strconv.Itoa(attempt)
		next, live := bt.run(b, cur, marker, lease)
		switch {
		case live == 0:
			return
		case sameDoc(next, cur):
			bt.finish()
			return
		case b.closed(): // nothing sent yet: a plain error
			bt.fail(b.wrap("update", ctx, b.cli.Ctx().Err()))
			return
		}
		cmps := []clientv3.Cmp{
			clientv3.Compare(clientv3.ModRevision(b.key), "=", rev),
			clientv3.Compare(clientv3.Version(marker), "=", 0),
		}
		ops := []clientv3.Op{
			putOrDelete(b.key, next),
			clientv3.OpPut(marker, markCommitted, clientv3.WithLease(lease)),
		}
		switch {
		case tn != nil: // the commit hands the turn on
			ops = append(ops, tn.handOver(next)...)
		case !b.cfg.noTurns: // an optimistic commit never overtakes a queue
			cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(b.turns), "=", 0).WithPrefix())
		}
		resp, err := b.cli.Txn(ctx).If(cmps...).Then(ops...).Else(clientv3.OpGet(b.key)).Commit()
		switch {
		case err == nil && resp.Succeeded:
			if tn != nil {
				tn.handedOff()
			}
			bt.finish()
			return
		case err == nil && tn == nil && !b.cfg.noTurns:
			// Contended: stop competing and queue, at once (the queue
			// orders the writers; a backoff would only add latency).
			tn = &turn{b: b}
			b.hot.mark(b.key)
			continue
		case err == nil: // conflict
			if tn == nil { // the else branch read the current value
				cur, rev = value(resp.Responses[0].GetResponseRange().Kvs)
				fresh = true
			} else if !bo.started() {
				// Our turn's read was stale, a writer that ignores turns
				// got in, or our entry expired while we were cut off:
				// check our place and read again, at once the first time.
				bo.start()
				continue
			}
			if werr := bo.wait(ctx, b.cli); werr != nil {
				if ctx.Err() == nil {
					bt.fail(b.wrap("update", ctx, werr))
				}
				return
			}
			continue
		case isLeaseNotFound(err):
			// Rejected before anything was applied: a lease expired (e.g.
			// a long outage), the marker's or, with it, our turn's. Take a
			// fresh marker lease; a turn checks its entry again (and
			// queues anew if the entry went with its lease).
			b.lease.drop(lease)
			fresh = tn == nil
			continue
		case terminal(err):
			bt.fail(b.wrap("update", ctx, err))
			return
		}

		// The commit may or may not have been applied.
		committed, ferr := fence(ctx, b.cli, marker, lease, &bo)
		switch {
		case ferr != nil && ctx.Err() != nil:
			return // everyone has left, each with this marker
		case ferr != nil:
			bt.fail(&OutcomeError{Key: b.key, Marker: marker, Err: ferr, lease: lease})
			return
		case committed:
			if tn != nil {
				tn.handedOff()
			}
			bt.finish()
			return
		}
		if giveUp(err) {
			return
		}
	}
}

// sameDoc reports whether next leaves cur as it is: the same bytes, and
// both present or both missing (an empty value is a document).
func sameDoc(next, cur []byte) bool {
	return bytes.Equal(next, cur) && (next == nil) == (cur == nil)
}

// putOrDelete stores next at key, or deletes key if next is nil.
func putOrDelete(key string, next []byte) clientv3.Op {
	if next == nil {
		return clientv3.OpDelete(key)
	}
	return clientv3.OpPut(key, string(next))
}

// read returns the document, its ModRevision, and whether writers are
// queued for turns on it, in one read-only transaction (a linearizable
// read: no raft proposal).
func (b *Backend) read(ctx context.Context) (cur []byte, rev int64, queued bool, err error) {
	if b.cfg.noTurns {
		resp, err := b.cli.Get(ctx, b.key)
		if err != nil {
			return nil, 0, false, err
		}
		cur, rev = value(resp.Kvs)
		return cur, rev, false, nil
	}
	resp, err := b.cli.Txn(ctx).Then(
		clientv3.OpGet(b.key),
		clientv3.OpGet(b.turns, clientv3.WithPrefix(), clientv3.WithCountOnly()),
	).Commit()
	if err != nil {
		return nil, 0, false, err
	}
	cur, rev = value(resp.Responses[0].GetResponseRange().Kvs)
	return cur, rev, resp.Responses[1].GetResponseRange().Count > 0, nil
}

func isLeaseNotFound(err error) bool { return errors.Is(err, rpctypes.ErrLeaseNotFound) }

// fence settles an ambiguous commit: it puts "fenced" in the marker if the
// marker is still absent (so the commit, guarded by "marker absent", can
// never apply afterwards) or reads the marker's value otherwise.
func fence(ctx context.Context, cli *clientv3.Client, marker string, lease clientv3.LeaseID, bo *backoff) (bool, error) {
	for {
		resp, err := cli.Txn(ctx).If(
			clientv3.Compare(clientv3.Version(marker), "=", 0),
		).Then(
			clientv3.OpPut(marker, markFenced, clientv3.WithLease(lease)),
		).Else(
			clientv3.OpGet(marker),
		).Commit()
		if err == nil {
			if resp.Succeeded {
				return false, nil
			}
			kvs := resp.Responses[0].GetResponseRange().Kvs
			return len(kvs) == 1 && string(kvs[0].Value) == markCommitted, nil
		}
		switch {
		case ctx.Err() != nil:
			if errors.Is(err, ctx.Err()) {
				return false, err
			}
			return false, fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case cli.Ctx().Err() != nil:
			return false, fmt.Errorf("%w: %v", ErrClosed, err)
		case isLeaseNotFound(err):
			// The marker's lease is gone and with it the marker, if the
			// commit made one: the outcome cannot be known any more. (The
			// commit cannot apply later either: its lease is gone.)
			return false, errMarkerExpired
		case terminal(err):
			return false, err
		}
		if err := bo.wait(ctx, cli); err != nil {
			return false, err
		}
	}
}

// terminal reports errors that a retry cannot cure. The server (or the
// client, for a message over its send limit) rejects such requests before
// applying anything.
func terminal(err error) bool {
	if errors.Is(err, rpctypes.ErrTooManyRequests) {
		return false // ResourceExhausted, but it passes
	}
	var code codes.Code
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		code = ee.Code()
	} else if s, ok := grpcstatus.FromError(err); ok {
		code = s.Code()
	} else {
		return false
	}
	// FailedPrecondition is not here: etcd uses it for passing states too
	// ("not leader", "not capable" right after a restart).
	switch code {
	case codes.InvalidArgument, codes.PermissionDenied, codes.Unauthenticated,
		codes.OutOfRange, codes.Unimplemented,
		codes.ResourceExhausted: // no space; a message over gRPC's size limit
		return true
	}
	return false
}

// backoff is exponential with full jitter: the n-th wait is uniform in
// [0, min(max, min·2ⁿ)], which spreads competing writers apart.
type backoff struct {
	lo, hi, cur time.Duration
}

func newBackoff(c config) backoff { return backoff{lo: c.minBackoff, hi: c.maxBackoff} }

// started reports whether the backoff has begun; start begins it without
// waiting (the next wait is the second step).
func (b *backoff) started() bool { return b.cur != 0 }
func (b *backoff) start()        { b.cur = b.lo }

func (b *backoff) wait(ctx context.Context, cli *clientv3.Client) error {
	if b.cur == 0 {
		b.cur = b.lo
	} else {
		b.cur = min(2*b.cur, b.hi)
	}
	t := time.NewTimer(mrand.N(b.cur + 1))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-cli.Ctx().Done():
		return ErrClosed
	}
}

// leaseCache hands out one lease for the markers of many commits. A lease
// is used only during the first half of its TTL, so every marker lives at
// least TTL/2 after its commit was sent: the window in which an ambiguous
// commit can be fenced.
type leaseCache struct {
	ttl   time.Duration
	cur   atomic.Pointer[heldLease]
	grant chan struct{} // one granter at a time, ctx-aware
}

type heldLease struct {
	id      clientv3.LeaseID
	granted time.Time // taken before the request: the server's clock starts later
}

func newLeaseCache(ttl time.Duration) *leaseCache {
	return &leaseCache{ttl: ttl, grant: make(chan struct{}, 1)}
}

func (c *leaseCache) fresh() (clientv3.LeaseID, bool) {
	if l := c.cur.Load(); l != nil && time.Since(l.granted) < c.ttl/2 {
		return l.id, true
	}
	return 0, false
}

func (c *leaseCache) get(ctx context.Context, cli *clientv3.Client) (clientv3.LeaseID, error) {
	if id, ok := c.fresh(); ok {
		return id, nil
	}
	select {
	case c.grant <- struct{}{}:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	defer func() { <-c.grant }()
	if id, ok := c.fresh(); ok { // granted while we waited
		return id, nil
	}
	start := time.Now()
	secs := int64((c.ttl + time.Second - 1) / time.Second)
	resp, err := cli.Grant(ctx, secs)
	if err != nil {
		return 0, err
	}
	c.cur.Store(&heldLease{id: resp.ID, granted: start})
	return resp.ID, nil
}

// drop forgets id if it is still the current lease.
func (c *leaseCache) drop(id clientv3.LeaseID) {
	if l := c.cur.Load(); l != nil && l.id == id {
		c.cur.CompareAndSwap(l, nil)
	}
}
