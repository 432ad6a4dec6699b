package status

import "context"

// Remove removes the status document at path and its lock file, under the
// lock; see [Store.Remove].
func Remove(ctx context.Context, path string) error {
	return NewStore[Status](path).Remove(ctx)
}

// Remove removes the document and then its lock file, under the lock and
// durably; a missing document is [os.ErrNotExist]. A Mutate after it starts
// from the zero T. Transactions a crash left pending on the document are
// completed first (docs/PROTOCOL.md, Removing a document). A backend that is
// not a [RemoveBackend] returns an error matching [ErrUnsupported].
func (s *Store[T]) Remove(ctx context.Context) error {
	if ctx == nil {
		return pathError("remove", s.b.Name(), errNilContext)
	}
	b, ok := s.b.(RemoveBackend)
	if !ok {
		return pathError("remove", s.b.Name(), unsupported("it is not a status.RemoveBackend"))
	}
	return b.Remove(ctx)
}
