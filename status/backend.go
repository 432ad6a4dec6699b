package status

import "context"

// A Backend keeps one encoded JSON document and serialises read-modify-write
// cycles on it, safe for concurrent use. The file backend (the default) keeps
// it at the [Store]'s path; others (status/etcdstore) implement the same
// contract, so code using a Store does not change with the backend.
type Backend interface {
	// Load returns the current encoded document, or (nil, nil) if there is
	// none. It never returns a partially written document, and it must not
	// wait for writers.
	Load(ctx context.Context) ([]byte, error)

	// Update performs one read-modify-write under the backend's mutual
	// exclusion: it calls apply with the current document (nil if none) and
	// stores the bytes apply returns durably before it returns nil. apply is
	// fn as the package doc states it: its error is returned unchanged and
	// its panic propagates, with nothing written; bytes equal to cur are not
	// written; it runs on the caller's goroutine, perhaps more than once (a
	// backend that retries), so it has no other effect; concurrent Updates
	// may batch only as Group commit says; waiting honours ctx.
	Update(ctx context.Context, apply func(cur []byte) ([]byte, error)) error

	// Name identifies the document in errors and logs (a path, an etcd key).
	Name() string
}
