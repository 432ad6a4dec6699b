package status

import (
	"context"
	"errors"
	"fmt"
	"iter"
)

// A Backend keeps one encoded JSON document and serialises read-modify-write
// cycles on it, safe for concurrent use: the file backend (the default) at
// the [Store]'s path, status/etcdstore under a key. Optional methods are
// interfaces ([RemoveBackend], [WatchBackend], [TxBackend]); a Store method
// whose backend lacks one, or Quarantine off the file backend, returns an
// error matching [ErrUnsupported].
type Backend interface {
	// Load returns the current encoded document, or (nil, nil) if there is
	// none. It never returns a partially written document, and it must not
	// wait for writers.
	Load(ctx context.Context) ([]byte, error)

	// Update performs one read-modify-write under the backend's mutual
	// exclusion: it calls apply with the current document (nil if none) and
	// stores the bytes apply returns durably before it returns nil, unless
	// they equal cur. apply follows the package doc's rules for fn (its
	// error and panic write nothing; it may run more than once, on the
	// caller's goroutine); batching follows Group commit; waiting honours ctx.
	Update(ctx context.Context, apply func(cur []byte) ([]byte, error)) error

	// Name identifies the document in errors and logs (a path, an etcd key).
	Name() string
}

// A RemoveBackend is a [Backend] that can remove its document, for
// [Store.Remove].
type RemoveBackend interface {
	Backend
	// Remove removes the document, durably, in the order of the Updates:
	// after every Update that came before it, and every Update after it
	// finds no document. A missing document is an error matching
	// [os.ErrNotExist], and nothing changes.
	Remove(ctx context.Context) error
}

// A WatchBackend is a [Backend] that can follow its document, for
// [Store.Watch].
type WatchBackend interface {
	Backend
	// Watch yields the current encoded document (nothing if there is none),
	// then the document after each change: nil once it is removed, or an
	// error for a state that cannot be read. It may yield a state more than
	// once (the Store reports each change once), but never misses the last
	// one. It ends when ctx ends (quietly), when the loop stops, or after
	// yielding an error that ends the watch (e.g. the directory was
	// removed).
	Watch(ctx context.Context) iter.Seq2[[]byte, error]
}

// ErrUnsupported is matched ([errors.Is]) by the error of a [Store] method
// whose backend lacks the optional method it needs (see [Backend]); the
// error names what is missing. It also matches [errors.ErrUnsupported].
var ErrUnsupported error = unsupportedError{}

type unsupportedError struct{}

func (unsupportedError) Error() string        { return "operation not supported by the backend" }
func (unsupportedError) Is(target error) bool { return target == errors.ErrUnsupported }

// unsupported is the error of a call on a backend that lacks what names
// (e.g. "it is not a status.RemoveBackend").
func unsupported(what string) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, what)
}
