package etcdstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/claim"
	"github.com/agentstate/core/status/etcdstore"
	"github.com/agentstate/core/status/slots/slotstest"
)

// TestSlots runs the slots suite, unchanged, against the etcd backend, with
// etcd leases as the owners: an owner the suite ends is a lease revoked, and
// etcdstore.LeaseCheck judges them.
func TestSlots(t *testing.T) {
	cli := newClient(t)
	key := func(t *testing.T, path string) string {
		k, err := etcdstore.Key(path)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	slotstest.Run(t, slotstest.Harness{
		Options: []status.Option{etcdstore.With(cli)},
		WriteRaw: func(t *testing.T, path string, data []byte) {
			if _, err := cli.Put(testCtx(t), key(t, path), string(data)); err != nil {
				t.Fatal(err)
			}
		},
		ReadRaw: func(t *testing.T, path string) []byte {
			resp, err := cli.Get(testCtx(t), key(t, path))
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Kvs) == 0 {
				t.Fatalf("no document %s", path)
			}
			return resp.Kvs[0].Value
		},
		NewOwner: func(t *testing.T) (claim.Owner, func()) {
			l, err := etcdstore.NewLease(testCtx(t), cli, 30*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			end := func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				l.Revoke(ctx) // a second Revoke finds the lease gone: nothing to do
			}
			t.Cleanup(end)
			return l.Owner(), end
		},
		Check: etcdstore.LeaseCheck(cli),
	})
}
