package etcdstore

// maxBatch caps how many Updates one transaction carries (the batches of
// up to 256 of the status package doc's Group commit), so that one commit
// never waits on an unbounded amount of work.
const maxBatch = 256

// A handoff runs one caller's apply on the caller's own goroutine for the
// driver of its batch: the driver gives it the batch's current document
// (give); the caller, waiting in Update, runs apply on it (apply) and
// passes the outcome back (ran). A panicking apply is recovered into the
// outcome and re-raised in its caller (raise); one that calls
// runtime.Goexit ends only its caller's goroutine, and the batch carries on
// without its change. A caller that departs declines a document given and
// not yet taken (skip). A handoff must be initialised by init and not
// copied afterwards.
type handoff struct {
	ready chan []byte   // capacity 1: the document to apply the function to
	done  chan struct{} // capacity 1: the function returned, panicked or exited, or the document was declined

	// The outcome of the last run, written by the caller's goroutine
	// before it signals done.
	out      []byte
	err      error
	panicked bool // apply panicked with panicVal
	panicVal any
	exited   bool // apply called runtime.Goexit
}

func (h *handoff) init() {
	h.ready, h.done = make(chan []byte, 1), make(chan struct{}, 1)
}

// failed reports whether the last run's change must be dropped: apply
// failed, panicked or exited.
func (h *handoff) failed() bool { return h.err != nil || h.panicked || h.exited }

// raise re-raises the panic of the last run, if it panicked.
func (h *handoff) raise() {
	if h.panicked {
		panic(h.panicVal)
	}
}

// give passes cur to the caller, without blocking; the driver then waits
// on ran.
func (h *handoff) give(cur []byte) { h.ready <- cur }

// readyDoc delivers a document given: a caller that receives one must pass
// it to apply.
func (h *handoff) readyDoc() <-chan []byte { return h.ready }

// apply runs fn on cur, the document given, on the caller's goroutine, and
// signals the driver, also when fn calls runtime.Goexit: then only the
// caller's goroutine ends, once apply's deferred calls have run.
func (h *handoff) apply(fn func(cur []byte) ([]byte, error), cur []byte) {
	defer func() { h.done <- struct{}{} }()
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

// skip declines a document given and not yet received, for a caller that
// leaves instead (its ctx ended): the driver's ran delivers with no
// outcome. It reports whether there was a document to decline.
func (h *handoff) skip() bool {
	select {
	case <-h.ready:
	default:
		return false
	}
	h.out, h.err, h.panicked, h.panicVal, h.exited = nil, nil, false, nil, false
	h.done <- struct{}{}
	return true
}

// ran delivers one value when the caller has applied or declined the
// document given.
func (h *handoff) ran() <-chan struct{} { return h.done }
