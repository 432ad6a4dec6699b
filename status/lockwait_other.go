//go:build !linux

package status

import (
	"context"
	"time"
)

// lockWaiter polls: the queue and the wake-up on close are Linux-only (see
// lockwait_linux.go).
type lockWaiter struct{}

func waitersAhead(*lockHandle, int64) bool { return false }

func newLockWaiter(*lockHandle) *lockWaiter { return &lockWaiter{} }

func (*lockWaiter) mayTry() bool { return true }

func (w *lockWaiter) follow() *lockWaiter { return w }

func (*lockWaiter) maxBackoff() time.Duration { return maxBackoff }

func (*lockWaiter) wait(ctx context.Context, d time.Duration) error { return sleepCtx(ctx, d) }

func (*lockWaiter) close() {}
