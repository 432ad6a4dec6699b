package filestore

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status/internal/journal"
)

// maxBatch caps how many queued calls one batch applies in a single
// read-modify-write (the batches of up to 256 of the status package doc's
// Group commit), so that one durable write never waits on an unbounded
// amount of work.
const maxBatch = 256

// Update queues apply on the document's entry and waits for it to run in
// a batch led by this or another caller's goroutine.
func (d *Doc) Update(ctx context.Context, apply func(cur []byte) ([]byte, error)) error {
	return d.update(ctx, "mutate", apply)
}

// update runs apply as one request of a batch; op names the call in errors.
// An apply that returns nil for an existing document removes it (Remove).
func (d *Doc) update(ctx context.Context, op string, apply func(cur []byte) ([]byte, error)) error {
	if err := ctx.Err(); err != nil {
		return Error(op, d.path, err)
	}
	key, err := docPath(d.path)
	if err != nil {
		return Error(op, d.path, err)
	}
	e := acquire(key)
	defer release(e)

	r := newRequest(d, e, op, ctx)
	r.apply = apply
	defer e.observe(r)()
	if e.enqueue(r) || e.wait(r) {
		e.lead(r)
	}
	if r.panicked {
		panic(r.panicVal)
	}
	r.report()
	return r.err
}

// The registry maps each document's absolute path (see docPath) to the
// entry that serialises its calls inside this process. Entries are
// reference-counted by the calls in flight and removed when the last one
// returns.
var registry struct {
	mu sync.Mutex
	m  map[string]*entry
}

func acquire(key string) *entry {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	e := registry.m[key]
	if e == nil {
		if registry.m == nil {
			registry.m = make(map[string]*entry)
		}
		e = &entry{key: key}
		registry.m[key] = e
	}
	e.refs++
	return e
}

func release(e *entry) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	e.refs--
	if e.refs == 0 {
		delete(registry.m, e.key)
	}
}

// An entry is the in-process side of one document: a FIFO of pending
// requests and at most one holder of the document's turn. The holder is
// always the request at the head of the queue when it is chosen; it takes
// the flock, applies a batch from the head of the queue, writes once, and
// hands the turn to the next head. Invariant: the queue is non-empty only
// while leading is true.
type entry struct {
	key  string
	refs int // guarded by registry.mu

	mu       sync.Mutex
	queue    []*request
	leading  bool
	waking   int           // finished requests whose waiting owners have not yet run (see gather)
	gathered chan struct{} // closed when waking reaches 0, for the leader in gather
	observed atomic.Int32  // requests in flight with an observer (observe.go)
}

type reqState int

const (
	queued   reqState = iota // in the queue, waiting
	chosen                   // head of the queue, told to lead
	taken                    // removed from the queue into a batch
	applying                 // given the document to run its apply on, in its own goroutine
	finished                 // outcome recorded
)

// A request is one call's place in its document's queue. The request at
// the head holds the document's turn in this process: it takes the calls
// queued behind it that may share its write into its batch, applies them
// after its own change, and finishes the batch with one write. A
// single-document call that leads holds one turn; a transaction holds one
// on each of its documents. Every call's function runs on its own caller's
// goroutine.
type request struct {
	d     *Doc
	e     *entry
	op    string // "mutate" or "remove", for errors; "" for a transaction's turn
	txOp  string // a transaction's turn: "mutate all" or "load all", for errors
	ctx   context.Context
	apply func(cur []byte) ([]byte, error)
	tx    *txJoin       // the first turn of a transaction that another may join
	wake  chan struct{} // capacity 1: state changed to chosen, applying or finished
	fn    handoff       // runs apply on the owner's goroutine for the leader
	batch []*request    // while it holds its turn: itself and the calls taken behind it

	state   reqState // guarded by entry.mu
	waiting bool     // its owner is in wait (guarded by entry.mu)
	woken   bool     // counted in entry.waking (guarded by entry.mu)

	// Outcome, written by the leader before state becomes finished.
	err      error
	panicked bool
	panicVal any
	ok       bool // apply succeeded; its change is in the batch's write

	tr *trace // non-nil when an observer follows the call (observe.go)
}

