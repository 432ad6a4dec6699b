package etcdstore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Turns. A batch that meets contention on its key (a lost optimistic
// commit, or writers already queued) stops competing and takes a turn: it
// puts an entry under the key's turn prefix, attached to its process's turn
// lease, and waits until every entry created before its own is gone or
// handed over, watching only the entry just ahead of it. Then it commits,
// and the commit hands the turn on in the same transaction: it deletes the
// entry, or, if the batch had to wait (so others likely wait behind it),
// writes the committed document into it, so that the next writer learns
// both "your turn" and the document from one watch event, without a read.
// That writer's commit deletes the handed-over entry. Writers thus commit
// one after another in the order they queued (FIFO by create revision),
// with one raft proposal to queue and one to commit, instead of one lost
// proposal per retry. While the queue is not empty every optimistic commit
// fails on purpose (its transaction requires the queue to be empty), so
// late arrivals queue too rather than overtake.
//
// Turns order the writers; they do not make commits safe. The commit of a
// turn is still guarded by the document's ModRevision, so a writer whose
// entry vanished (lease expired while it was cut off), a stale document, or
// a program that ignores turns can at worst cost a retry, never an update.

// Entry values: a writer waiting or holding its turn has an empty entry; a
// handed-over entry holds the document as committed ("=" and its bytes),
// or only "!" if the document is too large to be written twice in one
// request.
const (
	handedOver = '='
	handedBare = '!'
	// maxHandOver is the largest document written into a handed-over
	// entry (etcd's request limit is 1.5 MiB by default).
	maxHandOver = 64 << 10
)

func isHandedOver(v []byte) bool {
	return len(v) > 0 && (v[0] == handedOver || v[0] == handedBare)
}

// A turn is one batch's place in its key's queue.
type turn struct {
	b      *Backend
	key    string           // the entry; "" until queued (or after it was lost)
	rev    int64            // the entry's create revision: its place
	lease  clientv3.LeaseID // the entry's lease
	prior  string           // a handed-over entry ahead, which our commit deletes
	waited bool             // the batch waited for another writer's turn
}

// errRecheck ends a wait whose watch failed; the queue is read again.
var errRecheck = errors.New("turn: watch ended")

// wait queues t if it is not queued and returns once t's turn has come,
// with the document's current value and ModRevision.
func (t *turn) wait(ctx context.Context) (cur []byte, rev int64, err error) {
	var st queueState
	if t.key == "" {
		st, err = t.enqueue(ctx)
	} else {
		st, err = t.check(ctx)
	}
	for err == nil {
		switch {
		case !st.queued:
			t.key, t.rev = "", 0 // our lease expired: queue again, at the back
			st, err = t.enqueue(ctx)
			continue
		case st.ahead == "":
			t.prior = st.prior
			return st.cur, st.rev, nil
		}
		t.waited = true
		t.b.hot.mark(t.b.key)
		st, err = t.waitTurn(ctx, st)
	}
	return nil, 0, err
}

// queueState is what t learns about its queue from one request or event.
type queueState struct {
	queued   bool   // t's entry exists
	ahead    string // the entry just ahead of t's, still waiting or holding its turn
	prior    string // if t's turn has come: a handed-over entry ahead of t's
	cur      []byte // if t's turn has come: the document
	rev      int64  // its ModRevision
	revision int64  // the revision of the state read
}

// at fills in st from the last entry ahead of t's (nil if none) and the
// document read with it.
func (st queueState) at(ahead *mvccpb.KeyValue, doc []*mvccpb.KeyValue) queueState {
	switch {
	case ahead == nil:
	case isHandedOver(ahead.Value):
		// Handed over by a turn's commit: every entry ahead of that one
		// was gone or handed over then, and none can be added there.
		st.prior = string(ahead.Key)
	default:
		st.ahead = string(ahead.Key)
		return st
	}
	st.cur, st.rev = value(doc)
	return st
}

// enqueue puts t's entry and, in the same transaction, reads the entry
// ahead of it, and the document.
//
// Entries are named by the [With] and one of a few slots, not afresh each
// time: etcd keeps deleted keys in its index until the history is
// compacted, and every read of the queue (and the "queue empty" guard of
// optimistic commits) would otherwise scan one more dead key per turn ever
// taken. A slot is taken only if its key is absent; a slot whose entry is
// still waiting is this With's own (an earlier attempt whose outcome was
// lost, or an entry whose release failed), and t takes its place; one whose
// entry was handed over and not yet deleted by its successor is skipped.
func (t *turn) enqueue(ctx context.Context) (queueState, error) {
	lease, err := t.b.turnLease.get(ctx, t.b.cli)
	if err != nil {
		return queueState{}, err
	}
	first := t.b.hot.slot(t.b.key)
	for i := range turnSlots + 1 {
		slot := (first + i) % turnSlots
		key := t.b.turns + t.b.tag + "." + strconv.Itoa(slot)
		if i == turnSlots { // all taken: a name used once
			key = t.b.turns + t.b.tag + "." + rand.Text()
		}
		// Reads in a transaction see its writes: the newest entry is
		// ours, the next one is the entry ahead.
		resp, err := t.b.cli.Txn(ctx).If(
			clientv3.Compare(clientv3.CreateRevision(key), "=", 0),
		).Then(
			clientv3.OpPut(key, "", clientv3.WithLease(lease)),
			clientv3.OpGet(t.b.turns, clientv3.WithPrefix(), clientv3.WithLimit(2),
				clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortDescend)),
			clientv3.OpGet(t.b.key),
		).Else(
			clientv3.OpGet(key),
		).Commit()
		if err != nil {
			t.b.turnLease.dropIfGone(lease, err)
			return queueState{}, err
		}
		if !resp.Succeeded {
			kvs := resp.Responses[0].GetResponseRange().Kvs
			if len(kvs) == 0 || isHandedOver(kvs[0].Value) {
				continue
			}
			t.key, t.rev, t.lease = key, kvs[0].CreateRevision, clientv3.LeaseID(kvs[0].Lease)
			return t.check(ctx)
		}
		t.key, t.lease = key, lease
		t.b.hot.setSlot(t.b.key, slot+1)
		entries := resp.Responses[1].GetResponseRange().Kvs
		t.rev = entries[0].CreateRevision
		var ahead *mvccpb.KeyValue
		if len(entries) > 1 {
			ahead = entries[1]
		}
		st := queueState{queued: true, revision: resp.Header.Revision}.at(ahead, resp.Responses[2].GetResponseRange().Kvs)
		if st.ahead == "" {
			t.b.hot.clear(t.b.key) // nobody waits ahead: try optimistically next time
		}
		return st, nil
	}
	return queueState{}, errors.New("turn: no free entry name")
}

