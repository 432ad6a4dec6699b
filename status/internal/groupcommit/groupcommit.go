// Package groupcommit holds what the status backends' group commit engines share:
// the cap on a batch, and the hand-off that runs every caller's function on
// the caller's own goroutine while another goroutine runs the batch. The
// guarantees it serves are stated once, in package status's doc ("fn runs
// under the lock, always on its caller's goroutine").
//
// The goroutine running a batch gives each member's function the batch's
// current document ([Call.Give]); the member's goroutine, waiting in its
// own call, runs it ([Call.Apply]) and passes the result back
// ([Call.Result]). A function that panics is recovered into the result and
// re-raised by its caller ([Call.Raise]); one that calls runtime.Goexit ends
// only its caller's goroutine, and the batch carries on without its change.
package groupcommit

// Max caps how many calls one batch carries, so that one durable write
// never waits on an unbounded amount of work.
const Max = 256

// A Call is one caller's function, run on the caller's goroutine for the
// goroutine that runs its batch. A Call must be initialised by [Call.Init]
// and not copied afterwards.
type Call struct {
	ready chan []byte   // capacity 1: the document to apply the function to
	ran   chan struct{} // capacity 1: the function returned, panicked or exited

	// The outcome of the last run, written by the goroutine that ran the
	// function before it signals ran (or, for Run, before Run returns).
	Out      []byte
	Err      error
	Panicked bool // the function panicked with PanicVal
	PanicVal any
	Exited   bool // the function called runtime.Goexit
}

// Init makes c ready to be given documents.
func (c *Call) Init() {
	c.ready, c.ran = make(chan []byte, 1), make(chan struct{}, 1)
}

// Failed reports whether the last run's change must be dropped: the
// function failed, panicked or exited.
func (c *Call) Failed() bool { return c.Err != nil || c.Panicked || c.Exited }

// Run calls fn(cur) on the current goroutine and records its outcome. A
// panic is recovered (see Raise). If fn calls runtime.Goexit, Exited is
// set and the goroutine ends when Run's deferred calls have run.
func (c *Call) Run(fn func(cur []byte) ([]byte, error), cur []byte) {
	c.Out, c.Err, c.Panicked, c.PanicVal = nil, nil, false, nil
	c.Exited = true
	normal := false
	defer func() {
		if !normal {
			if v := recover(); v != nil {
				c.Panicked, c.PanicVal = true, v
				c.Exited = false
			}
		}
	}()
	c.Out, c.Err = fn(cur)
	c.Exited, normal = false, true
}

// Raise re-raises the panic of the last run, if it panicked.
func (c *Call) Raise() {
	if c.Panicked {
		panic(c.PanicVal)
	}
}

// Give passes cur to the caller. The batch's goroutine then tells the
// caller (the backend's own wake-up, or the caller waits on [Call.Ready])
// and waits for [Call.Result]. It does not block.
func (c *Call) Give(cur []byte) { c.ready <- cur }

// Ready delivers a document given: a caller that receives one must pass it
// to [Call.Apply].
func (c *Call) Ready() <-chan []byte { return c.ready }

// Apply runs fn on cur, the document given, on the current goroutine (the
// caller's), and passes the outcome back to the batch's goroutine, also
// when fn calls runtime.Goexit: then only the caller's goroutine ends.
func (c *Call) Apply(fn func(cur []byte) ([]byte, error), cur []byte) {
	defer func() { c.ran <- struct{}{} }()
	c.Run(fn, cur)
}

// Skip declines a document given and not yet received, for a caller that
// leaves instead (its ctx ended); the batch's goroutine's Result returns
// with no outcome. It reports whether there was a document to decline.
func (c *Call) Skip() bool {
	select {
	case <-c.ready:
	default:
		return false
	}
	c.Out, c.Err, c.Panicked, c.PanicVal, c.Exited = nil, nil, false, nil, false
	c.ran <- struct{}{}
	return true
}

// Result waits until the caller has applied or skipped the document given.
func (c *Call) Result() { <-c.ran }

// Ran delivers one value when the caller has applied or skipped the
// document given: receiving it is the same as [Call.Result] returning.
func (c *Call) Ran() <-chan struct{} { return c.ran }
