package etcdstore

import (
	"context"
	"slices"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Group commit. Updates of one key through the Backends of one With are
// queued; a driver goroutine takes up to maxBatch of them at a time, reads
// the document once, runs their applies in order (each sees its
// predecessors' result; a failing or panicking apply drops only its own
// change), and commits the result with one guarded transaction and one
// marker. On conflict the whole batch re-runs on the new value. Each caller
// waits for its batch — or leaves when its ctx ends (see depart) — and runs
// its apply on its own goroutine each time the driver gives it the document
// (handoff), so that a panic or runtime.Goexit in it stays with
// its caller.
//
// The driver exists while the key has pending Updates; it is not owned by
// any one caller so that a caller whose ctx ends can leave without failing
// the others. Its RPCs run under a ctx that ends when every member of the
// batch has left, so it never outlives all of its callers for long.

// queues holds one queue per key with Updates in flight.
type queues struct {
	mu      sync.Mutex
	m       map[string]*queue
	drivers sync.WaitGroup // for tests: running drivers
}

type queue struct {
	pending []*call
	running bool // a driver is active
	refs    int  // callers in Update
}

// A call is one Update waiting in a queue or running in a batch.
type call struct {
	ctx   context.Context
	fn    handoff       // runs apply on the caller's goroutine; holds its latest run's outcome
	done  chan struct{} // closed when the result below is final
	batch *batch        // set (under queues.mu) when a driver takes the call

	// Guarded by batch.mu until done is closed.
	departed bool
	declined bool             // departed instead of running fn on the document given
	err      error            // the batch's error, if fn's latest run succeeded
	marker   string           // marker of the attempt whose run last gave fn the document
	lease    clientv3.LeaseID // its lease
}

// result returns the call's outcome in the caller's goroutine, re-raising
// its apply's panic there.
func (c *call) result() error {
	c.fn.raise()
	if c.fn.err != nil {
		return c.fn.err
	}
	return c.err
}

// A batch is the set of calls one driver commits together.
type batch struct {
	ctx    context.Context // ends when every member has departed; set before the batch is shared
	cancel context.CancelFunc

	mu      sync.Mutex
	members []*call // grows only under queues.mu too (see absorb)
	live    int     // members not departed
}

// enqueue adds c to key's queue and starts a driver if none runs.
func (b *Backend) enqueue(c *call) {
	qs := &b.queues
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if qs.m == nil {
		qs.m = make(map[string]*queue)
	}
	q := qs.m[b.key]
	if q == nil {
		q = &queue{}
		qs.m[b.key] = q
	}
	q.refs++
	q.pending = append(q.pending, c)
	if !q.running {
		q.running = true
		qs.drivers.Add(1)
		go b.drive(q)
	}
}

// leave drops the caller's reference to key's queue.
func (b *Backend) leave() {
	qs := &b.queues
	qs.mu.Lock()
	defer qs.mu.Unlock()
	q := qs.m[b.key]
	q.refs--
	qs.gc(b.key, q)
}

// gc deletes an idle queue, so the map does not grow with every key used.
func (qs *queues) gc(key string, q *queue) {
	if q.refs == 0 && !q.running && len(q.pending) == 0 {
		delete(qs.m, key)
	}
}

func (qs *queues) len() int {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	return len(qs.m)
}

// drive commits batches until the queue is empty.
func (b *Backend) drive(q *queue) {
	qs := &b.queues
	defer qs.drivers.Done()
	for {
		qs.mu.Lock()
		n := min(len(q.pending), maxBatch)
		if n == 0 {
			q.running = false
			qs.gc(b.key, q)
			qs.mu.Unlock()
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		bt := &batch{ctx: ctx, cancel: cancel, members: q.pending[:n:n], live: n}
		q.pending = slices.Clone(q.pending[n:])
		for _, c := range bt.members {
			c.batch = bt
		}
		qs.mu.Unlock()
		b.commit(bt)
		cancel()
	}
}

// absorb moves the calls queued behind bt into it (up to maxBatch in all):
// a batch that has waited for its turn on a contended key commits what
// arrived meanwhile in the same turn, instead of leaving it for the next
// turn of this process, a whole round of the queue later. A batch whose
// members have all left takes no more.
func (b *Backend) absorb(bt *batch) {
	qs := &b.queues
	qs.mu.Lock()
	defer qs.mu.Unlock()
	bt.mu.Lock()
	defer bt.mu.Unlock()
	q := qs.m[b.key]
	n := min(len(q.pending), maxBatch-len(bt.members))
	if bt.live == 0 || n <= 0 {
		return
	}
	for _, c := range q.pending[:n] {
		c.batch = bt
	}
	bt.members = append(bt.members, q.pending[:n]...)
	bt.live += n
	q.pending = slices.Clone(q.pending[n:])
}

// depart is called when c's ctx has ended before its result was ready. A
// call still queued leaves with a plain ctx error. A call in a batch is
// excluded from the batch's later attempts; if an attempt that included it
// may be in flight, it leaves with an *OutcomeError naming that attempt's
// marker ([Resolve] settles it: the batch either committed that attempt or
// will never commit the call's change). A call whose function failed or
// panicked in its latest run has no change in flight: it leaves with that
// error or panic. (Earlier attempts were settled before the latest run.) A
// call given the document that leaves instead of running its function has
// no change in this run either: it leaves with a plain ctx error.
func (b *Backend) depart(c *call) error {
	ctx := c.ctx
	b.queues.mu.Lock()
	bt := c.batch
	if bt == nil {
		q := b.queues.m[b.key]
		q.pending = slices.DeleteFunc(q.pending, func(p *call) bool { return p == c })
		b.queues.mu.Unlock()
		return b.wrap("update", ctx, ctx.Err())
	}
	b.queues.mu.Unlock()

	bt.mu.Lock()
	select {
	case <-c.done: // finished meanwhile
		bt.mu.Unlock()
		return c.result()
	default:
	}
	bt.leave(c)
	skipped := c.fn.skip()
	c.declined = skipped
	marker, lease := c.marker, c.lease
	bt.mu.Unlock()
	if !skipped && c.fn.failed() { // its change is in no attempt: nothing to resolve
		return c.result()
	}
	if skipped || marker == "" { // no attempt with this call's change was sent
		return b.wrap("update", ctx, ctx.Err())
	}
	return &OutcomeError{Key: b.key, Marker: marker, Err: ctx.Err(), lease: lease}
}

// leave marks c departed. bt.mu is held.
func (bt *batch) leave(c *call) {
	c.departed = true
	if bt.live--; bt.live == 0 {
		bt.cancel()
	}
}

// run gives each live member in order the document as its predecessors
// left it, waits for the member's caller to run its function on it, and
// returns the batch's new document and how many functions ran. No function
// runs after its caller has departed: a caller given the document that
// departs instead declines it (see depart). A member whose function called
// [runtime.Goexit], which ended its caller's goroutine, departs with it.
//
// While a caller runs its function it cannot renew the turn lease, as
// callers do while they wait in Update; run renews it meanwhile, so that a
// batch holding its turn keeps it while a function runs.
func (bt *batch) run(b *Backend, cur []byte, marker string, lease clientv3.LeaseID) (next []byte, live int) {
	renew := time.NewTicker(b.turnLease.period())
	defer renew.Stop()
	next = cur
	bt.mu.Lock()
	members := bt.members // grows only in absorb, on this goroutine
	bt.mu.Unlock()
	for _, c := range members {
		bt.mu.Lock()
		if c.departed {
			bt.mu.Unlock()
			continue
		}
		c.marker, c.lease = marker, lease
		c.fn.give(next)
		bt.mu.Unlock()
		for ran := false; !ran; {
			select {
			case <-c.fn.ran():
				ran = true
			case <-renew.C:
				b.turnLease.keep(bt.ctx, b.cli)
			}
		}

		bt.mu.Lock()
		switch {
		case c.departed && c.declined:
		case c.fn.exited:
			bt.leave(c)
		default:
			// A caller that departed after its function ran was told this
			// attempt's marker (see depart): its change stays in the attempt,
			// so that Resolve's answer matches what is stored.
			live++
			if !c.fn.failed() {
				next = c.fn.out
			}
		}
		bt.mu.Unlock()
	}
	return next, live
}

// finish publishes the outcome of the last run to every live member.
func (bt *batch) finish() {
	bt.mu.Lock()
	defer bt.mu.Unlock()
	for _, c := range bt.members {
		if !c.departed {
			close(c.done)
		}
	}
}

// fail gives every live member err (their changes were not committed, or
// not known to be). A member whose function failed or panicked keeps its
// own error or panic: its change was in no commit.
func (bt *batch) fail(err error) {
	bt.mu.Lock()
	defer bt.mu.Unlock()
	for _, c := range bt.members {
		if !c.departed {
			c.err = err
			close(c.done)
		}
	}
}
