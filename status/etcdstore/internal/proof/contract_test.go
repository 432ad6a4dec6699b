package etcdstore_test

import (
	"testing"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/etcdstore"
	"github.com/agentstate/core/status/storetest"
)

// TestContract runs the status contract suite, unchanged, against the etcd
// backend. WriteRaw and ReadRaw go to etcd directly, behind the Store's back.
func TestContract(t *testing.T) {
	cli := newClient(t)
	key := func(t *testing.T, path string) string {
		k, err := etcdstore.Key(path)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	storetest.Run(t, storetest.Harness{
		Path:    func(t *testing.T) string { return docPath(t) },
		Options: []status.Option{etcdstore.With(cli)},
		WriteRaw: func(t *testing.T, path string, data []byte) {
			if _, err := cli.Put(testCtx(t), key(t, path), string(data)); err != nil {
				t.Fatal(err)
			}
		},
		ReadRaw: func(t *testing.T, path string) ([]byte, bool) {
			resp, err := cli.Get(testCtx(t), key(t, path))
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Kvs) == 0 {
				return nil, false
			}
			if resp.Kvs[0].Value == nil {
				return []byte{}, true
			}
			return resp.Kvs[0].Value, true
		},
	})
}
