package etcdstore

import (
	"bytes"
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentstate/core/status"
)

// bareBackend is the CONTROL: the read-modify-write that a naive etcd port
// would do — a Get, then a Put without the ModRevision guard. Tests run it
// through the same harness as the real backend and assert that the harness
// catches its lost updates; otherwise a passing test would prove nothing.
type bareBackend struct {
	cli  *clientv3.Client
	path string
	key  string
}

func withBare(cli *clientv3.Client) status.Option {
	return status.WithBackend(func(path string) status.Backend {
		return &bareBackend{cli: cli, path: path, key: key(path)}
	})
}

func (b *bareBackend) Name() string { return b.path }

func (b *bareBackend) Load(ctx context.Context) ([]byte, error) {
	resp, err := b.cli.Get(ctx, b.key)
	if err != nil {
		return nil, err
	}
	v, _ := value(resp.Kvs)
	return v, nil
}

func (b *bareBackend) Update(ctx context.Context, apply func([]byte) ([]byte, error)) error {
	cur, err := b.Load(ctx)
	if err != nil {
		return err
	}
	next, err := apply(cur)
	if err != nil || bytes.Equal(next, cur) {
		return err
	}
	_, err = b.cli.Put(ctx, b.key, string(next))
	return err
}