// newRequest makes a request on e.
func newRequest(d *Doc, e *entry, op string, ctx context.Context) *request {
	r := &request{d: d, e: e, op: op, ctx: ctx, wake: make(chan struct{}, 1)}
	r.fn.init()
	return r
}

func (r *request) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *request) ctxErr() error {
	return Error(r.opName(), r.d.path, r.ctx.Err())
}

func (r *request) opName() string {
	if r.op == "" {
		return cmp.Or(r.txOp, "mutate all")
	}
	return r.op
}

// enqueue appends r and reports whether r must lead (nobody else does).
func (e *entry) enqueue(r *request) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.queue = append(e.queue, r)
	if e.leading {
		r.waiting = true // the caller waits next
		return false
	}
	e.leading = true
	r.state = chosen
	return true
}

// wait blocks until r is finished (false) or chosen to lead (true). If ctx
// ends while r is still queued, r leaves the queue with ctx's error; once r
// is taken into a batch it waits for that batch's write. When the leader
// asks, it runs its own apply here, in its caller's goroutine.
func (e *entry) wait(r *request) bool {
	done := r.ctx.Done()
	for {
		select {
		case <-r.wake:
		case <-done:
			done = nil
			e.mu.Lock()
			if r.state == queued {
				e.remove(r)
				r.state = finished
				r.err = r.ctxErr()
				e.leaveWait(r)
				e.mu.Unlock()
				return false
			}
			e.mu.Unlock()
			continue
		}
		e.mu.Lock()
		st := r.state
		if st == chosen || st == finished {
			e.leaveWait(r)
		}
		e.mu.Unlock()
		switch st {
		case chosen:
			return true
		case applying:
			r.fn.apply(r.tracked, <-r.fn.readyDoc())
		case finished:
			return false
		}
	}
}

// leaveWait records that r's owner has run since r was finished or chosen
// and leaves wait. e.mu is held.
func (e *entry) leaveWait(r *request) {
	r.waiting = false
	if !r.woken {
		return
	}
	r.woken = false
	e.waking--
	if e.waking == 0 && e.gathered != nil {
		close(e.gathered)
		e.gathered = nil
	}
}

func (e *entry) remove(r *request) {
	if i := slices.Index(e.queue, r); i >= 0 {
		e.queue = slices.Delete(e.queue, i, i+1)
	}
}

// handOff passes the turn to the head of the queue, if any. e.mu is held.
func (e *entry) handOff() {
	if len(e.queue) == 0 {
		e.leading = false
		return
	}
	h := e.queue[0]
	h.state = chosen
	h.signal()
}

// lead runs one batch with r (the head of the queue) as leader.
func (e *entry) lead(r *request) {
	e.gather(r.ctx)
	c := e.clock()
	unlock, err := lockFile(r.ctx, e.key+LockSuffix, r.d.perm)
	if err != nil {
		// Our own wait ended (ctx) or the lock file is unusable: leave the
		// queue and let the next caller lead with its own context.
		if r.ctx.Err() != nil {
			err = r.ctxErr()
		} else {
			err = Error(r.op, r.d.path, err)
		}
		r.giveBack(err)
		return
	}
	r.takeBatch(nil, since(c))
	completed := false
	defer func() {
		if !completed {
			// The leader's own apply called runtime.Goexit (e.g.
			// t.FailNow inside fn), ending this goroutine mid-batch:
			// nothing was written; fail the whole batch and pass the lead.
			unlock()
			r.finish(true)
		}
	}()
	e.runBatch(r)
	unlock()
	completed = true
	r.finish(false)
}

