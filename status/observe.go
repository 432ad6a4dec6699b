package status

import (
	"context"
	"log/slog"
	"time"

	"github.com/agentstate/core/status/internal/filestore"
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

// WithObserver returns a copy of ctx that carries o, to which calls made
// with it report (see [Observer]); a nil o, or one without Done, does not.
func WithObserver(ctx context.Context, o *Observer) context.Context {
	if o == nil {
		return filestore.WithObserver(ctx, nil)
	}
	return filestore.WithObserver(ctx, func(r filestore.Report) {
		if o.Done != nil {
			o.Done(CallReport(r))
		}
	})
}
