package status

import (
	"context"
	"time"
)

// A turn is a caller's exclusive hold on one document in this process: its
// request at the head of the document's queue. A single-document call that
// leads a batch holds one turn; a transaction holds one on each of its
// documents. The holder takes the calls queued behind its turn into a
// batch, applies them after its own change, and finishes the turn with one
// write; the engine keeps every caller's function on its own goroutine and
// reports to Observers.
type turn struct {
	r     *request
	batch []*request // r and the calls taken behind it (see takeBatch)
}

// queueTurn queues a turn on e for a transaction's document and waits
// until it heads the queue (true). It returns false if the turn ended
// first: its ctx ended, or a transaction ahead committed join, the
// transaction this turn opens (see joins); outcome then says how.
func queueTurn(ctx context.Context, op string, b *fileBackend, e *entry, join *txJoin) (*turn, bool) {
	r := newRequest(b, e, "", ctx)
	r.txOp = op
	r.tx = join
	t := &turn{r: r}
	return t, e.enqueue(r) || e.wait(r)
}

// outcome returns the error of a turn that ended without being held, and
// re-raises the panic of a joined transaction's function.
func (t *turn) outcome() error {
	if t.r.panicked {
		panic(t.r.panicVal)
	}
	return t.r.err
}

// giveBack ends a held turn before any batch was taken: the next caller
// in the queue leads, with err as this turn's outcome.
func (t *turn) giveBack(err error) {
	e := t.r.e
	e.mu.Lock()
	defer e.mu.Unlock()
	e.remove(t.r)
	t.r.state = finished
	t.r.err = err
	e.handOff()
}

// read completes a crashed transaction on the document and reads it.
func (t *turn) read() (data []byte, pending []string, err error) {
	return t.r.e.read(t.r)
}

// run runs fn, the holder's own change, on the current goroutine, as an
// observed function; a panic is recorded for raise.
func (t *turn) run(fn func() error) error {
	t.r.apply = func([]byte) ([]byte, error) { return nil, fn() }
	_, err := t.r.run(nil)
	return err
}

// panicked reports whether run's fn panicked.
func (t *turn) panicked() bool { return t.r.panicked }

// raise re-raises the panic of run's fn, if it panicked.
func (t *turn) raise() {
	if t.r.panicked {
		panic(t.r.panicVal)
	}
}

// takeBatch takes the calls queued behind the turn that may share its
// write: single-document changes with the turn's options, and the
// transactions for which withTx holds. lock is how long the locks took,
// for Observers.
// A removal is a batch of its own (see removeDoc).
func (t *turn) takeBatch(withTx func(*txJoin) bool, lock time.Duration) {
	holder := t.r
	t.batch = holder.e.take(func(q *request) bool {
		if q.tx != nil {
			return withTx != nil && withTx(q.tx)
		}
		return q.op == "mutate" && holder.op != "remove" && sameOptions(q.b, holder.b)
	})
	joined(holder, t.batch, lock)
}

// applyBatch applies the calls of the batch after the holder's, in order,
// to *cur. A transaction among them runs through runTx on its own
// goroutine; it changes *cur itself (and its other documents) on success.
func (t *turn) applyBatch(cur *[]byte, runTx func(j *txJoin) error) {
	for _, q := range t.batch {
		switch {
		case q == t.r:
		case q.tx != nil:
			q.apply = func([]byte) ([]byte, error) { return nil, runTx(q.tx) }
			q.e.applyOne(t.r, q, nil)
		default:
			*cur = q.e.applyOne(t.r, q, *cur)
		}
	}
}

// failWrite records a failed write as the outcome of each call of the
// batch whose change it held.
func (t *turn) failWrite(err error) { failApplied(t.batch, err) }

// clock returns the time if the document has observed calls, else zero.
func (t *turn) clock() time.Time { return t.r.e.clock() }

// traceWrite records the write's duration d in the batch's observed calls.
func (t *turn) traceWrite(d time.Duration) {
	for _, q := range t.batch {
		if q.tr != nil {
			q.tr.write = d
		}
	}
}

// finish publishes the batch's outcomes and hands the document to the next
// caller. abandoned: the holder's goroutine is ending (runtime.Goexit in
// its function) and nothing was written.
func (t *turn) finish(abandoned bool) {
	if abandoned {
		for _, q := range t.batch {
			if q.err == nil && !q.panicked {
				q.err = pathError(q.opName(), q.b.path, errGoexit)
			}
		}
	}
	t.r.e.finish(t.batch)
}
