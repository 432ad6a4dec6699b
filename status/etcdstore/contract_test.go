package etcdstore

import (
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/storetest"
)

// TestContract runs the status contract suite, unchanged, against the etcd
// backend. WriteRaw and ReadRaw go to etcd directly, behind the Store's back.
func TestContract(t *testing.T) {
	cli := newClient(t, sharedServer(t).Endpoint())
	storetest.Run(t, storetest.Harness{
		Path:     func(t *testing.T) string { return docPath(t) },
		Options:  []status.Option{With(cli)},
		WriteRaw: func(t *testing.T, path string, data []byte) { putRaw(t, cli, key(path), data) },
		ReadRaw:  func(t *testing.T, path string) ([]byte, bool) { return getRaw(t, cli, key(path)) },
	})
}

func putRaw(t testing.TB, cli *clientv3.Client, key string, data []byte) {
	t.Helper()
	if _, err := cli.Put(testCtx(t), key, string(data)); err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
}

func getRaw(t testing.TB, cli *clientv3.Client, key string) ([]byte, bool) {
	t.Helper()
	resp, err := cli.Get(testCtx(t), key)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	if len(resp.Kvs) == 0 {
		return nil, false
	}
	v := resp.Kvs[0].Value
	if v == nil {
		v = []byte{}
	}
	return v, true
}
