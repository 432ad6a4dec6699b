package status

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status/internal/groupcommit"
)

// maxBatch caps how many queued mutations one leader applies in a single
// read-modify-write.
const maxBatch = groupcommit.Max

// writeFile is fs.WriteAtomicNoFollow (a document is never a link, see
// readDoc). It is a variable, not a direct call, because tests must count
// the writes of a batch and make one fail, which the file system cannot be
// made to do on demand; they swap it with setWriteFile (export_test.go).
var writeFile = fs.WriteAtomicNoFollow

// LockSuffix is appended to a document's path to name its lock file.
const LockSuffix = ".lock"

// fileBackend keeps the document in a file replaced atomically by
// fs.WriteAtomic, under an exclusive flock on the sidecar <path>.lock.
type fileBackend struct {
	path    string      // as given by the caller, for errors
	perm    os.FileMode // for a document file we create
	maxSize int64       // largest document read; <= 0: no limit
}

func newFileBackend(path string, perm os.FileMode, maxSize int64) *fileBackend {
	return &fileBackend{path: path, perm: perm, maxSize: maxSize}
}

func (b *fileBackend) Name() string { return b.path }

// A fileDoc is a [Backend] whose document is a file that this process
// locks and replaces through the group-commit engine: the capability a file
// transaction needs of each of its documents ([fileBackend.UpdateAll]).
type fileDoc interface {
	Backend
	// file returns the document's file backend (nil for a nil one).
	file() *fileBackend
}

func (b *fileBackend) file() *fileBackend { return b }

// sameOptions reports whether calls through a and b may share a batch: one
// read and one write apply a single size limit and permission, so each
// call batches only with calls of its own options.
func sameOptions(a, b *fileBackend) bool {
	return a.perm == b.perm && a.maxSize == b.maxSize
}

// Load reads the file without locking: writers replace it by rename, so any
// read sees one complete version.
//
// It first yields the processor (runtime.Gosched). A read is a few short
// system calls, none of which makes the scheduler run another goroutine, so
// goroutines that read in a loop would otherwise keep every processor for a
// full time slice (10 ms) at a time, while a writer of the same process
// that returns from its fsync waits in the run queue behind them: the
// write, and every call in its batch, would take tens of milliseconds.
// The yield costs a reader a trip through the run queue (about a
// microsecond when nothing else is runnable).
func (b *fileBackend) Load(ctx context.Context) ([]byte, error) {
	if err := checkPath(b.path); err != nil {
		return nil, pathError("read", b.path, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("status: read %s: %w", b.path, err)
	}
	runtime.Gosched()
	return readDoc(b.path, b.path, b.maxSize)
}

// readDoc reads the document file at path (named name in errors) with
// fs.ReadRegular: a missing file is no document (nil, nil); a link, named
// pipe, device or directory is refused without blocking (fs.ErrNotRegular),
// and so is a file larger than maxSize (fs.ErrTooLarge).
func readDoc(name, path string, maxSize int64) ([]byte, error) {
	data, err := fs.ReadRegular(path, maxSize)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // named once, below
		}
		return nil, fmt.Errorf("status: read %s: %w", name, err)
	}
	return data, nil // an empty file is a document (a corrupt one), not a missing one
}

// Update queues apply on the path's registry entry and waits for it to run
// in a batch led by this or another caller's goroutine.
func (b *fileBackend) Update(ctx context.Context, apply func(cur []byte) ([]byte, error)) error {
	return b.update(ctx, "mutate", apply)
}

