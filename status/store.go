package status

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/agentstate/core/status/internal/filestore"
)

// An Option configures a [Store].
type Option func(*options)

type options struct {
	backend func(path string) Backend
	perm    os.FileMode
	maxSize int64
}

// WithBackend replaces the default file backend: open is called once per
// [NewStore] with the store's path (or key) and returns the [Backend] that keeps
// the document.
func WithBackend(open func(path string) Backend) Option {
	return func(o *options) { o.backend = open }
}

// WithPerm sets the permission bits of a document file that the file backend
// creates (default 0644, minus umask). An existing file keeps its bits.
func WithPerm(perm os.FileMode) Option {
	return func(o *options) { o.perm = perm.Perm() }
}

// LockSuffix (".lock") is appended to a document's path to name its lock
// file.
const LockSuffix = filestore.LockSuffix

// DefaultMaxSize is the size of the largest document file that the file
// backend reads (16 MiB; a status document is about 1 KiB); see [WithMaxSize].
const DefaultMaxSize = 16 << 20

// WithMaxSize sets the size in bytes of the largest document file that the
// file backend reads ([DefaultMaxSize] by default; n <= 0: no limit). Each
// call applies its own Store's limit and [WithPerm]: concurrent calls share
// a batch only with calls of the same options.
func WithMaxSize(n int64) Option {
	return func(o *options) { o.maxSize = n }
}

// A Stamper is a document type that records when it last changed, such as
// *Status (updated_at); the package doc's Guarantees say when it is stamped.
type Stamper interface{ Stamp(now time.Time) }

// A Store keeps one JSON document of type T and serialises read-modify-write
// cycles on it across goroutines and, with the file backend, processes.
// A Store is cheap (create one per call if convenient) and safe for
// concurrent use; Stores for the same path share one lock.
type Store[T any] struct {
	store
	codec *codec
}

// A store is what a Store of any type holds: its backend, and the same
// document as a file when it is kept by the file backend.
type store struct {
	b    Backend
	file *filestore.Doc // b, or nil for another backend
}

// storeFor returns the store of the document at path.
func storeFor(path string, o options) store {
	if o.backend != nil {
		return store{b: o.backend(path)}
	}
	f := filestore.New(path, o.perm, o.maxSize)
	return store{b: f, file: f}
}

// NewStore returns a [Store] for the document at path, a file kept by the
// file backend unless [WithBackend] selects another.
func NewStore[T any](path string, opts ...Option) *Store[T] {
	return &Store[T]{store: storeFor(path, collect(opts)), codec: codecFor[T]()}
}

// Mutate runs fn on the current document under the document's lock and
// commits the result durably, returning the document as committed. A
// missing document is presented to fn as the zero T. What is written, and
// when nothing is (fn's error or panic, no change, a corrupt document, ctx),
// is stated once in the package doc's Guarantees.
func (s *Store[T]) Mutate(ctx context.Context, fn func(*T) error) (T, error) {
	var result T
	switch {
	case fn == nil:
		return result, fmt.Errorf("status: mutate %s: %w", s.b.Name(), errNilFunc)
	case ctx == nil:
		return result, fmt.Errorf("status: mutate %s: %w", s.b.Name(), errNilContext)
	}
	err := s.b.Update(ctx, func(cur []byte) ([]byte, error) {
		d, err := s.value(cur)
		if err != nil {
			return nil, err
		}
		if err := fn(&d.v); err != nil {
			return nil, err
		}
		out, err := d.encode(cur, utcNow)
		if err != nil {
			return nil, err
		}
		result = d.v
		return out, nil
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return result, nil
}

// collect applies opts to the defaults.
func collect(opts []Option) options {
	o := options{perm: 0o644, maxSize: DefaultMaxSize}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

// current decodes cur and encodes it compactly (the "before" of no-change
// detection), or takes both from the codec's record of the last encoding.
func (s *Store[T]) current(cur []byte) (v T, unknown map[string]json.RawMessage, compact []byte, err error) {
	if v, unknown, compact, ok := lookup[T](s.codec, cur); ok {
		return v, unknown, compact, nil
	}
	v, unknown, err = decode[T](s.codec, s.b.Name(), cur)
	if err != nil {
		return v, nil, nil, err
	}
	if compact, err = s.codec.Marshal(&v); err != nil {
		return v, nil, nil, fmt.Errorf("status: encode %s: %w", s.b.Name(), err)
	}
	return v, unknown, compact, nil
}

// Load returns the current document without taking the lock: the zero T if
// there is none. ctx bounds the read for backends that may block.
func (s *Store[T]) Load(ctx context.Context) (T, error) {
	return s.load(ctx, false)
}

// LoadExisting is [Store.Load] for a caller that must tell a missing
// document from an empty one: a missing document is an error matching
// [os.ErrNotExist], not the zero T.
func (s *Store[T]) LoadExisting(ctx context.Context) (T, error) {
	return s.load(ctx, true)
}

func (s *Store[T]) load(ctx context.Context, mustExist bool) (T, error) {
	var zero T
	if ctx == nil {
		return zero, pathError("load", s.b.Name(), errNilContext)
	}
	cur, err := s.b.Load(ctx)
	if err != nil {
		return zero, err
	}
	if cur == nil && mustExist {
		return zero, pathError("load", s.b.Name(), os.ErrNotExist)
	}
	v, _, err := decode[T](s.codec, s.b.Name(), cur)
	if err != nil {
		return zero, err
	}
	return v, nil
}

// Name returns the document's name as its backend reports it (the file
// path for the file backend).
func (s *Store[T]) Name() string { return s.b.Name() }

var (
	errNilFunc    = errors.New("nil mutate function")
	errNilContext = errors.New("nil context")
)

// pathError reports a failed operation on the document at path, naming
// path once (see [filestore.Error]).
func pathError(op, path string, err error) error { return filestore.Error(op, path, err) }
