package etcdstore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentstate/core/status"
)

// DefaultPrefix is the key prefix used unless [WithPrefix] says otherwise.
const DefaultPrefix = "/agentstate/status"

// ErrClosed is matched ([errors.Is]) by errors returned after the client was
// closed.
var ErrClosed = errors.New("etcdstore: client closed")

// ErrOutsideRoot is matched ([errors.Is]) by the errors for a document or
// directory that is not inside the root set by [WithRoot].
var ErrOutsideRoot = errors.New("path not inside the root")

// errNilClient is returned by every operation of a [Backend] or [Watch] made
// with a nil client (instead of a nil-pointer panic).
var errNilClient = errors.New("etcdstore: nil *clientv3.Client")

// errNilArg is returned for a nil context or apply function (instead of a
// nil-pointer panic).
var errNilArg = errors.New("nil argument")

// An Option configures the backend ([With], [New], [Key], [Watch]).
type Option func(*config)

type config struct {
	prefix     string
	root       string // absolute and clean; "" for absolute-path keys
	rootErr    error  // the root could not be made absolute
	minBackoff time.Duration
	maxBackoff time.Duration
	markerTTL  time.Duration
	turnTTL    time.Duration
	noTurns    bool // tests and benchmarks: contend optimistically only
}

func newConfig(opts []Option) config {
	c := config{
		prefix:     DefaultPrefix,
		minBackoff: time.Millisecond,
		maxBackoff: 100 * time.Millisecond,
		markerTTL:  2 * time.Minute,
		turnTTL:    10 * time.Second,
	}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// WithPrefix sets the key prefix (trailing slashes are dropped; "" puts
// documents at their bare paths).
func WithPrefix(prefix string) Option {
	return func(c *config) { c.prefix = strings.TrimRight(prefix, "/") }
}

// WithRoot names documents by their path relative to root (see Keys in the
// package doc), so that hosts which mount one workspace at different local
// paths share its documents. A relative root is made absolute against the
// working directory when the option is applied; "" restores absolute-path
// keys.
func WithRoot(root string) Option {
	return func(c *config) {
		c.root, c.rootErr = "", nil
		if root == "" {
			return
		}
		abs, err := filepath.Abs(root)
		if err != nil {
			c.rootErr = fmt.Errorf("root %s: %w", root, err)
			return
		}
		c.root = abs
	}
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

// WithTurnTTL sets the TTL of the lease that holds this process's places in
// the queues of contended keys (default 10s, rounded up to whole seconds,
// at least 1s; etcd may raise it to its minimum, 1.5 election timeouts). A
// process that dies or is cut off while it holds or awaits a turn delays
// the other writers of that key by at most about this long.
func WithTurnTTL(d time.Duration) Option {
	return func(c *config) { c.turnTTL = max(d, time.Second) }
}

// Key returns the etcd key of the document at path (see Keys in the package
// doc). With [WithRoot], a path that is not inside the root is an error
// matching [ErrOutsideRoot].
func Key(path string, opts ...Option) (string, error) {
	c := newConfig(opts)
	k, err := c.key(path)
	if err != nil {
		return "", fmt.Errorf("etcdstore: key %s: %w", path, err)
	}
	return k, nil
}

// key is the document's key: the prefix and its name (see name).
func (c *config) key(path string) (string, error) {
	n, err := c.name(path)
	if err != nil {
		return "", err
	}
	if n == "/" && c.root != "" {
		return "", fmt.Errorf("%w: it is the root", ErrOutsideRoot)
	}
	return c.prefix + n, nil
}

// dirKey is the key prefix of every document under dir.
func (c *config) dirKey(dir string) (string, error) {
	n, err := c.name(dir)
	if err != nil {
		return "", err
	}
	return c.prefix + strings.TrimSuffix(n, "/") + "/", nil
}

// name is the document's name in etcd: its cleaned absolute path with
// forward slashes, or with a root its path relative to the root; always
// starting with "/".
func (c *config) name(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = filepath.Clean(path)
	}
	if c.rootErr != nil {
		return "", c.rootErr
	}
	if c.root != "" {
		// Lexical, like the rest of the mapping: symbolic links are not
		// resolved.
		rel, err := filepath.Rel(c.root, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", fmt.Errorf("%w %s", ErrOutsideRoot, c.root)
		}
		if rel == "." {
			return "/", nil
		}
		abs = rel
	}
	n := filepath.ToSlash(abs)
	if !strings.HasPrefix(n, "/") {
		n = "/" + n
	}
	return n, nil
}

// path is the inverse of name for [Watch] events: the path on this host of
// the document named n.
func (c *config) path(n string) string {
	if c.root == "" {
		return n
	}
	return filepath.Join(c.root, filepath.FromSlash(strings.TrimPrefix(n, "/")))
}

// markerPrefix holds the commit markers. Document keys are prefix+"/...", so
// markers never fall under a document key or a [WatchDir] prefix.
func (c *config) markerPrefix() string { return c.prefix + "#txn/" }

// turnPrefix holds the queue of turns of the document with key key. The
// name's length makes it unambiguous: no key's queue lies under another's.
func (c *config) turnPrefix(key string) string {
	n := key[len(c.prefix):]
	return c.prefix + "#turn/" + strconv.Itoa(len(n)) + n + "/"
}

// New returns the [Backend] for the document at path. Stores should use [With];
// New is for code that drives a [status.Backend] directly.
func New(cli *clientv3.Client, path string, opts ...Option) *Backend {
	return newShared(cli, newConfig(opts)).open(path)
}

// shared is what the Backends made by one [With] have in common.
type shared struct {
	tag       string // names this With's entries in queues of turns
	cli       *clientv3.Client
	cfg       config
	lease     *leaseCache // for commit markers
	turnLease *turnLease  // for queue entries
	hot       hotKeys
	queues    queues
}

func newShared(cli *clientv3.Client, cfg config) *shared {
	return &shared{tag: rand.Text(), cli: cli, cfg: cfg, lease: newLeaseCache(cfg.markerTTL), turnLease: newTurnLease(cfg.turnTTL)}
}

func (s *shared) open(path string) *Backend {
	key, err := s.cfg.key(path)
	if err != nil {
		return &Backend{shared: s, path: path, err: err}
	}
	return &Backend{shared: s, path: path, key: key, turns: s.cfg.turnPrefix(key)}
}

// A Backend is one document in etcd. It implements [status.Backend] and is
// safe for concurrent use.
type Backend struct {
	*shared
	path  string
	key   string
	turns string // prefix of the key's queue of turns
	err   error  // the path has no key (outside the root): every call fails
}

var _ status.Backend = (*Backend)(nil)

// Key is the document's etcd key ("" if the path has none: then every call
// returns an error matching [ErrOutsideRoot]).
func (b *Backend) Key() string { return b.key }

// Name is the path the [Backend] was opened with, as given: the Store reports
// it in errors (e.g. CorruptError.Path), as the file backend does. Errors
// from the Backend itself name the key.
func (b *Backend) Name() string { return b.path }

// Load returns the stored document (nil, nil if the key does not exist)
// using a linearizable read: it sees every Update that returned before it
// started.
func (b *Backend) Load(ctx context.Context) ([]byte, error) {
	if ctx == nil {
		return nil, fmt.Errorf("etcdstore: load %s: %w: context", b.id(), errNilArg)
	}
	if err := b.check("load", ctx); err != nil {
		return nil, err
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
// matches ctx.Err(); when the client is closed it matches [ErrClosed].
func (b *Backend) wrap(op string, ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil && !errors.Is(err, ctx.Err()):
		err = fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
	case b.closed():
		err = fmt.Errorf("%w: %v", ErrClosed, err)
	}
	return fmt.Errorf("etcdstore: %s %s: %w", op, b.id(), err)
}

// id names the document in the [Backend]'s own errors: its key, or its path
// if it has no key.
func (b *Backend) id() string {
	if b.key == "" {
		return b.path
	}
	return b.key
}

// check reports why a call cannot start: a path without a key, a nil
// client, or a ctx that has ended.
func (b *Backend) check(op string, ctx context.Context) error {
	switch {
	case b.err != nil:
		return fmt.Errorf("etcdstore: %s %s: %w", op, b.path, b.err)
	case b.cli == nil:
		return b.wrap(op, ctx, errNilClient)
	case ctx.Err() != nil:
		return b.wrap(op, ctx, ctx.Err())
	}
	return nil
}

func (s *shared) closed() bool { return s.cli != nil && s.cli.Ctx().Err() != nil }
