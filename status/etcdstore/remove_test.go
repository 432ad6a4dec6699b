package etcdstore

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/agentstate/core/status"
)

// A Remove that commits while writers queue behind it hands its turn on
// without a document: the next writer's apply sees no document (nil), not
// an empty one, which a Store would refuse as corrupt (as it did when the
// hand-over carried the removed document as an empty value). Writers: h
// holds the key, then Remove and b queue behind it, in that order.
func TestRemoveHandsOverAbsence(t *testing.T) {
	endpoint := sharedServer(t).Endpoint()
	path := docPath(t)
	open := func() *Backend { return New(newClient(t, endpoint), path) }
	h, x, r, b := open(), open(), open(), open()
	queued := entries(t, newClient(t, endpoint), h)
	hd := holdKey(t, h, x)
	<-queued // the holder's own entry
	removed := make(chan error, 1)
	go func() { removed <- r.Remove(testCtx(t)) }()
	<-queued
	errEmpty := errors.New("apply saw an empty document")
	done := startUpdate(testCtx(t), b, func(cur []byte) ([]byte, error) {
		if cur != nil && len(cur) == 0 {
			return nil, errEmpty
		}
		return append(cur, 'B'), nil
	})
	queuedOrDone(t, queued, done)
	hd.release()
	if err := <-hd.done; err != nil {
		t.Fatal(err)
	}
	if err := <-removed; err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the writer behind the Remove: %v", err)
	}
	if got, ok := getRaw(t, newClient(t, endpoint), h.Key()); !ok || string(got) != "B" {
		t.Fatalf("stored %q (present %v); want B, written after the removal", got, ok)
	}
}

// Remove of a missing key reports os.ErrNotExist and sends no delete; a
// path outside the root and a closed client fail as Update does.
func TestRemoveErrors(t *testing.T) {
	cli := newClient(t, sharedServer(t).Endpoint())
	ctx := testCtx(t)
	b := New(cli, docPath(t))
	if err := b.Remove(ctx); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v; want os.ErrNotExist", err)
	}
	if err := New(cli, "/elsewhere/status.json", WithRoot("/srv/ws")).Remove(ctx); !errors.Is(err, ErrOutsideRoot) {
		t.Errorf("outside the root: %v; want ErrOutsideRoot", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := b.Remove(cctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v; want context.Canceled", err)
	}
}

// Quarantine is the file backend's only: on etcd the Store says so with
// status.ErrUnsupported, and the document stays.
func TestQuarantineUnsupported(t *testing.T) {
	cli := newClient(t, sharedServer(t).Endpoint())
	path := docPath(t)
	if _, err := cli.Put(testCtx(t), key(path), "{"); err != nil {
		t.Fatal(err)
	}
	moved, err := status.NewStore[counter](path, With(cli)).Quarantine(testCtx(t))
	if !errors.Is(err, status.ErrUnsupported) || moved != "" {
		t.Errorf("Quarantine = %q, %v; want status.ErrUnsupported", moved, err)
	}
	if got, ok := getRaw(t, cli, key(path)); !ok || string(got) != "{" {
		t.Errorf("the document changed to %q (present %v)", got, ok)
	}
}
