package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentstate/core/status"
)

// DefaultPrefix is the key prefix used unless WithPrefix says otherwise.
const DefaultPrefix = "/agentstate/status"

// ErrClosed is matched (errors.Is) by errors returned after the client was
// closed.
var ErrClosed = errors.New("etcdstore: client closed")

// errNilClient is returned by every operation of a Backend or Watch made
// with a nil client (instead of a nil-pointer panic).
var errNilClient = errors.New("etcdstore: nil *clientv3.Client")

// errNilArg is returned for a nil context or apply function (instead of a
// nil-pointer panic).
var errNilArg = errors.New("nil argument")

// An Option configures the backend (With, New, Key, Watch).
type Option func(*config)

type config struct {
	prefix     string
	minBackoff time.Duration
	maxBackoff time.Duration
	markerTTL  time.Duration
}

func newConfig(opts []Option) config {
	c := config{
		prefix:     DefaultPrefix,
		minBackoff: time.Millisecond,
		maxBackoff: 100 * time.Millisecond,
		markerTTL:  2 * time.Minute,
	}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithPrefix sets the key prefix (trailing slashes are dropped; "" puts
// documents at their bare absolute paths).
func WithPrefix(prefix string) Option {
	return func(c *config) { c.prefix = strings.TrimRight(prefix, "/") }
}

// WithBackoff sets the bounds of the jittered exponential backoff between
// retries (defaults 1ms and 100ms). Values ≤ 0 keep the default.
func WithBackoff(minDelay, maxDelay time.Duration) Option {
	return func(c *config) {
		if minDelay > 0 {
			c.minBackoff = minDelay
		}
		if maxDelay > 0 {
			c.maxBackoff = maxDelay
		}
		if c.maxBackoff < c.minBackoff {
			c.maxBackoff = c.minBackoff
		}
	}
}

// WithMarkerTTL sets how long commit markers live (default 2 minutes,
// rounded up to whole seconds, at least 10s). An ambiguous commit can be
// resolved for about half of it; longer means more resilience to long
// outages and more marker keys kept in etcd.
func WithMarkerTTL(d time.Duration) Option {
	return func(c *config) { c.markerTTL = max(d, 10*time.Second) }
}

// Key returns the etcd key of the document at path (see the package doc).
func Key(path string, opts ...Option) string {
	c := newConfig(opts)
	return c.key(path)
}

func (c *config) key(path string) string {
	return c.prefix + slashPath(path)
}

// markerPrefix holds the commit markers. Document keys are prefix+"/...", so
// markers never fall under a document key or a WatchDir prefix.
func (c *config) markerPrefix() string { return c.prefix + "#txn/" }

func slashPath(path string) string {
	p, err := filepath.Abs(path)
	if err != nil {
		p = filepath.Clean(path)
	}
	p = filepath.ToSlash(p)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return p
}

// New returns the Backend for the document at path. Stores should use With;
// New is for code that drives a status.Backend directly.
func New(cli *clientv3.Client, path string, opts ...Option) *Backend {
	return newShared(cli, newConfig(opts)).open(path)
}

// shared is what the Backends made by one With have in common.
type shared struct {
	cli    *clientv3.Client
	cfg    config
	lease  *leaseCache
	queues queues
}

func newShared(cli *clientv3.Client, cfg config) *shared {
	return &shared{cli: cli, cfg: cfg, lease: newLeaseCache(cfg.markerTTL)}
}

func (s *shared) open(path string) *Backend {
	return &Backend{shared: s, path: path, key: s.cfg.key(path)}
}

// A Backend is one document in etcd. It implements status.Backend and is
// safe for concurrent use.
type Backend struct {
	*shared
	path string
	key  string
}

var _ status.Backend = (*Backend)(nil)

// Key is the document's etcd key.
func (b *Backend) Key() string { return b.key }

// Name is the path the Backend was opened with, as given: the Store reports
// it in errors (e.g. CorruptError.Path), as the file backend does. Errors
// from the Backend itself name the key.
func (b *Backend) Name() string { return b.path }

// Load returns the stored document (nil, nil if the key does not exist)
// using a linearizable read: it sees every Update that returned before it
// started.
func (b *Backend) Load(ctx context.Context) ([]byte, error) {
	if ctx == nil {
		return nil, fmt.Errorf("etcdstore: load %s: %w: context", b.key, errNilArg)
	}
	if b.cli == nil {
		return nil, b.wrap("load", ctx, errNilClient)
	}
	resp, err := b.cli.Get(ctx, b.key)
	if err != nil {
		return nil, b.wrap("load", ctx, err)
	}
	v, _ := value(resp.Kvs)
	return v, nil
}

// value returns the value of the first kv and its ModRevision; (nil, 0) if
// there is none. A stored empty value is returned as empty, not nil: for
// the Store an empty document is corrupt while a missing one is zero.
func value(kvs []*mvccpb.KeyValue) ([]byte, int64) {
	if len(kvs) == 0 {
		return nil, 0
	}
	v := kvs[0].Value
	if v == nil {
		v = []byte{}
	}
	return v, kvs[0].ModRevision
}

// wrap adds the operation and key to err. When ctx has ended the result
// matches ctx.Err(); when the client is closed it matches ErrClosed.
func (b *Backend) wrap(op string, ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil && !errors.Is(err, ctx.Err()):
		err = fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
	case b.closed():
		err = fmt.Errorf("%w: %v", ErrClosed, err)
	}
	return fmt.Errorf("etcdstore: %s %s: %w", op, b.key, err)
}

func (s *shared) closed() bool { return s.cli != nil && s.cli.Ctx().Err() != nil }
