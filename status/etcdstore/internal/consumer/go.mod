// A module that imports etcdstore as an importer would: it requires the
// released versions and replaces them only with the local checkout (they
// are not published from here), so it gets exactly the requirements that
// etcdstore's own go.mod declares; the replace in etcdstore's go.mod does
// not apply to it.
module example.com/etcdstore-consumer

go 1.25.0

require (
	github.com/agentstate/core v0.1.0
	github.com/agentstate/core/status/etcdstore v0.1.0
	go.etcd.io/etcd/client/v3 v3.6.14
	go.uber.org/goleak v1.3.0
)

require (
	github.com/coreos/go-semver v0.3.1 // indirect
	github.com/coreos/go-systemd/v22 v22.5.0 // indirect
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/golang/protobuf v1.5.4 // indirect
	github.com/grpc-ecosystem/grpc-gateway/v2 v2.26.3 // indirect
	go.etcd.io/etcd/api/v3 v3.6.14 // indirect
	go.etcd.io/etcd/client/pkg/v3 v3.6.14 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	go.uber.org/zap v1.27.0 // indirect
	golang.org/x/net v0.55.0 // indirect
	golang.org/x/sys v0.45.0 // indirect
	golang.org/x/text v0.37.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20260414002931-afd174a4e478 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260414002931-afd174a4e478 // indirect
	google.golang.org/grpc v1.82.1 // indirect
	google.golang.org/protobuf v1.36.11 // indirect
)

replace (
	github.com/agentstate/core => ../../../..
	github.com/agentstate/core/status/etcdstore => ../..
)
