package etcdstore

import (
	"context"
	"errors"
	"slices"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// maxBatch caps how many Updates one transaction carries.
const maxBatch = 256

// Group commit. Updates of one key through the Backends of one With are
// queued; a driver goroutine takes up to maxBatch of them at a time, reads
// the document once, runs their applies in order (each sees its
// predecessors' result; a failing or panicking apply drops only its own
// change), and commits the result with one guarded transaction and one
// marker. On conflict the whole batch re-runs on the new value. Each caller
// waits for its batch — or leaves when its ctx ends (see depart).
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
	apply func([]byte) ([]byte, error)
	done  chan struct{} // closed when the result below is final
	batch *batch        // set (under queues.mu) when a driver takes the call

	// Guarded by batch.mu until done is closed.
	departed bool
	err      error
	panicked bool
	panicVal any
}

// result returns the call's outcome in the caller's goroutine, re-raising
// its apply's panic there.
func (c *call) result() error {
	if c.panicked {
		panic(c.panicVal)
	}
	return c.err
}

// A batch is the set of calls one driver commits together.
type batch struct {
	ctx    context.Context // ends when every member has departed; set before the batch is shared
	cancel context.CancelFunc

	mu      sync.Mutex
	members []*call          // grows only under queues.mu too (see absorb)
	live    int              // members not departed
	marker  string           // marker of the latest attempt whose applies ran
	lease   clientv3.LeaseID // its lease
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
	var bt *batch
	normal := false
	defer func() {
		if !normal {
			b.abandon(q, bt)
		}
	}()
	for {
		qs.mu.Lock()
		n := min(len(q.pending), maxBatch)
		if n == 0 {
			q.running = false
			qs.gc(b.key, q)
			qs.mu.Unlock()
			normal = true
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		bt = &batch{ctx: ctx, cancel: cancel, members: q.pending[:n:n], live: n}
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

var errGoexit = errors.New("batch abandoned: an update function called runtime.Goexit")

// abandon runs when an apply called runtime.Goexit on the driver's
// goroutine (t.FailNow inside fn, say), which cannot be recovered: the
// batch fails, nothing of it was sent, and a new driver takes over the rest
// of the queue, so that neither the batch's callers nor later Updates of the
// key wait forever.
func (b *Backend) abandon(q *queue, bt *batch) {
	if bt != nil {
		bt.fail(b.wrap("update", bt.ctx, errGoexit))
		bt.cancel()
	}
	qs := &b.queues
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if len(q.pending) == 0 {
		q.running = false
		qs.gc(b.key, q)
		return
	}
	qs.drivers.Add(1)
	go b.drive(q)
}

// depart is called when c's ctx has ended before its result was ready. A
// call still queued leaves with a plain ctx error. A call in a batch is
// excluded from the batch's later attempts; if an attempt that included it
// may be in flight, it leaves with an *OutcomeError naming that attempt's
// marker (Resolve settles it: the batch either committed that attempt or
// will never commit the call's change). A call whose function failed or
// panicked in the latest run has no change in flight: it leaves with that
// error or panic. (Earlier attempts were settled before the latest run.)
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
	c.departed = true
	if bt.live--; bt.live == 0 {
		bt.cancel()
	}
	marker, lease := bt.marker, bt.lease
	ownFailure := c.err != nil || c.panicked // in the run that marker commits
	bt.mu.Unlock()
	if ownFailure { // its change is in no attempt: nothing to resolve
		return c.result()
	}
	if marker == "" { // no attempt with this call's change was sent
		return b.wrap("update", ctx, ctx.Err())
	}
	return &OutcomeError{Key: b.key, Marker: marker, Err: ctx.Err(), lease: lease}
}

// run applies the live members' functions in order to cur and records each
// one's outcome; it returns the batch's new document. It holds bt.mu, so a
// member cannot depart while its function runs, and no function runs after
// its caller has departed.
func (bt *batch) run(cur []byte, marker string, lease clientv3.LeaseID) (next []byte, live int) {
	bt.mu.Lock()
	defer bt.mu.Unlock()
	next = cur
	for _, c := range bt.members {
		if c.departed {
			continue
		}
		live++
		out, err, panicked, pv := safeApply(c.apply, next)
		c.err, c.panicked, c.panicVal = err, panicked, pv
		if err == nil && !panicked {
			next = out
		}
	}
	bt.marker, bt.lease = marker, lease
	return next, live
}

// safeApply calls apply, turning a panic into a value to re-raise in the
// caller's goroutine.
func safeApply(apply func([]byte) ([]byte, error), cur []byte) (out []byte, err error, panicked bool, pv any) {
	defer func() {
		if r := recover(); r != nil {
			panicked, pv = true, r
		}
	}()
	out, err = apply(cur)
	return out, err, false, nil
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
			if c.err == nil {
				c.err = err
			}
			close(c.done)
		}
	}
}
