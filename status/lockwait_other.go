//go:build !linux

package status

import (
	"context"
	"time"
)

// lockWaiter polls: only Linux tells a waiter when the lock file closes
// (see lockwait_linux.go).
type lockWaiter struct{}

func newLockWaiter(*lockHandle) *lockWaiter                         { return &lockWaiter{} }
func (*lockWaiter) othersWaiting() bool                             { return false }
func (*lockWaiter) turn() time.Duration                             { return 0 }
func (*lockWaiter) maxBackoff() time.Duration                       { return maxBackoff }
func (*lockWaiter) wait(ctx context.Context, d time.Duration) error { return sleepCtx(ctx, d) }
func (*lockWaiter) close()                                          {}
