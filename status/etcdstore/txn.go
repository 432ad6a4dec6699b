package etcdstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentstate/core/status"
)

var _ status.TxBackend = (*Backend)(nil)

// UpdateAll changes several documents in one etcd transaction, for
// [status.MutateAll] and [status.LoadAll] (see [status.TxBackend]): docs are
// Backends on the receiver's client.
//
// It reads every document and its ModRevision at one revision, calls apply,
// and commits every changed document with one transaction guarded by each
// document's ModRevision (and by "nobody waits for a turn" on each), with
// a commit marker for exactly-once outcomes, as Update does for one. A read
// whose apply changes nothing commits nothing: LoadAll is one linearizable
// read. When the commit loses to another writer, or writers already queue
// on a document, the transaction takes a turn on every document, in the
// order of their keys (so that transactions over overlapping sets never
// wait for each other in a cycle), and commits when all have come, handing
// them on in the same etcd transaction. apply then runs again on the new
// documents: it may run more than once.
//
// The transaction does not join the in-process batches of its documents'
// Updates; in etcd it takes its turns in the same queues as they do.
func (b *Backend) UpdateAll(ctx context.Context, docs []status.Backend, apply func(cur [][]byte) ([][]byte, error)) error {
	if ctx == nil || apply == nil {
		return fmt.Errorf("etcdstore: update all %s: %w: context or apply function", b.id(), errNilArg)
	}
	parts, err := b.txParts(docs)
	if err != nil {
		return err
	}
	for _, p := range parts {
		if err := p.check("update all", ctx); err != nil {
			return err
		}
	}
	t := &txn{b: b, parts: parts, apply: apply}
	defer t.releaseTurns()
	stop := t.keepLeases(ctx)
	defer stop()
	return t.run(ctx)
}

// txParts checks the documents of a transaction: Backends of this
// package, on the receiver's client, each once; in the order of their keys.
func (b *Backend) txParts(docs []status.Backend) ([]*Backend, error) {
	names := make([]string, len(docs))
	for i, d := range docs {
		names[i] = d.Name()
	}
	fail := func(format string, args ...any) ([]*Backend, error) {
		return nil, fmt.Errorf("etcdstore: update all %s: %w: %s", strings.Join(names, ", "), os.ErrInvalid, fmt.Sprintf(format, args...))
	}
	parts := make([]*Backend, len(docs))
	self := false
	for i, d := range docs {
		p, ok := d.(*Backend)
		if !ok || p == nil {
			return fail("%s is not an etcd document (one transaction cannot mix backends)", d.Name())
		}
		if p.err != nil {
			return nil, fmt.Errorf("etcdstore: update all %s: %w", p.path, p.err)
		}
		if p.cli != b.cli {
			return fail("%s is on another etcd client", p.path)
		}
		self = self || p == b
		parts[i] = p
	}
	if !self {
		return fail("the receiver is not among the documents")
	}
	order := slices.Clone(parts)
	slices.SortFunc(order, func(x, y *Backend) int { return strings.Compare(x.key, y.key) })
	for i := 1; i < len(order); i++ {
		if order[i].key == order[i-1].key {
			return fail("%s is in the transaction twice", order[i].path)
		}
	}
	return parts, nil
}

// A txn is one UpdateAll in progress.
type txn struct {
	b     *Backend
	parts []*Backend // as the caller listed them
	apply func([][]byte) ([][]byte, error)
	turns []*turn // once contended: one per part, taken in key order
}

func (t *txn) names() string {
	keys := make([]string, len(t.parts))
	for i, p := range t.parts {
		keys[i] = p.key
	}
	return strings.Join(keys, ", ")
}

func (t *txn) wrap(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil && !errors.Is(err, ctx.Err()):
		err = fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
	case t.b.closed():
		err = fmt.Errorf("%w: %v", ErrClosed, err)
	}
	return fmt.Errorf("etcdstore: update all %s: %w", t.names(), err)
}

