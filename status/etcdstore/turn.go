package etcdstore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"sync"
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
	for {
		var st queueState
		if t.key == "" {
			st, err = t.enqueue(ctx)
		} else {
			st, err = t.check(ctx)
		}
		switch {
		case err != nil:
			return nil, 0, err
		case !st.queued:
			t.key, t.rev = "", 0 // our lease expired: queue again, at the back
			continue
		case st.ahead == "":
			return st.cur, st.rev, nil
		}
		t.b.hot.mark(t.b.key)
		if err := t.waitGone(ctx, st.ahead, st.revision); err != nil {
			return nil, 0, err
		}
	}
}

// queueState is what t learns about its queue from one request.
type queueState struct {
	queued   bool   // t's entry exists
	ahead    string // the entry just ahead of t's; "" if t's turn has come
	cur      []byte // the document, if t's turn has come
	rev      int64  // its ModRevision
	revision int64  // the state's revision
}

// enqueue puts t's entry and, in the same transaction, reads the entry
// ahead of it, or the document if there is none. Repeating it after an
// ambiguous error is safe: a put of an existing key keeps its create
// revision, so t keeps its place.
func (t *turn) enqueue(ctx context.Context) (queueState, error) {
	lease, err := t.b.turnLease.get(ctx, t.b.cli)
	if err != nil {
		return queueState{}, err
	}
	if t.key == "" {
		t.key = t.b.turns + rand.Text()
	}
	// Reads in a transaction see its writes: the newest entry is ours
	// (unless a repeated put found it there already), the next one is
	// the entry ahead.
	resp, err := t.b.cli.Txn(ctx).Then(
		clientv3.OpPut(t.key, "", clientv3.WithLease(lease)),
		clientv3.OpGet(t.b.turns, clientv3.WithPrefix(), clientv3.WithKeysOnly(), clientv3.WithLimit(2),
			clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortDescend)),
		clientv3.OpGet(t.b.key),
	).Commit()
	if err != nil {
		t.b.turnLease.dropIfGone(lease, err)
		return queueState{}, err
	}
	t.lease = lease
	entries := resp.Responses[1].GetResponseRange().Kvs
	if len(entries) == 0 || string(entries[0].Key) != t.key {
		t.rev = 0 // a repeated put: our place is older; look it up
		return t.check(ctx)
	}
	t.rev = entries[0].CreateRevision
	st := queueState{queued: true, revision: resp.Header.Revision}
	if len(entries) > 1 {
		st.ahead = string(entries[1].Key)
		return st, nil
	}
	t.b.hot.clear(t.b.key) // nobody else queues: try optimistically next time
	st.cur, st.rev = value(resp.Responses[2].GetResponseRange().Kvs)
	return st, nil
}

// check reads whether t's entry still exists, the entry just ahead of it,
// and the document, in one read-only transaction of the member's local
// state. A serializable read is enough, and spares the wait for a read
// index on the path from one turn to the next: if the member's state holds
// t's entry and none ahead of it, every entry ahead has been deleted for
// good, and with it the last commit of a turn is in that state too. (Stale
// values cannot do harm either: the commit is guarded by the ModRevision.)
//
// A member that lags behind the one that took t's entry may not show it
// yet; that answer is confirmed with a linearizable read before t queues
// again (which would leave its old entry ahead of its new one).
func (t *turn) check(ctx context.Context) (queueState, error) {
	st, err := t.read(ctx, clientv3.WithSerializable())
	if err == nil && !st.queued {
		st, err = t.read(ctx)
	}
	return st, err
}

func (t *turn) read(ctx context.Context, opt ...clientv3.OpOption) (queueState, error) {
	if t.rev == 0 {
		resp, err := t.b.cli.Get(ctx, t.key, slices.Concat(opt, []clientv3.OpOption{clientv3.WithKeysOnly()})...)
		if err != nil {
			return queueState{}, err
		}
		if len(resp.Kvs) == 0 {
			return queueState{revision: resp.Header.Revision}, nil
		}
		t.rev = resp.Kvs[0].CreateRevision
	}
	resp, err := t.b.cli.Txn(ctx).Then(
		clientv3.OpGet(t.key, slices.Concat(opt, []clientv3.OpOption{clientv3.WithKeysOnly()})...),
		clientv3.OpGet(t.b.turns, slices.Concat(opt, clientv3.WithLastCreate(), []clientv3.OpOption{
			clientv3.WithPrefix(), clientv3.WithMaxCreateRev(t.rev - 1), clientv3.WithKeysOnly()})...),
		clientv3.OpGet(t.b.key, opt...),
	).Commit()
	if err != nil {
		return queueState{}, err
	}
	mine := resp.Responses[0].GetResponseRange().Kvs
	st := queueState{queued: len(mine) == 1, revision: resp.Header.Revision}
	if !st.queued {
		return st, nil
	}
	if ahead := resp.Responses[1].GetResponseRange().Kvs; len(ahead) > 0 {
		st.ahead = string(ahead[0].Key)
		return st, nil
	}
	st.cur, st.rev = value(resp.Responses[2].GetResponseRange().Kvs)
	return st, nil
}

// waitGone waits until key, which existed at revision known, is deleted,
// keeping the process's turn lease alive meanwhile.
//
// The watch starts at the server's current revision rather than at
// known+1: etcd serves a watch that starts in the past from a background
// loop that catches up every 100ms, which would add up to that much to
// every hand-over of a turn. The gap is closed by one read instead: if the
// watch starts after known, the key must still exist at its start.
func (t *turn) waitGone(ctx context.Context, key string, known int64) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the client's watcher for this wait
	events := t.b.cli.Watch(wctx, key, clientv3.WithCreatedNotify(), clientv3.WithFilterPut())
	renew := time.NewTicker(t.b.turnLease.period())
	defer renew.Stop()
	created := false
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
			case !created && wr.Created:
				created = true
				if wr.Header.Revision > known {
					if gone, err := t.gone(ctx, key, wr.Header.Revision); gone || err != nil {
						return err
					}
				}
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

// gone reports whether key is absent in a state at or after revision rev:
// a local read if the member has caught up, a linearizable one otherwise.
func (t *turn) gone(ctx context.Context, key string, rev int64) (bool, error) {
	resp, err := t.b.cli.Get(ctx, key, clientv3.WithSerializable(), clientv3.WithKeysOnly())
	if err == nil && resp.Header.Revision < rev {
		resp, err = t.b.cli.Get(ctx, key, clientv3.WithKeysOnly())
	}
	if err != nil {
		return false, err
	}
	return len(resp.Kvs) == 0, nil
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

// hotKeys remembers the keys on which a With recently waited for a turn,
// so that its next Update of such a key queues at once instead of first
// losing an optimistic commit (a raft proposal) to the writers already
// queued. An Update that queues and finds nobody ahead clears its key.
type hotKeys struct {
	mu sync.Mutex
	m  map[string]time.Time // key → when it was last marked
}

// hotFor is how long a mark holds; maxHot bounds the map.
const (
	hotFor = 10 * time.Second
	maxHot = 1024
)

func (h *hotKeys) is(key string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	at, ok := h.m[key]
	return ok && time.Since(at) < hotFor
}

func (h *hotKeys) mark(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = make(map[string]time.Time)
	}
	if len(h.m) >= maxHot {
		for k, at := range h.m {
			if time.Since(at) >= hotFor {
				delete(h.m, k)
			}
		}
		if len(h.m) >= maxHot {
			clear(h.m)
		}
	}
	h.m[key] = time.Now()
}

func (h *hotKeys) clear(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.m, key)
}
