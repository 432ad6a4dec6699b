package status

import (
	"context"
	"slices"
	"time"
)

// A State is the lifecycle state of an agent workspace (the "status" field).
type State string

// The states in use by the agent services.
const (
	Queued         State = "queued"
	Running        State = "running"
	Completed      State = "completed"
	Blocked        State = "blocked"
	Failed         State = "failed"
	Merged         State = "merged"
	ReadyForReview State = "ready-for-review"
	Rejected       State = "rejected"
)

// Final reports whether s ends a task's life: completed, failed, merged or
// rejected. A final state is never overwritten by a [Transition] without an
// explicit from list naming it.
func (s State) Final() bool {
	switch s {
	case Completed, Failed, Merged, Rejected:
		return true
	}
	return false
}

// Status is the workspace status document kept in
// <workspace-root>/<org>/<repo>/<task>/status.json; its State field is the
// JSON member "status".
type Status struct {
	State     State     `json:"status"` // the JSON member "status"
	Agent     string    `json:"agent"`
	Repo      string    `json:"repo"`
	Org       string    `json:"org,omitempty"`
	Task      string    `json:"task"`
	Branch    string    `json:"branch,omitempty"`
	Issue     int       `json:"issue,omitempty"`
	PID       int       `json:"pid,omitempty"`
	ProcessID string    `json:"process_id,omitempty"`
	StartedAt time.Time `json:"started_at"`
	UpdatedAt time.Time `json:"updated_at"`
	Question  string    `json:"question,omitempty"`
	Runs      int       `json:"runs"`
	PRURL     string    `json:"pr_url,omitempty"`
	Note      string    `json:"note,omitempty"`
	Runtime   string    `json:"runtime,omitempty"`
}

// Transition (the method; the function [Transition] wraps it for Mutate)
// moves s to state to if its current state is one of from; with no from
// states, it allows any state that is not Final. Otherwise it leaves s
// unchanged and returns a *ConflictError (errors.Is(err, [ErrConflict])).
//
// Use it inside a [Mutate] function, where the check and the change happen
// under the document's lock.
func (s *Status) Transition(to State, from ...State) error {
	ok := slices.Contains(from, s.State)
	if len(from) == 0 {
		ok = !s.State.Final()
	}
	if !ok {
		return &ConflictError{Current: s.State, Want: to, From: slices.Clone(from)}
	}
	s.State = to
	return nil
}

// Transition (the function) returns a [Mutate] function that calls the
// method [Status.Transition]: s.Transition(to, from...).
//
//	st, err := status.Mutate(ctx, path, status.Transition(status.Running, status.Queued))
func Transition(to State, from ...State) func(*Status) error {
	from = slices.Clone(from)
	return func(s *Status) error { return s.Transition(to, from...) }
}

// Mutate runs fn on the status document at path under the document's lock
// and commits the result durably, stamping UpdatedAt; see [Store.Mutate].
func Mutate(ctx context.Context, path string, fn func(*Status) error) (Status, error) {
	return NewStore[Status](path).Mutate(ctx, fn)
}

// Load returns the status document at path without taking the lock; see
// [Store.Load].
func Load(ctx context.Context, path string) (Status, error) {
	return NewStore[Status](path).Load(ctx)
}

// Stamp sets UpdatedAt to now (see [Stamper]).
func (s *Status) Stamp(now time.Time) { s.UpdatedAt = now }