// run reads, applies and commits until the commit succeeds or cannot.
func (t *txn) run(ctx context.Context) error {
	id := rand.Text()
	bo := newBackoff(t.b.cfg)
	for attempt := 0; ; attempt++ {
		if t.turns == nil && !t.b.cfg.noTurns && slices.ContainsFunc(t.parts, func(p *Backend) bool { return p.hot.is(p.key) }) {
			if err := t.takeTurns(ctx); err != nil {
				return t.wrap(ctx, err)
			}
		}
		cur, revs, queued, err := t.read(ctx)
		if err != nil {
			if t.retry(ctx, &bo, err) {
				continue
			}
			return t.wrap(ctx, err)
		}
		next, err := t.apply(slices.Clone(cur))
		if err != nil {
			return err
		}
		if len(next) != len(cur) {
			return t.wrap(ctx, fmt.Errorf("apply returned %d documents for %d", len(next), len(cur)))
		}
		changed := false
		for i := range cur {
			if next[i] == nil && cur[i] != nil {
				return t.wrap(ctx, errors.New("a transaction cannot remove a document"))
			}
			changed = changed || !bytes.Equal(next[i], cur[i]) || (next[i] == nil) != (cur[i] == nil)
		}
		if !changed {
			return nil // a read at one revision needs no turn
		}
		if queued {
			if err := t.takeTurns(ctx); err != nil {
				return t.wrap(ctx, err)
			}
			continue // read again once our turns have come
		}
		lease, err := t.b.lease.get(ctx, t.b.cli)
		if err != nil {
			if t.retry(ctx, &bo, err) {
				continue
			}
			return t.wrap(ctx, err)
		}
		marker := t.b.cfg.markerPrefix() + id + "/" + strconv.Itoa(attempt)
		resp, err := t.commit(ctx, cur, next, revs, marker, lease)
		switch {
		case err == nil && resp.Succeeded:
			t.handedOff()
			return nil
		case err == nil && t.turns == nil && !t.b.cfg.noTurns:
			// Contended: queue on every document, at once.
			for _, p := range t.parts {
				p.hot.mark(p.key)
			}
			continue
		case err == nil: // conflict while holding the turns: a stale read, or a writer that ignores turns
			if werr := bo.wait(ctx, t.b.cli); werr != nil {
				return t.wrap(ctx, werr)
			}
			continue
		case isLeaseNotFound(err):
			// Rejected before anything applied: the marker's lease, or a
			// turn's (a long outage), is gone. Take a fresh marker lease,
			// and the turns again from the start, in order.
			t.b.lease.drop(lease)
			if t.turns != nil {
				t.releaseTurns()
				t.turns = nil
			}
			if werr := bo.wait(ctx, t.b.cli); werr != nil {
				return t.wrap(ctx, werr)
			}
			continue
		case terminal(err):
			return t.wrap(ctx, err)
		}
		committed, ferr := fence(ctx, t.b.cli, marker, lease, &bo)
		switch {
		case ferr != nil:
			return &OutcomeError{Key: t.names(), Marker: marker, Err: ferr, lease: lease}
		case committed:
			t.handedOff()
			return nil
		}
		if !t.retry(ctx, &bo, err) {
			return t.wrap(ctx, err)
		}
	}
}

// retry reports whether a failed request is worth another attempt, after
// the backoff.
func (t *txn) retry(ctx context.Context, bo *backoff, err error) bool {
	if ctx.Err() != nil || t.b.closed() || terminal(err) {
		return false
	}
	return bo.wait(ctx, t.b.cli) == nil
}

// read returns every document and its ModRevision, read at one revision
// (a linearizable read-only transaction), and, while the transaction holds
// no turns, whether writers queue for a turn on any of them.
func (t *txn) read(ctx context.Context) (cur [][]byte, revs []int64, queued bool, err error) {
	var ops []clientv3.Op
	for _, p := range t.parts {
		ops = append(ops, clientv3.OpGet(p.key))
		if t.turns == nil && !t.b.cfg.noTurns {
			ops = append(ops, clientv3.OpGet(p.turns, clientv3.WithPrefix(), clientv3.WithCountOnly()))
		}
	}
	resp, err := t.b.cli.Txn(ctx).Then(ops...).Commit()
	if err != nil {
		return nil, nil, false, err
	}
	step := len(ops) / len(t.parts)
	for i := range t.parts {
		v, rev := value(resp.Responses[i*step].GetResponseRange().Kvs)
		cur, revs = append(cur, v), append(revs, rev)
		if step == 2 && resp.Responses[i*step+1].GetResponseRange().Count > 0 {
			queued = true
		}
	}
	return cur, revs, queued, nil
}

// commit sends the transaction: every document's ModRevision as read, the
// marker absent, and the queues empty (or the turns held); then the
// changed documents, the marker and the hand-overs.
func (t *txn) commit(ctx context.Context, cur, next [][]byte, revs []int64, marker string, lease clientv3.LeaseID) (*clientv3.TxnResponse, error) {
	cmps := []clientv3.Cmp{clientv3.Compare(clientv3.Version(marker), "=", 0)}
	ops := []clientv3.Op{clientv3.OpPut(marker, markCommitted, clientv3.WithLease(lease))}
	for i, p := range t.parts {
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(p.key), "=", revs[i]))
		if !bytes.Equal(next[i], cur[i]) {
			ops = append(ops, clientv3.OpPut(p.key, string(next[i])))
		}
		switch {
		case t.turns != nil:
			ops = append(ops, t.turns[i].handOver(next[i])...)
		case !t.b.cfg.noTurns:
			cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(p.turns), "=", 0).WithPrefix())
		}
	}
	return t.b.cli.Txn(ctx).If(cmps...).Then(ops...).Commit()
}

// takeTurns queues on every document in the order of their keys and
// returns when every turn has come.
func (t *txn) takeTurns(ctx context.Context) error {
	t.turns = make([]*turn, len(t.parts))
	order := make([]int, len(t.parts))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int { return strings.Compare(t.parts[x].key, t.parts[y].key) })
	for _, i := range order {
		t.turns[i] = &turn{b: t.parts[i]}
		if _, _, err := t.turns[i].wait(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (t *txn) handedOff() {
	for _, tn := range t.turns {
		tn.handedOff()
	}
}

func (t *txn) releaseTurns() {
	for _, tn := range t.turns {
		if tn != nil {
			tn.release()
		}
	}
}

// keepLeases renews the turn leases of the documents' Withs while the
// transaction runs, as Update's callers renew theirs while they wait, and
// returns the function that stops it.
func (t *txn) keepLeases(ctx context.Context) (stop func()) {
	var leases []*turnLease
	for _, p := range t.parts {
		if !slices.Contains(leases, p.turnLease) {
			leases = append(leases, p.turnLease)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(leases[0].period())
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				for _, l := range leases {
					l.keep(ctx, t.b.cli)
				}
			}
		}
	})
	return func() { cancel(); wg.Wait() }
}
