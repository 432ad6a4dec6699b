package etcdstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/etcdstore"
)

// The same code as with the file backend; only the option differs. (Needs
// an etcd server, so it is compiled but not run.)
func ExampleWith() {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"localhost:2379"}, DialTimeout: 5 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer cli.Close()

	type Doc struct {
		Runs  int    `json:"runs"`
		Owner string `json:"owner,omitempty"`
	}
	// One With per process; every host names its own mount of the
	// workspace as the root, so all hosts reach the same keys.
	opt := etcdstore.With(cli, etcdstore.WithRoot("/srv/agents"))
	st := status.NewStore[Doc]("/srv/agents/ws-17/status.json", opt)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	doc, err := st.Mutate(ctx, func(d *Doc) error {
		d.Runs++
		return nil
	})
	var unknown *etcdstore.OutcomeError
	switch {
	case errors.As(err, &unknown):
		// The commit was sent but its outcome could not be settled before
		// ctx ended. It was applied at most once; Resolve says which.
		committed, rerr := etcdstore.Resolve(context.Background(), cli, unknown)
		fmt.Println("committed:", committed, rerr)
	case err != nil:
		log.Fatal(err) // nothing was written
	default:
		fmt.Println("runs:", doc.Runs)
	}
}

// A status tool follows documents instead of polling them. (Needs an etcd
// server, so it is compiled but not run.)
func ExampleWatchDir() {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"localhost:2379"}, DialTimeout: 5 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // ends the watch and releases its stream

	for ev, err := range etcdstore.WatchDir(ctx, cli, "/srv/agents") {
		if err != nil {
			log.Fatal(err) // e.g. compacted: start again
		}
		if ev.Deleted {
			fmt.Println(ev.Path, "deleted")
			continue
		}
		var st status.Status
		if err := json.Unmarshal(ev.Value, &st); err != nil {
			fmt.Println(ev.Path, "corrupt:", err)
			continue
		}
		fmt.Println(ev.Path, ev.Revision, st.State)
	}
}

func ExampleKey() {
	fmt.Println(etcdstore.Key("/srv/agents/ws-17/./status.json"))
	fmt.Println(etcdstore.Key("/srv/agents/ws-17/status.json", etcdstore.WithPrefix("/fleet-b/")))
	// Hosts that mount the workspace at different paths name it by its root.
	fmt.Println(etcdstore.Key("/srv/agents/ws-17/status.json", etcdstore.WithRoot("/srv/agents")))
	fmt.Println(etcdstore.Key("/home/agent/ws/ws-17/status.json", etcdstore.WithRoot("/home/agent/ws")))
	_, err := etcdstore.Key("/tmp/status.json", etcdstore.WithRoot("/srv/agents"))
	fmt.Println(errors.Is(err, etcdstore.ErrOutsideRoot))
	// Output:
	// /agentstate/status/srv/agents/ws-17/status.json <nil>
	// /fleet-b/srv/agents/ws-17/status.json <nil>
	// /agentstate/status/ws-17/status.json <nil>
	// /agentstate/status/ws-17/status.json <nil>
	// true
}
