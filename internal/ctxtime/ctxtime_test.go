package ctxtime

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A sleep ends with ctx's error when ctx ends first, and with nil when its
// time passes first. The control: the same sleep on a live context
// returns nil, not an error.
func TestSleep(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep on an ended context = %v, want context.Canceled", err)
	}
	if err := Sleep(context.Background(), time.Nanosecond); err != nil {
		t.Errorf("CONTROL: Sleep on a live context = %v, want nil", err)
	}
}
