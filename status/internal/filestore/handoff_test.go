package filestore

import (
	"errors"
	"runtime"
	"testing"
)

// give hands cur to a caller goroutine that applies fn, as a batch's
// leader does, and reports the handoff after result, and whether the
// caller's goroutine returned from apply.
func give(fn func([]byte) ([]byte, error), cur []byte) (h *handoff, returned bool) {
	h = new(handoff)
	h.init()
	done := make(chan bool, 1)
	go func() {
		ret := false
		defer func() { done <- ret }()
		h.apply(fn, <-h.readyDoc())
		ret = true
	}()
	h.give(cur)
	h.result()
	return h, <-done
}

func TestHandoffOutcomes(t *testing.T) {
	errFn := errors.New("fn failed")
	h, ret := give(func(cur []byte) ([]byte, error) { return append(cur, '!'), nil }, []byte("a"))
	if !ret || string(h.out) != "a!" || h.err != nil || h.panicked || h.exited {
		t.Errorf("success: out %q, returned %v, %+v", h.out, ret, h)
	}
	h, _ = give(func([]byte) ([]byte, error) { return nil, errFn }, nil)
	if h.err != errFn || h.panicked || h.exited {
		t.Errorf("error: %+v", h)
	}
	h, _ = give(func([]byte) ([]byte, error) { panic("boom") }, nil)
	if !h.panicked || h.panicVal != "boom" || h.exited {
		t.Errorf("panic: %+v", h)
	}
	// Goexit ends the caller's goroutine, and the leader still gets a
	// result (without the signal it would wait for ever).
	h, ret = give(func([]byte) ([]byte, error) { runtime.Goexit(); return nil, nil }, nil)
	if ret || !h.exited || h.panicked {
		t.Errorf("Goexit: returned %v, %+v", ret, h)
	}
}

// The leader's own run records a panic instead of raising it.
func TestHandoffRunRecordsPanic(t *testing.T) {
	var h handoff
	h.init()
	h.run(func([]byte) ([]byte, error) { panic("boom") }, nil)
	if !h.panicked || h.panicVal != "boom" || h.exited {
		t.Errorf("run of a panicking function: %+v", h)
	}
}
