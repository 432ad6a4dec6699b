package status

import "context"

// A Backend keeps one encoded JSON document and serialises read-modify-write
// cycles on it. The file backend (the default) keeps it at the [Store]'s path
// under a sidecar flock; other backends (e.g. etcd, in the nested module
// status/etcdstore) implement the same contract so that code using a Store
// does not change when the backend does.
//
// Implementations must be safe for concurrent use by multiple goroutines.
type Backend interface {
	// Load returns the current encoded document, or (nil, nil) if there is
	// none. It never returns a partially written document, and it must not
	// wait for writers.
	Load(ctx context.Context) ([]byte, error)

	// Update performs one read-modify-write under the backend's mutual
	// exclusion. It calls apply with the current document (nil if there is
	// none). If apply returns an error, nothing is written and Update returns
	// that error unchanged (so errors.Is works on it). If apply returns bytes
	// equal to cur, nothing is written. Otherwise the returned bytes are stored
	// durably before Update returns nil.
	//
	// apply may be called more than once (an optimistic backend re-runs it
	// after a conflict), so it must have no effect other than its return
	// value. A backend may batch concurrent Updates into one durable write
	// (group commit) as long as the outcome equals running them one after
	// another, each apply seeing its predecessors' results and a failing
	// apply dropping only its own change. A backend runs apply, every time,
	// on the goroutine that called Update (see the package doc's
	// Guarantees). If apply panics, the backend releases its exclusion,
	// writes nothing for that call, and the panic propagates to the
	// goroutine that called Update.
	//
	// Update honours ctx while it waits: when ctx ends first it returns an
	// error wrapping ctx.Err().
	Update(ctx context.Context, apply func(cur []byte) ([]byte, error)) error

	// Name identifies the document in errors and logs (a path, an etcd key).
	Name() string
}
