package filestore

// A handoff runs one caller's apply on the caller's own goroutine for the
// leader of its batch: the leader gives it the batch's current document
// (give) and wakes it; the caller, waiting in its own call, runs apply on
// it (apply) and passes the outcome back (result returns). The leader runs
// its own apply inline (run). A panicking apply is recovered into the
// outcome and re-raised by its caller; one that calls runtime.Goexit ends
// only its caller's goroutine, and the batch carries on without its
// change. A handoff must be initialised by init and not copied afterwards.
type handoff struct {
	ready chan []byte   // capacity 1: the document to apply the function to
	ran   chan struct{} // capacity 1: the function returned, panicked or exited

	// The outcome of the last run, written by the goroutine that ran the
	// function before it signals ran (or, for run, before run returns).
	out      []byte
	err      error
	panicked bool // apply panicked with panicVal
	panicVal any
	exited   bool // apply called runtime.Goexit
}

func (h *handoff) init() {
	h.ready, h.ran = make(chan []byte, 1), make(chan struct{}, 1)
}

// run calls fn(cur) on the current goroutine and records its outcome. A
// panic is recovered. If fn calls runtime.Goexit, exited is set and the
// goroutine ends when run's deferred calls have run.
func (h *handoff) run(fn func(cur []byte) ([]byte, error), cur []byte) {
	h.out, h.err, h.panicked, h.panicVal = nil, nil, false, nil
	h.exited = true
	normal := false
	defer func() {
		if !normal {
			if v := recover(); v != nil {
				h.panicked, h.panicVal = true, v
				h.exited = false
			}
		}
	}()
	h.out, h.err = fn(cur)
	h.exited, normal = false, true
}

// give passes cur to the caller, without blocking; the leader then wakes
// the caller and waits in result.
func (h *handoff) give(cur []byte) { h.ready <- cur }

// readyDoc delivers a document given: a caller that receives one must pass
// it to apply.
func (h *handoff) readyDoc() <-chan []byte { return h.ready }

// apply runs fn on cur, the document given, on the current goroutine (the
// caller's), and passes the outcome back to the leader, also when fn calls
// runtime.Goexit: then only the caller's goroutine ends.
func (h *handoff) apply(fn func(cur []byte) ([]byte, error), cur []byte) {
	defer func() { h.ran <- struct{}{} }()
	h.run(fn, cur)
}

// result waits until the caller has applied the document given.
func (h *handoff) result() { <-h.ran }