// update runs apply as one request of a batch; op names the call in errors.
// An apply that returns nil for an existing document removes it (Remove).
func (b *fileBackend) update(ctx context.Context, op string, apply func(cur []byte) ([]byte, error)) error {
	if err := ctx.Err(); err != nil {
		return pathError(op, b.path, err)
	}
	key, err := docPath(b.path)
	if err != nil {
		return pathError(op, b.path, err)
	}
	e := acquire(key)
	defer release(e)

	r := newRequest(b, e, op, ctx)
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

// The registry maps each document's absolute path (see docPath) to the entry that serialises
// its mutations inside this process. Entries are reference-counted by the
// Updates in flight and removed when the last one returns.
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
// requests and at most one leader. The leader is always the request at the
// head of the queue when it is chosen; it takes the flock, applies a batch
// from the head of the queue, writes once, and hands leadership to the next
// head. Invariant: the queue is non-empty only while leading is true.
type entry struct {
	key  string
	refs int // guarded by registry.mu

	mu       sync.Mutex
	queue    []*request
	leading  bool
	waking   int           // finished requests whose waiting owners have not yet run (see gather)
	gathered chan struct{} // closed when waking reaches 0, for the leader in gather
	observed atomic.Int32  // requests in flight with an Observer (observe.go)
}

type reqState int

const (
	queued   reqState = iota // in the queue, waiting
	chosen                   // head of the queue, told to lead
	taken                    // removed from the queue into a batch
	applying                 // given the document to run its apply on, in its own goroutine
	finished                 // outcome recorded
)

type request struct {
	b     *fileBackend
	e     *entry
	op    string // "mutate" or "remove", for errors; "" for a transaction's turn
	txOp  string // a transaction's turn: "mutate all" or "load all", for errors
	ctx   context.Context
	apply func(cur []byte) ([]byte, error)
	tx    *txJoin          // the first turn of a transaction that another may join
	wake  chan struct{}    // capacity 1: state changed to chosen, applying or finished
	fn    groupcommit.Call // runs apply on the owner's goroutine for the leader

	state   reqState // guarded by entry.mu
	waiting bool     // its owner is in wait (guarded by entry.mu)
	woken   bool     // counted in entry.waking (guarded by entry.mu)

	// Outcome, written by the leader before state becomes finished.
	err      error
	panicked bool
	panicVal any
	ok       bool // apply succeeded; its change is in the batch's write

	tr *trace // non-nil when an Observer follows the call (observe.go)
}

// newRequest makes a request on e.
func newRequest(b *fileBackend, e *entry, op string, ctx context.Context) *request {
	r := &request{b: b, e: e, op: op, ctx: ctx, wake: make(chan struct{}, 1)}
	r.fn.Init()
	return r
}

func (r *request) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *request) ctxErr() error {
	return pathError(r.opName(), r.b.path, r.ctx.Err())
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
			r.fn.Apply(r.tracked, <-r.fn.Ready())
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

// handOff passes leadership to the head of the queue, if any. e.mu is held.
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
	t := &turn{r: r}
	c := t.clock()
	unlock, err := lockFile(r.ctx, e.key+LockSuffix, r.b.perm)
	if err != nil {
		// Our own wait ended (ctx) or the lock file is unusable: leave the
		// queue and let the next caller lead with its own context.
		if r.ctx.Err() != nil {
			err = r.ctxErr()
		} else {
			err = pathError(r.op, r.b.path, err)
		}
		t.giveBack(err)
		return
	}
	t.takeBatch(nil, since(c))
	completed := false
	defer func() {
		if !completed {
			// The leader's own apply called runtime.Goexit (e.g.
			// t.FailNow inside fn), ending this goroutine mid-batch:
			// nothing was written; fail the whole batch and pass the lead.
			unlock()
			t.finish(true)
		}
	}()
	e.runBatch(t)
	unlock()
	completed = true
	t.finish(false)
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

// gather lets callers that are about to queue join the next batch: the
// callers the previous batch woke usually call again at once; without a
// pause they miss this batch and cost a write of their own. The leader
// waits until each of them has run (see finish): a woken owner that calls
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

// runBatch reads the document once, applies each request of t's batch in
// order, and writes once if the bytes changed. The flock is held.
func (e *entry) runBatch(t *turn) {
	leader := t.r
	orig, pending, err := t.read()
	if err != nil {
		for _, q := range t.batch {
			q.err = err
		}
		return
	}
	cur := e.applyAll(leader, t.batch, orig)
	if unchanged(cur, orig) {
		return
	}
	write := func() error { return writeFile(e.key, cur, leader.b.perm) }
	if cur == nil {
		write = func() error { return removeDoc(leader.ctx, e.key, pending) }
	}
	c := t.clock()
	err = write()
	t.traceWrite(since(c))
	if err != nil {
		t.failWrite(err)
	}
}

// read completes a transaction that a crashed process left on the
// document (see recoverDoc) and reads it. The flock is held. pending lists
// the transaction's other documents that still wait for their lockers.
func (e *entry) read(leader *request) (data []byte, pending []string, err error) {
	if pending, err = recoverDoc(leader.ctx, e.key, leader.b.maxSize); err != nil {
		return nil, nil, pathError(leader.opName(), leader.b.path, err)
	}
	data, err = readDoc(leader.b.path, e.key, leader.b.maxSize)
	return data, pending, err
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
	if q.panicked || q.fn.Exited {
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

// failApplied records a failed write as the outcome of every request
// whose change it held.
func failApplied(batch []*request, err error) {
	for _, q := range batch {
		if q.ok {
			q.err = pathError(q.opName(), q.b.path, err)
		}
	}
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
	q.fn.Give(cur)
	q.signal()
	e.mu.Unlock()
	q.fn.Result()
	return q.outcome()
}

// run calls apply on the current goroutine, turning a panic into a
// recorded value that the owner's goroutine re-raises.
func (r *request) run(cur []byte) ([]byte, error) {
	r.fn.Run(r.tracked, cur)
	return r.outcome()
}

// tracked is apply as the batch runs it, observed.
func (r *request) tracked(cur []byte) ([]byte, error) {
	r.started()
	return r.apply(cur)
}

// outcome records a panic of apply's last run, and returns its result.
func (r *request) outcome() ([]byte, error) {
	if r.fn.Panicked {
		r.panicked, r.panicVal = true, r.fn.PanicVal
	}
	return r.fn.Out, r.fn.Err
}

// finish publishes the batch's outcomes and hands leadership on. It counts
// the owners it wakes (those waiting, and alive: an apply that called
// runtime.Goexit ended its owner) for the next leader's gather.
func (e *entry) finish(batch []*request) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, q := range batch {
		q.state = finished
		if q.waiting && !q.fn.Exited && !q.woken {
			q.woken = true
			e.waking++
		}
		q.signal()
	}
	e.handOff()
}