// gather lets callers that are about to queue join the next batch: the
// callers the previous batch woke usually call again at once; without a
// pause they miss this batch and cost a write of their own. The leader
// waits until each of them has run (see publish): a woken owner that calls
// again queues before it blocks, so they all are in the queue then, and the
// last one to run makes the leader runnable on its own processor. A leader
// alone on its path (nobody woken) does not wait. It runs before the flock
// is taken, so the lock stays free for other processes meanwhile. It only
// changes how calls are grouped, never their order or outcome.
//
// The wait is on the woken goroutines, not a yield: runtime.Gosched would
// queue the leader behind every runnable goroutine of the process, and
// behind goroutines that never block (a reader polling the document in a
// loop) that is a time slice of the scheduler, milliseconds, per batch.
func (e *entry) gather(ctx context.Context) {
	e.mu.Lock()
	if e.waking == 0 {
		e.mu.Unlock()
		return
	}
	ch := make(chan struct{})
	e.gathered = ch
	e.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
		e.mu.Lock()
		if e.gathered == ch {
			e.gathered = nil
		}
		e.mu.Unlock()
	}
}

var errGoexit = errors.New("batch abandoned: a mutate function called runtime.Goexit")

// runBatch reads the document once, applies each request of the leader's
// batch in order, and writes once if the bytes changed. The flock is held.
func (e *entry) runBatch(leader *request) {
	orig, pending, err := leader.read()
	if err != nil {
		for _, q := range leader.batch {
			q.err = err
		}
		return
	}
	cur := e.applyAll(leader, leader.batch, orig)
	if unchanged(cur, orig) {
		return
	}
	write := func() error { return writeFile(e.key, cur, leader.d.perm) }
	if cur == nil {
		write = func() error { return removeDoc(leader.ctx, e.key, pending) }
	}
	c := e.clock()
	err = write()
	leader.traceWrite(since(c))
	if err != nil {
		leader.failWrite(err)
	}
}

// read completes a transaction that a crashed process left on r's
// document (see recoverDoc) and reads it. The flock is held. pending lists
// the transaction's other documents that still wait for their lockers.
func (r *request) read() (data []byte, pending []string, err error) {
	if pending, err = recoverDoc(r.ctx, r.e.key, r.d.maxSize); err != nil {
		return nil, nil, Error(r.opName(), r.d.path, err)
	}
	data, err = Read(r.d.path, r.e.key, r.d.maxSize)
	return data, pending, err
}

// recoverDoc completes or undoes the transaction that a process which died
// during its commit left on the document at key, whose lock the caller
// holds (see [journal.Recover]). It does nothing (one lstat) when there is
// none. pending lists the transaction's other documents still waiting for
// their lockers.
func recoverDoc(ctx context.Context, key string, maxSize int64) (pending []string, err error) {
	if s := TestSeams(); s != nil && s.Recover != nil {
		return s.Recover(ctx, key, maxSize)
	}
	return journal.Recover(ctx, key, maxSize)
}

// writeFile replaces the document at path durably: fs.WriteAtomicNoFollow
// (a document is never a link, see Read), or the tests' WriteFile.
func writeFile(path string, data []byte, perm os.FileMode) error {
	if s := TestSeams(); s != nil && s.WriteFile != nil {
		return s.WriteFile(path, data, perm)
	}
	return fs.WriteAtomicNoFollow(path, data, perm)
}

// applyAll applies each request of batch in order, starting from cur, and
// returns the result.
func (e *entry) applyAll(leader *request, batch []*request, cur []byte) []byte {
	for _, q := range batch {
		cur = e.applyOne(leader, q, cur)
	}
	return cur
}

// applyOne applies q's apply on cur in q's batch, and returns the result
// (cur itself if q fails).
func (e *entry) applyOne(leader, q *request, cur []byte) []byte {
	if q.ctx.Err() != nil {
		q.err = q.ctxErr()
		return cur
	}
	out, err := e.apply(leader, q, cur)
	if q.panicked || q.fn.exited {
		return cur
	}
	if err != nil {
		q.err = err
		return cur
	}
	q.ok = true
	return out
}

