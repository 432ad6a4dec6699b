// Package ctxtime waits for a time or a context, whichever ends first.
package ctxtime

import (
	"context"
	"time"
)

// Sleep waits for d, or returns ctx's error when ctx ends first.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
