package etcdstore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Turns. A batch that meets contention on its key (a lost optimistic
// commit, or writers already queued) stops competing and takes a turn: it
// puts an entry under the key's turn prefix, attached to its process's turn
// lease, and waits until no entry created before its own is left, watching
// only the entry just ahead of it. Then it reads the document and commits;
// the commit deletes the entry in the same transaction, which hands the
// turn to the next writer. Writers thus commit one after another in the
// order they queued (FIFO by create revision), with one raft proposal to
// queue and one to commit, instead of one lost proposal per retry. While
// the queue is not empty every optimistic commit fails on purpose (its
// transaction requires the queue to be empty), so late arrivals queue too
// rather than overtake.
//
// Turns order the writers; they do not make commits safe. The commit of a
// turn is still guarded by the document's ModRevision, so a writer whose
// entry vanished (lease expired while it was cut off) or a program that
// ignores turns can at worst cost a retry, never an update.

// A turn is one batch's place in its key's queue.
type turn struct {
	b     *Backend
	key   string           // the entry; "" until queued (or after it was lost)
	rev   int64            // the entry's create revision: its place
	lease clientv3.LeaseID // the entry's lease
}

// errRecheck ends a wait whose watch failed; the queue is read again.
var errRecheck = errors.New("turn: watch ended")

// wait queues t if it is not queued and returns once t's turn has come,
// with the document's current value and ModRevision.
func (t *turn) wait(ctx context.Context) (cur []byte, rev int64, err error) {
	cli := t.b.cli
	for {
		if t.key == "" {
			if err := t.enqueue(ctx); err != nil {
				return nil, 0, err
			}
		}
		// One read-only transaction (a linearizable read, no raft
		// proposal): the document, the last entry ahead of ours, ours.
		resp, err := cli.Txn(ctx).Then(
			clientv3.OpGet(t.b.key),
			clientv3.OpGet(t.b.turns, append(clientv3.WithLastCreate(),
				clientv3.WithPrefix(), clientv3.WithMaxCreateRev(t.rev-1), clientv3.WithKeysOnly())...),
			clientv3.OpGet(t.key, clientv3.WithKeysOnly()),
		).Commit()
		if err != nil {
			return nil, 0, err
		}
		if len(resp.Responses[2].GetResponseRange().Kvs) == 0 {
			t.key = "" // our lease expired: queue again, at the back
			continue
		}
		ahead := resp.Responses[1].GetResponseRange().Kvs
		if len(ahead) == 0 {
			cur, rev = value(resp.Responses[0].GetResponseRange().Kvs)
			return cur, rev, nil
		}
		if err := t.waitGone(ctx, string(ahead[0].Key), resp.Header.Revision+1); err != nil {
			return nil, 0, err
		}
	}
}

// enqueue puts t's entry. Repeating it after an ambiguous error is safe: a
// put of an existing key keeps its create revision, so t keeps its place.
func (t *turn) enqueue(ctx context.Context) error {
	lease, err := t.b.turnLease.get(ctx, t.b.cli)
	if err != nil {
		return err
	}
	if t.key == "" {
		t.key = t.b.turns + rand.Text()
	}
	resp, err := t.b.cli.Txn(ctx).Then(
		clientv3.OpPut(t.key, "", clientv3.WithLease(lease)),
		clientv3.OpGet(t.key, clientv3.WithKeysOnly()),
	).Commit()
	if err != nil {
		t.b.turnLease.dropIfGone(lease, err)
		return err
	}
	t.rev = resp.Responses[1].GetResponseRange().Kvs[0].CreateRevision
	t.lease = lease
	return nil
}

// waitGone waits until key is deleted at or after revision rev, keeping
// the process's turn lease alive meanwhile.
func (t *turn) waitGone(ctx context.Context, key string, rev int64) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the client's watcher for this wait
	events := t.b.cli.Watch(wctx, key, clientv3.WithRev(rev), clientv3.WithFilterPut())
	renew := time.NewTicker(t.b.turnLease.period())
	defer renew.Stop()
	for {
		select {
		case wr, ok := <-events:
			switch {
			case !ok && ctx.Err() != nil:
				return ctx.Err()
			case !ok:
				return errRecheck
			case wr.Err() != nil:
				// Not returned as is: a compacted revision (OutOfRange)
				// is no reason to give up, only to read again.
				return fmt.Errorf("%w: %v", errRecheck, wr.Err())
			}
			for _, ev := range wr.Events {
				if ev.Type == mvccpb.DELETE {
					return nil
				}
			}
		case <-renew.C:
			if err := t.b.turnLease.renew(ctx, t.b.cli, t.lease); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// release deletes t's entry if it may exist, so that the next writer need
// not wait for the lease to expire. It runs after the batch's callers have
// their results, possibly after they all left, so it has its own bound; if
// it fails, the lease is no longer renewed, and the entry goes with it.
func (t *turn) release() {
	if t.key == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	if _, err := t.b.cli.Delete(ctx, t.key); err != nil {
		t.b.turnLease.drop(t.lease)
	}
	t.key = ""
}

// releaseTimeout bounds the release of a turn.
const releaseTimeout = 5 * time.Second

// turnLease is the lease of a process's (one With's) queue entries. It is
// kept alive only by its waiting writers, so it expires one TTL after the
// process stops waiting (or dies, or is cut off), and the entries with it.
type turnLease struct {
	ttl time.Duration // as asked
	cur atomic.Pointer[liveLease]
	sem chan struct{} // one grant or renewal at a time, ctx-aware
}

type liveLease struct {
	id      clientv3.LeaseID
	ttl     time.Duration // as granted
	renewed time.Time     // taken before the request: the server's clock starts later
}

func newTurnLease(ttl time.Duration) *turnLease {
	return &turnLease{ttl: ttl, sem: make(chan struct{}, 1)}
}

// period is how often waiters renew the lease: three times per TTL.
func (l *turnLease) period() time.Duration {
	ttl := l.ttl
	if c := l.cur.Load(); c != nil {
		ttl = c.ttl
	}
	return max(ttl/3, 10*time.Millisecond)
}

// get returns the lease for a new entry: the current one if it was renewed
// within the last period (so the entry lives at least two more periods),
// renewed or replaced otherwise.
func (l *turnLease) get(ctx context.Context, cli *clientv3.Client) (clientv3.LeaseID, error) {
	if c := l.cur.Load(); c != nil && time.Since(c.renewed) < c.ttl/3 {
		return c.id, nil
	}
	select {
	case l.sem <- struct{}{}:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	defer func() { <-l.sem }()
	c := l.cur.Load()
	if c != nil && time.Since(c.renewed) < c.ttl/3 { // renewed while we waited
		return c.id, nil
	}
	if c != nil && time.Since(c.renewed) < c.ttl {
		if err := l.keepAlive(ctx, cli, c); err == nil {
			return c.id, nil
		} else if !errors.Is(err, errLeaseGone) {
			return 0, err
		}
	}
	start := time.Now()
	secs := int64((l.ttl + time.Second - 1) / time.Second)
	resp, err := cli.Grant(ctx, secs)
	if err != nil {
		return 0, err
	}
	l.cur.Store(&liveLease{id: resp.ID, ttl: time.Duration(resp.TTL) * time.Second, renewed: start})
	return resp.ID, nil
}

// renew keeps id alive if it is the current lease and was not renewed
// within the last period. A lease that is gone is reported (its entries
// are gone too); renewal errors that may pass are not.
func (l *turnLease) renew(ctx context.Context, cli *clientv3.Client, id clientv3.LeaseID) error {
	c := l.cur.Load()
	if c == nil || c.id != id || time.Since(c.renewed) < c.ttl/3 {
		return nil
	}
	select {
	case l.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-l.sem }()
	if c = l.cur.Load(); c == nil || c.id != id || time.Since(c.renewed) < c.ttl/3 {
		return nil
	}
	if err := l.keepAlive(ctx, cli, c); errors.Is(err, errLeaseGone) {
		return err
	}
	return nil
}

var errLeaseGone = errors.New("turn lease expired")

// keepAlive renews c; the caller holds sem. A lease that is gone is
// dropped.
func (l *turnLease) keepAlive(ctx context.Context, cli *clientv3.Client, c *liveLease) error {
	start := time.Now()
	resp, err := cli.KeepAliveOnce(ctx, c.id)
	if err != nil {
		if l.dropIfGone(c.id, err) {
			return errLeaseGone
		}
		return err
	}
	l.cur.CompareAndSwap(c, &liveLease{id: c.id, ttl: time.Duration(resp.TTL) * time.Second, renewed: start})
	return nil
}

// dropIfGone drops id if err says that the lease does not exist.
func (l *turnLease) dropIfGone(id clientv3.LeaseID, err error) bool {
	if !isLeaseNotFound(err) {
		return false
	}
	l.drop(id)
	return true
}

// drop forgets id if it is still the current lease: it is no longer
// renewed, and new entries get a new lease.
func (l *turnLease) drop(id clientv3.LeaseID) {
	if c := l.cur.Load(); c != nil && c.id == id {
		l.cur.CompareAndSwap(c, nil)
	}
}