// turnSlots is the number of entry names a [With] uses per key.
const turnSlots = 4

// check reads whether t's entry still exists, the last entry ahead of it,
// and the document, in one read-only transaction of the member's local
// state. A serializable read is enough, and spares the wait for a read
// index: if the member's state holds t's entry and none ahead of it that
// still waits, no entry ahead can wait again, and the last commit of a
// turn is in that state too. (Stale values cannot do harm either: the
// commit is guarded by the ModRevision.)
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
			clientv3.WithPrefix(), clientv3.WithMaxCreateRev(t.rev - 1)})...),
		clientv3.OpGet(t.b.key, opt...),
	).Commit()
	if err != nil {
		return queueState{}, err
	}
	st := queueState{queued: len(resp.Responses[0].GetResponseRange().Kvs) == 1, revision: resp.Header.Revision}
	if !st.queued {
		return st, nil
	}
	var ahead *mvccpb.KeyValue
	if kvs := resp.Responses[1].GetResponseRange().Kvs; len(kvs) > 0 {
		ahead = kvs[0]
	}
	return st.at(ahead, resp.Responses[2].GetResponseRange().Kvs), nil
}

// waitTurn waits until st.ahead, which was waiting at revision
// st.revision, is handed over or gone, and returns the new state.
//
// The watch starts at the server's current revision rather than after
// st.revision: etcd serves a watch that starts in the past from a
// background loop that catches up every 100ms, which would add up to that
// much to every hand-over. The gap is closed by one read instead, if the
// watch starts later than st.revision.
func (t *turn) waitTurn(ctx context.Context, st queueState) (queueState, error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the client's watcher for this wait
	events := t.b.cli.Watch(wctx, st.ahead, clientv3.WithCreatedNotify())
	for {
		select {
		case wr, ok := <-events:
			switch {
			case !ok && ctx.Err() != nil:
				return queueState{}, ctx.Err()
			case !ok:
				return queueState{}, errRecheck
			case wr.Err() != nil:
				// Not returned as is: a compacted revision (OutOfRange)
				// is no reason to give up, only to read again.
				return queueState{}, fmt.Errorf("%w: %v", errRecheck, wr.Err())
			case wr.Created && wr.Header.Revision > st.revision:
				now, err := t.check(ctx)
				if err != nil || now.ahead != st.ahead {
					return now, err
				}
			}
			for _, ev := range wr.Events {
				switch {
				case ev.Type == mvccpb.DELETE:
					return t.check(ctx)
				case len(ev.Kv.Value) > 0 && ev.Kv.Value[0] == handedOver:
					// The commit that handed the turn over wrote the
					// document in the same transaction.
					return queueState{queued: true, prior: st.ahead, cur: ev.Kv.Value[1:], rev: ev.Kv.ModRevision}, nil
				case isHandedOver(ev.Kv.Value):
					return t.check(ctx)
				}
			}
		case <-ctx.Done():
			return queueState{}, ctx.Err()
		}
	}
}