// unchanged reports whether a batch leaves the document as it was.
func unchanged(cur, orig []byte) bool {
	return bytes.Equal(cur, orig) && (cur == nil) == (orig == nil)
}

// apply runs q's apply on cur: the leader's inline, any other's in its
// owner's goroutine (so that fn never runs on another caller's goroutine,
// and a runtime.Goexit in fn ends only its own caller).
func (e *entry) apply(leader, q *request, cur []byte) ([]byte, error) {
	if q == leader {
		return q.run(cur)
	}
	e.mu.Lock()
	q.state = applying
	q.fn.give(cur)
	q.signal()
	e.mu.Unlock()
	q.fn.result()
	return q.outcome()
}

// run calls apply on the current goroutine, turning a panic into a
// recorded value that the owner's goroutine re-raises.
func (r *request) run(cur []byte) ([]byte, error) {
	r.fn.run(r.tracked, cur)
	return r.outcome()
}

// tracked is apply as the batch runs it, observed.
func (r *request) tracked(cur []byte) ([]byte, error) {
	r.started()
	return r.apply(cur)
}

// outcome records a panic of apply's last run, and returns its result.
func (r *request) outcome() ([]byte, error) {
	if r.fn.panicked {
		r.panicked, r.panicVal = true, r.fn.panicVal
	}
	return r.fn.out, r.fn.err
}

// giveBack ends a held turn before any batch was taken: the next caller
// in the queue leads, with err as this turn's outcome.
func (r *request) giveBack(err error) {
	e := r.e
	e.mu.Lock()
	defer e.mu.Unlock()
	e.remove(r)
	r.state = finished
	r.err = err
	e.handOff()
}

// takeBatch takes the calls queued behind r's turn that may share its
// write: single-document changes with the turn's options, and the
// transactions for which withTx holds. lock is how long the locks took,
// for observers. A removal is a batch of its own (see removeDoc).
func (r *request) takeBatch(withTx func(*txJoin) bool, lock time.Duration) {
	r.batch = r.e.take(func(q *request) bool {
		if q.tx != nil {
			return withTx != nil && withTx(q.tx)
		}
		return q.op == "mutate" && r.op != "remove" && sameOptions(q.d, r.d)
	})
	joined(r, r.batch, lock)
}

// take removes the batch that the head of the queue leads: the head and
// the requests behind it for which joins holds, at most maxBatch.
func (e *entry) take(joins func(*request) bool) []*request {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 1
	for n < min(len(e.queue), maxBatch) && joins(e.queue[n]) {
		n++
	}
	batch := slices.Clone(e.queue[:n])
	e.queue = slices.Delete(e.queue, 0, n)
	for _, q := range batch {
		q.state = taken
	}
	return batch
}

// failWrite records a failed write as the outcome of each call of r's
// batch whose change it held.
func (r *request) failWrite(err error) {
	for _, q := range r.batch {
		if q.ok {
			q.err = Error(q.opName(), q.d.path, err)
		}
	}
}

// finish publishes the outcomes of r's batch and hands the document to the
// next caller. abandoned: the holder's goroutine is ending
// (runtime.Goexit in its function) and nothing was written.
func (r *request) finish(abandoned bool) {
	if abandoned {
		for _, q := range r.batch {
			if q.err == nil && !q.panicked {
				q.err = Error(q.opName(), q.d.path, errGoexit)
			}
		}
	}
	r.e.publish(r.batch)
}

// publish records a batch as finished and hands the turn on. It counts
// the owners it wakes (those waiting, and alive: an apply that called
// runtime.Goexit ended its owner) for the next leader's gather.
func (e *entry) publish(batch []*request) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, q := range batch {
		q.state = finished
		if q.waiting && !q.fn.exited && !q.woken {
			q.woken = true
			e.waking++
		}
		q.signal()
	}
	e.handOff()
}
