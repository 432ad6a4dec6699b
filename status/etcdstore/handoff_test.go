package etcdstore

import (
	"errors"
	"runtime"
	"testing"
)

// give hands cur to a caller goroutine that applies fn, as a batch's
// driver does, and reports the handoff once it ran, and whether the
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
	<-h.ran()
	return h, <-done
}

func TestHandoffOutcomes(t *testing.T) {
	errFn := errors.New("fn failed")
	h, ret := give(func(cur []byte) ([]byte, error) { return append(cur, '!'), nil }, []byte("a"))
	if !ret || string(h.out) != "a!" || h.failed() {
		t.Errorf("success: out %q, failed %v, returned %v", h.out, h.failed(), ret)
	}
	h, _ = give(func([]byte) ([]byte, error) { return nil, errFn }, nil)
	if h.err != errFn || !h.failed() || h.panicked || h.exited {
		t.Errorf("error: %+v", h)
	}
	h, _ = give(func([]byte) ([]byte, error) { panic("boom") }, nil)
	if !h.panicked || h.panicVal != "boom" || h.exited || !h.failed() {
		t.Errorf("panic: %+v", h)
	}
	// Goexit ends the caller's goroutine, and the driver still gets a
	// result (without the signal it would wait for ever).
	h, ret = give(func([]byte) ([]byte, error) { runtime.Goexit(); return nil, nil }, nil)
	if ret || !h.exited || h.panicked || !h.failed() {
		t.Errorf("Goexit: returned %v, %+v", ret, h)
	}
	defer func() {
		if v := recover(); v != "boom" {
			t.Errorf("raise panicked with %v, want boom", v)
		}
	}()
	h, _ = give(func([]byte) ([]byte, error) { panic("boom") }, nil)
	h.raise()
	t.Errorf("raise returned after a panicking run")
}

// A caller that leaves declines a document given; skip reports whether
// there was one, and ran delivers either way it was given.
func TestHandoffSkip(t *testing.T) {
	var h handoff
	h.init()
	if h.skip() {
		t.Fatal("skip with nothing given reported a decline")
	}
	h.give([]byte("doc"))
	if !h.skip() {
		t.Fatal("skip after give reported nothing to decline")
	}
	<-h.ran()
	if h.failed() {
		t.Errorf("a declined document left an outcome: %+v", h)
	}
}
