package etcdstore

import (
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// putRaw and getRaw reach etcd behind the backend's back.
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
