// Package etcdtest runs a real single-member etcd server inside the test
// process, on loopback with ephemeral ports and a temporary data directory.
//
// A Server can be stopped and started again on the same URLs and data
// directory, which is what the fault tests need: clients keep their endpoint
// and see the server go away and come back with its data intact.
package etcdtest

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// Options tune a Server.
type Options struct {
	// Fsync keeps etcd's fsyncs. Tests leave it off for speed (a stopped
	// embedded server is shut down cleanly, so nothing is lost); benchmarks
	// turn it on so that etcd pays for durability like the file backend does.
	Fsync bool
}

// A Server is one embedded etcd member.
type Server struct {
	dir     string
	opts    Options
	client  url.URL
	peer    url.URL
	mu      sync.Mutex
	running *embed.Etcd
}

// Start starts a server whose data lives in dir (normally t.TempDir()).
// Ports are chosen by the kernel once and then kept for restarts.
func Start(dir string, opts Options) (*Server, error) {
	var lastErr error
	// Reserving a port and releasing it for etcd leaves a small window in
	// which another process may take it; try a few fresh pairs.
	for range 5 {
		cp, err := freePort()
		if err != nil {
			return nil, err
		}
		pp, err := freePort()
		if err != nil {
			return nil, err
		}
		s := &Server{
			dir:    dir,
			opts:   opts,
			client: url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", cp)},
			peer:   url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", pp)},
		}
		if lastErr = s.Restart(); lastErr == nil {
			return s, nil
		}
	}
	return nil, lastErr
}

// Endpoint is the client URL (http://127.0.0.1:port); it does not change
// across restarts.
func (s *Server) Endpoint() string { return s.client.String() }

// Dir is the server's data directory.
func (s *Server) Dir() string { return s.dir }

// Restart starts the server again on the same URLs and data directory. It
// is an error to call it while the server runs.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running != nil {
		return errors.New("etcdtest: server already running")
	}
	cfg := embed.NewConfig()
	cfg.Name = "etcdtest"
	cfg.Dir = s.dir
	cfg.ListenClientUrls = []url.URL{s.client}
	cfg.AdvertiseClientUrls = []url.URL{s.client}
	cfg.ListenPeerUrls = []url.URL{s.peer}
	cfg.AdvertisePeerUrls = []url.URL{s.peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.UnsafeNoFsync = !s.opts.Fsync
	// A single member elects itself at once; short ticks make a restart
	// ready quickly and shorten the request timeout that bounds a graceful
	// stop with RPCs in flight.
	cfg.TickMs = 10
	cfg.ElectionMs = 100
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return fmt.Errorf("etcdtest: start: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return fmt.Errorf("etcdtest: start: %w", err)
	case <-time.After(60 * time.Second):
		e.Close()
		return errors.New("etcdtest: server not ready after 60s")
	}
	s.running = e
	return nil
}

// Stop stops the server (in-flight requests get up to etcd's request
// timeout to finish) and waits until it has released its ports and files.
// Stopping a stopped server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running == nil {
		return
	}
	s.running.Close()
	<-s.running.Server.StopNotify()
	s.running = nil
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	_, port, err := net.SplitHostPort(l.Addr().String())
	return port, err
}
