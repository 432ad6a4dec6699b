package groupcommit

import (
	"errors"
	"runtime"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// give hands cur to a caller goroutine that applies fn, as a backend's
// batch does, and reports the Call after Result, and whether the caller's
// goroutine returned from Apply.
func give(fn func([]byte) ([]byte, error), cur []byte) (c *Call, returned bool) {
	c = new(Call)
	c.Init()
	done := make(chan bool, 1)
	go func() {
		ret := false
		defer func() { done <- ret }()
		c.Apply(fn, <-c.Ready())
		ret = true
	}()
	c.Give(cur)
	c.Result()
	return c, <-done
}

func TestApplyOutcomes(t *testing.T) {
	errFn := errors.New("fn failed")
	c, ret := give(func(cur []byte) ([]byte, error) { return append(cur, '!'), nil }, []byte("a"))
	if !ret || string(c.Out) != "a!" || c.Failed() {
		t.Errorf("success: out %q, failed %v, returned %v", c.Out, c.Failed(), ret)
	}
	c, _ = give(func([]byte) ([]byte, error) { return nil, errFn }, nil)
	if c.Err != errFn || !c.Failed() || c.Panicked || c.Exited {
		t.Errorf("error: %+v", c)
	}
	c, _ = give(func([]byte) ([]byte, error) { panic("boom") }, nil)
	if !c.Panicked || c.PanicVal != "boom" || c.Exited || !c.Failed() {
		t.Errorf("panic: %+v", c)
	}
	// Goexit ends the caller's goroutine, and the batch's goroutine still
	// gets a result (without the signal it would wait for ever).
	c, ret = give(func([]byte) ([]byte, error) { runtime.Goexit(); return nil, nil }, nil)
	if ret || !c.Exited || c.Panicked || !c.Failed() {
		t.Errorf("Goexit: returned %v, %+v", ret, c)
	}
}

func TestRaise(t *testing.T) {
	var c Call
	c.Init()
	c.Run(func([]byte) ([]byte, error) { panic("boom") }, nil)
	defer func() {
		if v := recover(); v != "boom" {
			t.Errorf("Raise panicked with %v, want boom", v)
		}
	}()
	c.Raise()
	t.Errorf("Raise returned after a panicking run")
}

// A caller that leaves declines a document given; Skip reports whether
// there was one, and Result returns either way it was given.
func TestSkip(t *testing.T) {
	var c Call
	c.Init()
	if c.Skip() {
		t.Fatal("Skip with nothing given reported a decline")
	}
	c.Give([]byte("doc"))
	if !c.Skip() {
		t.Fatal("Skip after Give reported nothing to decline")
	}
	c.Result()
	if c.Failed() {
		t.Errorf("a declined document left an outcome: %+v", c)
	}
}
