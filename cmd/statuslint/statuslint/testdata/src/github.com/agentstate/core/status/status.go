// Package status is a stub of github.com/agentstate/core/status with the
// API that the test data uses.
package status

import (
	"context"
	"errors"
	"os"
	"time"
)

type State string

const (
	Queued    State = "queued"
	Running   State = "running"
	Completed State = "completed"
	Failed    State = "failed"
)

type Status struct {
	State     State     `json:"status"`
	Repo      string    `json:"repo"`
	Task      string    `json:"task"`
	PID       int       `json:"pid,omitempty"`
	ProcessID string    `json:"process_id,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
	Runs      int       `json:"runs"`
}

var ErrConflict = errors.New("state conflict")

func (s *Status) Transition(to State, from ...State) error { s.State = to; return nil }

func (s *Status) Stamp(now time.Time) { s.UpdatedAt = now }

func Transition(to State, from ...State) func(*Status) error {
	return func(s *Status) error { return s.Transition(to, from...) }
}

func Mutate(ctx context.Context, path string, fn func(*Status) error) (Status, error) {
	var s Status
	return s, fn(&s)
}

func Create(ctx context.Context, path string, st Status) (Status, error) { return st, os.ErrExist }

func Load(ctx context.Context, path string) (Status, error) { return Status{}, nil }

type Store[T any] struct{ path string }

func NewStore[T any](path string) *Store[T] { return &Store[T]{path} }

func (s *Store[T]) Mutate(ctx context.Context, fn func(*T) error) (T, error) {
	var v T
	return v, fn(&v)
}

func (s *Store[T]) Create(ctx context.Context, v T) (T, error) { return v, os.ErrExist }

func (s *Store[T]) Load(ctx context.Context) (T, error) {
	var v T
	return v, nil
}
