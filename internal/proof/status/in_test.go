package status_test

import "github.com/agentstate/core/status"

// inTx is [status.Store.In] for a test whose s is one of tx's documents; a
// misuse is a bug of the test, and panics.
func inTx[T any](s *status.Store[T], tx *status.Tx) *T {
	v, err := s.In(tx)
	if err != nil {
		panic(err)
	}
	return v
}
