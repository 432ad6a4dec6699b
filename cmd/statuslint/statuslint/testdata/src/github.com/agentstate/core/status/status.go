// Package status is a stub of github.com/agentstate/core/status with the
// names statuslint recognises.
package status

import "context"

type State string

type Status struct {
	State State  `json:"status"`
	Repo  string `json:"repo"`
	Task  string `json:"task"`
	PID   int    `json:"pid,omitempty"`
	Runs  int    `json:"runs"`
}

func (s *Status) Transition(to State, from ...State) error { s.State = to; return nil }

func Mutate(ctx context.Context, path string, fn func(*Status) error) (Status, error) {
	var s Status
	return s, fn(&s)
}

func Read(path string) (Status, error) { return Status{}, nil }

type Store[T any] struct{ path string }

func NewStore[T any](path string) *Store[T] { return &Store[T]{path} }

func (s *Store[T]) Mutate(ctx context.Context, fn func(*T) error) (T, error) {
	var v T
	return v, fn(&v)
}

func (s *Store[T]) Load() (T, error) {
	var v T
	return v, nil
}