// handOver returns the operations that a commit of next adds to pass the
// turn on: delete the handed-over entry ahead, and delete t's entry or, if
// the batch had to wait, hand it over with the document.
func (t *turn) handOver(next []byte) []clientv3.Op {
	var ops []clientv3.Op
	if t.prior != "" {
		ops = append(ops, clientv3.OpDelete(t.prior))
	}
	switch {
	case !t.waited:
		ops = append(ops, clientv3.OpDelete(t.key))
	case next != nil && len(next) <= maxHandOver: // a deleted document is read
		ops = append(ops, clientv3.OpPut(t.key, string(handedOver)+string(next), clientv3.WithLease(t.lease)))
	default:
		ops = append(ops, clientv3.OpPut(t.key, string(handedBare), clientv3.WithLease(t.lease)))
	}
	return ops
}

// handedOff records that a commit that included handOver's operations
// succeeded: the entries are gone or handed over.
func (t *turn) handedOff() { t.key, t.rev, t.prior = "", 0, "" }

// release deletes t's entry (and the handed-over entry ahead that its
// commit would have deleted) if it may exist, so that the next writer need
// not wait for the lease to expire. It runs after the batch's callers have
// their results, possibly after they all left, so it has its own bound (and
// ends when the client is closed); if it fails, the lease is no longer
// renewed, and the entry goes with it.
func (t *turn) release() {
	if t.key == "" {
		return
	}
	ctx, cancel := context.WithTimeout(t.b.cli.Ctx(), releaseTimeout)
	defer cancel()
	ops := []clientv3.Op{clientv3.OpDelete(t.key)}
	if t.prior != "" {
		ops = append(ops, clientv3.OpDelete(t.prior))
	}
	if _, err := t.b.cli.Txn(ctx).Then(ops...).Commit(); err != nil {
		t.b.turnLease.drop(t.lease)
	}
	t.key, t.rev, t.prior = "", 0, ""
}

// releaseTimeout bounds the release of a turn.
const releaseTimeout = 5 * time.Second

// turnLease is the lease of a process's (one [With]'s) queue entries. It is
// kept alive only by the callers of Update while they wait (see keep), so
// it expires one TTL after the process stops waiting, dies, or is cut off,
// and the entries with it.
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

// keep renews the current lease if it was not renewed within the last
// period. Callers of Update call it while they wait, so a process keeps
// its turns (waiting or held) exactly while it has callers waiting, and
// loses them one TTL after it dies or is cut off. It gives up at once if
// another caller is renewing, and after one period otherwise.
func (l *turnLease) keep(ctx context.Context, cli *clientv3.Client) {
	c := l.cur.Load()
	if c == nil || time.Since(c.renewed) < c.ttl/3 {
		return
	}
	select {
	case l.sem <- struct{}{}:
	default:
		return
	}
	defer func() { <-l.sem }()
	if c = l.cur.Load(); c == nil || time.Since(c.renewed) < c.ttl/3 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, l.period())
	defer cancel()
	l.keepAlive(ctx, cli, c)
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

// hotKeys remembers, per key, whether a [With] recently waited for a turn,
// so that its next Update of the key queues at once instead of first losing
// an optimistic commit (a raft proposal) to the writers already queued (an
// Update that queues and finds nobody waiting ahead clears the mark), and
// which entry name it is to use next (see turn.enqueue).
type hotKeys struct {
	mu sync.Mutex
	m  map[string]hotKey
}

type hotKey struct {
	marked time.Time // zero: not hot
	slot   int       // the entry name to try first
}

// hotFor is how long a mark holds; maxHot bounds the map.
const (
	hotFor = 10 * time.Second
	maxHot = 1024
)

func (h *hotKeys) is(key string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return time.Since(h.m[key].marked) < hotFor
}

func (h *hotKeys) mark(key string) {
	h.update(key, func(k *hotKey) { k.marked = time.Now() })
}

func (h *hotKeys) clear(key string) {
	h.update(key, func(k *hotKey) { k.marked = time.Time{} })
}

func (h *hotKeys) slot(key string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.m[key].slot
}

func (h *hotKeys) setSlot(key string, slot int) {
	h.update(key, func(k *hotKey) { k.slot = slot })
}

func (h *hotKeys) update(key string, f func(*hotKey)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = make(map[string]hotKey)
	}
	if _, ok := h.m[key]; !ok && len(h.m) >= maxHot {
		for k, v := range h.m {
			if time.Since(v.marked) >= hotFor {
				delete(h.m, k)
			}
		}
		if len(h.m) >= maxHot {
			clear(h.m)
		}
	}
	k := h.m[key]
	f(&k)
	h.m[key] = k
}
