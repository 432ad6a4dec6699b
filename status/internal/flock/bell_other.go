//go:build !linux

package flock

import "time"

// A bell is Linux-only (a futex on a shared mapping of the lock file);
// elsewhere waiters poll.
type bell struct{}

type sleeper struct{}

type woken int

const (
	timedOut woken = iota
	rung
	broken
)

func (*File) openBell(bool) *bell { return nil }
func (*File) stale() bool         { return false }

func (*bell) word() uint32                         { return 0 }
func (*bell) ring() bool                           { return false }
func (*bell) close()                               {}
func (*bell) sleeper() *sleeper                    { return nil }
func (*sleeper) sleep(uint32, time.Duration) woken { return broken }
func (*sleeper) interrupt()                        {}
func (*sleeper) nextClass()                        {}
