package slots

import (
	"testing"
	"time"
)

// SetClock makes the operations record t as the time until tb ends,
// skipping tb in a build without the test switches.
func SetClock(tb testing.TB, t time.Time) {
	tb.Helper()
	s := testSeams()
	if s == nil {
		tb.Skip("needs the test switches: go test -tags crashhooks")
	}
	s.now = func() time.Time { return t }
	tb.Cleanup(func() { s.now = nil })
}
