package etcdstore

import (
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentstate/core/status"
)

// With returns a [status.Option] that makes a Store keep its document in etcd
// through cli. Every Store built with the returned [Option] shares one marker
// lease (see the package doc), so build it once and reuse it.
func With(cli *clientv3.Client, opts ...Option) status.Option {
	return newShared(cli, newConfig(opts)).option()
}

func (s *shared) option() status.Option {
	return status.WithBackend(func(path string) status.Backend { return s.open(path) })
}
