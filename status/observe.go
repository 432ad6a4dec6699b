package status

import (
	"context"
	"log/slog"
	"time"
)

// An Observer receives a [CallReport] of each call the file backend serves
// (wait, batch, write, outcome) for metrics or log/slog. Attached once to a
// service's base context with [WithObserver], it reaches the package-level
// functions and every [Store] without global state.
type Observer struct {
	// Done is called once per observed call (not one whose fn panics), in
	// the caller's goroutine after the lock was released and before the
	// call returns. It must be safe for concurrent use and quick.
	Done func(CallReport)
}

// A CallReport is the report of one call; see [Observer].
type CallReport struct {
	Path string // the document, as the caller named it
	Op   string // "mutate" (Mutate, Create) or "remove"
	// Wait is the time from the call until its fn ran, or failed to.
	Wait time.Duration
	// Lock is the part of Wait the batch's leader spent on the file lock.
	Lock time.Duration
	// Batch is the number of calls in its batch, itself included; 0 if none.
	Batch int
	// Write is the duration of the batch's durable write or removal, or 0.
	Write time.Duration
	// Leader reports that the call led its batch: count Batch, Lock and
	// Write only for leaders.
	Leader bool
	// Err is the call's result ([errors.Is] [ErrConflict], [ErrCorrupt]...).
	Err error
}

// LogValue lets log/slog log a [CallReport] as a group of its fields.
func (c CallReport) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.String("path", c.Path),
		slog.String("op", c.Op),
		slog.Duration("wait", c.Wait),
		slog.Duration("lock", c.Lock),
		slog.Int("batch", c.Batch),
		slog.Duration("write", c.Write),
		slog.Bool("leader", c.Leader),
	}
	if c.Err != nil {
		attrs = append(attrs, slog.String("err", c.Err.Error()))
	}
	return slog.GroupValue(attrs...)
}

type observerKey struct{}

// WithObserver returns a copy of ctx that carries o, to which calls made
// with it report (see [Observer]); a nil o, or one without Done, does not.
func WithObserver(ctx context.Context, o *Observer) context.Context {
	return context.WithValue(ctx, observerKey{}, o)
}

func observerFrom(ctx context.Context) *Observer {
	o, _ := ctx.Value(observerKey{}).(*Observer)
	if o == nil || o.Done == nil {
		return nil
	}
	return o
}

// A trace records, for an observed request, what its [CallReport] reports. It is
// allocated only for observed requests, and the engine reads clocks only
// while its entry has observed requests in flight (entry.observed).
type trace struct {
	obs    *Observer
	called time.Time // when the call began
	fnAt   time.Time // when its fn began
	batch  int
	lock   time.Duration
	write  time.Duration
	leader bool
}

// observe starts the trace of r if its context carries an [Observer], and
// returns the function that ends it.
func (e *entry) observe(r *request) (done func()) {
	o := observerFrom(r.ctx)
	if o == nil {
		return func() {}
	}
	r.tr = &trace{obs: o, called: time.Now()}
	e.observed.Add(1)
	return func() { e.observed.Add(-1) }
}

// report sends r's [CallReport] to its [Observer].
func (r *request) report() {
	t := r.tr
	if t == nil {
		return
	}
	end := t.fnAt
	if end.IsZero() {
		end = time.Now()
	}
	t.obs.Done(CallReport{
		Path: r.b.path, Op: r.op, Wait: end.Sub(t.called), Lock: t.lock,
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
