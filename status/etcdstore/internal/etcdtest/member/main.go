//go:build !race

// Command member runs one etcd member (etcd's embed package) for the tests
// of status/etcdstore; package etcdtest builds and starts it. It is a
// separate program, not a mode of the test binaries, so that the tests of
// etcdstore do not import etcd's server, whose dependencies would otherwise
// be recorded in the go.sum of every module that imports etcdstore.
//
// It prints "ready" on stdout once the member serves clients, and stops
// cleanly when its stdin is closed (which is also what happens when the
// test process dies).
//
// It is built without the race detector, which would slow etcd's server
// (not the code under test) down: so the -race test build of the module
// (go test -race ./...) leaves it out rather than compile etcd's server a
// second time, and make test builds it once, with go build, for all the
// test binaries (ETCDTEST_MEMBER: package etcdtest).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

func main() {
	var (
		name     = flag.String("name", "m0", "member name")
		dir      = flag.String("dir", "", "data directory")
		client   = flag.String("client", "", "client URL")
		peer     = flag.String("peer", "", "peer URL")
		cluster  = flag.String("cluster", "", "initial cluster (name=peerURL,...)")
		fsync    = flag.Bool("fsync", false, "fsync the WAL and the backend")
		tickMs   = flag.Uint("tick-ms", 10, "heartbeat interval")
		electMs  = flag.Uint("election-ms", 100, "election timeout")
		stateArg = flag.String("state", "new", "initial cluster state")
	)
	flag.Parse()
	if err := run(*name, *dir, *client, *peer, *cluster, *stateArg, *fsync, *tickMs, *electMs); err != nil {
		fmt.Fprintln(os.Stderr, "member:", err)
		os.Exit(1)
	}
}

func run(name, dir, client, peer, cluster, state string, fsync bool, tickMs, electMs uint) error {
	cu, err := url.Parse(client)
	if err != nil {
		return err
	}
	pu, err := url.Parse(peer)
	if err != nil {
		return err
	}
	cfg := embed.NewConfig()
	cfg.Name = name
	cfg.Dir = dir
	cfg.ListenClientUrls = []url.URL{*cu}
	cfg.AdvertiseClientUrls = []url.URL{*cu}
	cfg.ListenPeerUrls = []url.URL{*pu}
	cfg.AdvertisePeerUrls = []url.URL{*pu}
	cfg.InitialCluster = cluster
	cfg.ClusterState = state
	cfg.InitialClusterToken = "etcdtest"
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.UnsafeNoFsync = !fsync
	cfg.TickMs = tickMs
	cfg.ElectionMs = electMs
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return err
	}
	defer e.Close()
	stdinClosed := make(chan struct{})
	go func() {
		io.Copy(io.Discard, bufio.NewReader(os.Stdin))
		close(stdinClosed)
	}()
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		return err
	case <-stdinClosed:
		return nil
	case <-time.After(2 * time.Minute):
		return fmt.Errorf("not ready after 2 minutes")
	}
	fmt.Println("ready", uint64(e.Server.MemberID()))
	select {
	case err := <-e.Err():
		return err
	case <-stdinClosed:
		return nil
	}
}
