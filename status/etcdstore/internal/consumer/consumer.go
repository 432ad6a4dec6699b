// Package consumer uses status/etcdstore the way an importer does; its
// tests check that such a module builds from etcdstore's declared
// requirements and that its go.sum stays free of etcdstore's test-only
// dependencies.
package consumer

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/etcdstore"
)

// Doc is a status document.
type Doc struct {
	Runs int `json:"runs"`
}

// Run counts one run of the document at path, which lies under root.
func Run(ctx context.Context, cli *clientv3.Client, root, path string) (Doc, error) {
	st := status.NewStore[Doc](path, etcdstore.With(cli, etcdstore.WithRoot(root)))
	return st.Mutate(ctx, func(d *Doc) error { d.Runs++; return nil })
}
