//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package status_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/agentstate/core/status"
)

// TestTransformTakesTheDocumentsLock: while another protocol client holds
// the lock file's flock (here on a descriptor of this process, as flock(1)
// would), Transform waits and gives up when ctx ends, having run and
// written nothing; once the lock is released it commits.
func TestTransformTakesTheDocumentsLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.yaml")
	if err := os.WriteFile(path, counterDoc(1), 0o644); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(path+status.LockSuffix, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatalf("flock: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err = status.Transform(ctx, path, func(cur []byte) ([]byte, error) {
		t.Error("fn ran while another client held the lock")
		return incrementCounter(cur)
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Transform while the lock is held = %v, want context.DeadlineExceeded", err)
	}
	if data, _ := os.ReadFile(path); !bytes.Equal(data, counterDoc(1)) {
		t.Errorf("document = %q", data)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if err := status.Transform(context.Background(), path, incrementCounter); err != nil {
		t.Fatalf("Transform after the lock was released: %v", err)
	}
	if data, _ := os.ReadFile(path); !bytes.Equal(data, counterDoc(2)) {
		t.Errorf("document = %q, want %q", data, counterDoc(2))
	}
}
