package goid

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestCurrent: one goroutine gets one id, every time; another gets another.
func TestCurrent(t *testing.T) {
	me := Current()
	if me == "" || Current() != me {
		t.Fatalf("Current() = %q, then %q: want one non-empty id", me, Current())
	}
	other := make(chan string)
	go func() { other <- Current() }()
	if g := <-other; g == "" || g == me {
		t.Fatalf("another goroutine's id %q, this one's %q: want two different ids", g, me)
	}
}
