//go:build unix

package etcdstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentstate/core/status/etcdstore/internal/etcdtest"
)

// TestPartitionedHolder: a writer holds its turn on a hot key, past its
// lease's TTL while it is connected (its waiting caller renews the lease),
// until its etcd member stops answering (SIGSTOP: its connections stay open, nothing
// answers), as if its host were cut off. The writers queued behind it go
// on once its lease expires (its waiting caller can no longer renew it):
// their commits come after the holder's entry is deleted, in queue order.
// When the member answers again, the cut-off writer's change commits too,
// after them: nothing is lost.
//
// The CONTROL is the unsafe pattern: a turn that is not bound to a lease
// (an entry put without one), held by a writer that is cut off in the same
// way. The writer queued behind it never gets its turn: its call ends with
// its ctx.
func TestPartitionedHolder(t *testing.T) {
	const ttl = 2 * time.Second
	cl := startServer(t, etcdtest.Options{Members: 3})
	// The cut-off member may be the leader or not: the others elect a
	// new one if need be, and its leases expire all the same.
	cutOff := cl.Members[0]
	others := cl.Endpoints()[1:]
	path := docPath(t)
	open := func(endpoints []string) *Backend {
		return New(newClientTo(t, endpoints), path, WithTurnTTL(ttl))
	}

	t.Run("turns", func(t *testing.T) {
		h := open([]string{cutOff.Endpoint()})
		x, b1, b2 := open(others), open(others), open(others)
		queued := entries(t, newClientTo(t, others), h)
		hd := holdKey(t, h, x)
		held := <-queued
		gone := deleted(t, newClientTo(t, others), held)
		done1 := startUpdate(testCtx(t), b1, appendByte('1'))
		<-queued
		done2 := startUpdate(testCtx(t), b2, appendByte('2'))
		<-queued

		// Connected, the holder keeps its turn past its lease's TTL: its
		// waiting caller renews the lease.
		select {
		case <-gone:
			t.Fatal("the holder lost its turn while its member answered")
		case <-time.After(2 * ttl):
		}
		if err := cutOff.Pause(); err != nil {
			t.Fatal(err)
		}
		defer cutOff.Resume()
		deletedAt := <-gone
		for _, done := range []chan error{done1, done2} {
			if err := <-done; err != nil {
				t.Fatalf("writer behind the cut-off holder: %v", err)
			}
		}
		// Neither commit came before the holder's entry went.
		direct := newClientTo(t, others)
		resp, err := direct.Get(testCtx(t), h.Key(), clientv3.WithRev(deletedAt))
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "X" {
			t.Fatalf("stored %v when the holder's entry was deleted; want X", resp.Kvs)
		}
		if got, _ := getRaw(t, direct, h.Key()); string(got) != "X12" {
			t.Fatalf("stored %q while the holder is cut off; want X12", got)
		}

		hd.release()
		if err := cutOff.Resume(); err != nil {
			t.Fatal(err)
		}
		if err := <-hd.done; err != nil {
			t.Fatalf("cut-off holder after its member answers again: %v", err)
		}
		if got, _ := getRaw(t, direct, h.Key()); string(got) != "X12H" {
			t.Fatalf("stored %q; want X12H (the holder's change after the others)", got)
		}
	})

	t.Run("CONTROL turn without a lease", func(t *testing.T) {
		b := open(others)
		// The holder's entry, put without a lease, ahead of everyone.
		cli := newClientTo(t, []string{cutOff.Endpoint()})
		if _, err := cli.Put(testCtx(t), b.turns+"0-leaseless", ""); err != nil {
			t.Fatal(err)
		}
		if err := cutOff.Pause(); err != nil {
			t.Fatal(err)
		}
		defer cutOff.Resume()
		ctx, cancel := context.WithTimeout(testCtx(t), 3*ttl)
		defer cancel()
		if err := b.Update(ctx, appendByte('B')); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("writer behind a lease-less turn: %v; want it to wait until its ctx ends", err)
		}
	})
}

// deleted reports the revision at which key is deleted (0 if the test's
// ctx ends first).
func deleted(t *testing.T, cli *clientv3.Client, key string) <-chan int64 {
	t.Helper()
	ctx, cancel := context.WithCancel(testCtx(t))
	t.Cleanup(cancel)
	out := make(chan int64, 1)
	events := cli.Watch(ctx, key, clientv3.WithCreatedNotify())
	<-events
	go func() {
		defer close(out) // unblocks the reader (with 0) if the watch ends first
		for wr := range events {
			for _, ev := range wr.Events {
				if ev.Type == mvccpb.DELETE {
					out <- ev.Kv.ModRevision
					return
				}
			}
		}
	}()
	return out
}
