// Package runner is svc/runner migrated: the runner keeps its narrower
// struct, through a Store of its own type (fields it does not declare are
// kept; its Stamp method keeps updated_at current), and agentic's
// UpdateStatus from another package. Nothing here may be reported.
package runner

import (
	"context"
	"errors"
	"os/exec"
	"time"

	statefile "github.com/agentstate/core/status"

	"example.com/core"

	"svcfixed/agentic"
)

type WorkspaceStatus struct {
	Status    string    `json:"status"`
	Repo      string    `json:"repo"`
	Task      string    `json:"task"`
	PID       int       `json:"pid,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
	Runs      int       `json:"runs"`
}

// Stamp makes a Store of this type set updated_at on every change.
func (st *WorkspaceStatus) Stamp(now time.Time) { st.UpdatedAt = now }

func store(dir string) *statefile.Store[WorkspaceStatus] {
	return statefile.NewStore[WorkspaceStatus](core.JoinPath(dir, "status.json"))
}

var errNotQueued = errors.New("not queued")

func drainQueue(ctx context.Context, dirs []string) {
	for _, dir := range dirs {
		_, _ = store(dir).Mutate(ctx, func(st *WorkspaceStatus) error {
			if st.Status != "queued" {
				return errNotQueued
			}
			st.Status = "running"
			return nil
		})
	}
}

func retry(ctx context.Context, dir string, backoff time.Duration) error {
	st, err := store(dir).Mutate(ctx, func(st *WorkspaceStatus) error {
		if st.Status != "failed" {
			return errNotQueued
		}
		st.Status = "running"
		st.Runs++
		return nil
	})
	if err != nil {
		return err
	}
	time.Sleep(backoff)
	if err := exec.Command("agent", "--task", st.Task).Start(); err != nil {
		_, giveBack := store(dir).Mutate(ctx, func(st *WorkspaceStatus) error {
			if st.Status != "running" {
				return errNotQueued
			}
			st.Status = "failed"
			return nil
		})
		return errors.Join(err, giveBack)
	}
	return nil
}

func requeue(ctx context.Context, dir string) error {
	return agentic.UpdateStatus(ctx, dir, statefile.Transition(statefile.Queued, statefile.Failed))
}

// Copying one workspace's status into a new one is a create.
func copyStatus(ctx context.Context, from, to string) error {
	st, err := store(from).Load(ctx)
	if err != nil {
		return err
	}
	_, err = store(to).Create(ctx, st)
	return err
}
