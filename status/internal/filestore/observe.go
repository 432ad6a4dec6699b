package filestore

import (
	"context"
	"time"
)

// A Report is what an observed call reports: status.CallReport, which
// says what each field means, has the same fields.
type Report struct {
	Path   string
	Op     string
	Wait   time.Duration
	Lock   time.Duration
	Batch  int
	Write  time.Duration
	Leader bool
	Err    error
}

type observerKey struct{}

// WithObserver returns a copy of ctx whose calls report to done; a nil
// done makes them report nowhere (status.WithObserver).
func WithObserver(ctx context.Context, done func(Report)) context.Context {
	return context.WithValue(ctx, observerKey{}, done)
}

func observerFrom(ctx context.Context) func(Report) {
	done, _ := ctx.Value(observerKey{}).(func(Report))
	return done
}

// A trace records, for an observed request, what its [Report] reports. It
// is allocated only for observed requests, and the engine reads clocks
// only while its entry has observed requests in flight (entry.observed).
type trace struct {
	done   func(Report)
	called time.Time // when the call began
	fnAt   time.Time // when its fn began
	batch  int
	lock   time.Duration
	write  time.Duration
	leader bool
}

// observe starts the trace of r if its context carries an observer, and
// returns the function that ends it.
func (e *entry) observe(r *request) (done func()) {
	o := observerFrom(r.ctx)
	if o == nil {
		return func() {}
	}
	r.tr = &trace{done: o, called: time.Now()}
	e.observed.Add(1)
	return func() { e.observed.Add(-1) }
}

// report sends r's [Report] to its observer.
func (r *request) report() {
	t := r.tr
	if t == nil {
		return
	}
	end := t.fnAt
	if end.IsZero() {
		end = time.Now()
	}
	t.done(Report{
		Path: r.d.path, Op: r.op, Wait: end.Sub(t.called), Lock: t.lock,
		Batch: t.batch, Write: t.write, Leader: t.leader, Err: r.err,
	})
}

// clock returns the time if the entry has observed requests, else zero.
func (e *entry) clock() time.Time {
	if e.observed.Load() == 0 {
		return time.Time{}
	}
	return time.Now()
}

// since returns the time since t, or 0 for a zero t.
func since(t time.Time) time.Duration {
	if t.IsZero() {
		return 0
	}
	return time.Since(t)
}

// joined records, in each observed request of a batch, what the batch
// reports.
func joined(leader *request, batch []*request, lock time.Duration) {
	for _, q := range batch {
		if q.tr != nil {
			q.tr.batch, q.tr.lock, q.tr.leader = len(batch), lock, q == leader
		}
	}
}

// started records when r's fn starts, for an observed r.
func (r *request) started() {
	if r.tr != nil {
		r.tr.fnAt = time.Now()
	}
}

// traceWrite records the write's duration d in the observed calls of r's
// batch.
func (r *request) traceWrite(d time.Duration) {
	for _, q := range r.batch {
		if q.tr != nil {
			q.tr.write = d
		}
	}
}
