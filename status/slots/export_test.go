package slots

import "time"

// SetClock makes the operations record t as the time, until the returned
// function restores the clock.
func SetClock(t time.Time) (restore func()) {
	old := now
	now = func() time.Time { return t }
	return func() { now = old }
}
