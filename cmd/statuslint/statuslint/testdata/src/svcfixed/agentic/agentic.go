// Package agentic is svc/agentic migrated as docs/MIGRATION.md says:
// nothing here may be reported. Every read-modify-write is one Mutate;
// ReadStatusResult stays for readers. The package keeps its variables
// named fs and status, so the module's packages are imported under other
// names.
package agentic

import (
	"context"
	"errors"
	"os/exec"
	"strconv"
	"time"

	"example.com/core"

	corefs "github.com/agentstate/core/fs"
	statefile "github.com/agentstate/core/status"
)

var fs = (&core.Fs{}).NewUnrestricted()

// status counts the agents this process started.
var status = map[string]int{}

type WorkspaceStatus struct {
	Status    string    `json:"status"`
	Repo      string    `json:"repo"`
	Task      string    `json:"task"`
	PID       int       `json:"pid,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
	Runs      int       `json:"runs"`
}

func WorkspaceStatusPath(dir string) string { return core.JoinPath(dir, "status.json") }

// ReadStatusResult reads without a lock and converts the document to the
// service's struct (State is called Status there).
func ReadStatusResult(dir string) core.Result {
	st, err := statefile.Load(context.TODO(), WorkspaceStatusPath(dir))
	if err != nil {
		return core.Fail(err)
	}
	return core.Ok(&WorkspaceStatus{Status: string(st.State), Repo: st.Repo, Task: st.Task,
		PID: st.PID, UpdatedAt: st.UpdatedAt, Runs: st.Runs})
}

// UpdateStatus replaces ReadStatusResult + writeStatusResult.
func UpdateStatus(ctx context.Context, dir string, fn func(*statefile.Status) error) error {
	_, err := statefile.Mutate(ctx, WorkspaceStatusPath(dir), fn)
	return err
}

var errMovedOn = errors.New("workspace moved on")

type Subsystem struct {
	root       string
	agentBin   string
	startDelay time.Duration
}

func (s *Subsystem) workspaceDir(org, repo, task string) string {
	return core.JoinPath(s.root, org, repo, task)
}

// finalContext is for the last write of a task: it survives the
// cancellation of ctx (core.Go cancels its tasks at shutdown) but not a
// stuck lock.
func finalContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
}

func (s *Subsystem) onAgentExit(ctx context.Context, org, repo, task string, code int) error {
	to := statefile.Completed
	if code != 0 {
		to = statefile.Failed
	}
	ctx, cancel := finalContext(ctx)
	defer cancel()
	_, err := statefile.Mutate(ctx, WorkspaceStatusPath(s.workspaceDir(org, repo, task)), func(st *statefile.Status) error {
		st.PID = 0
		return st.Transition(to, statefile.Running)
	})
	return err
}

// spawn claims, sleeps and spawns, gives the claim back if the spawn
// fails, and records the pid only if the run is still its own.
func (s *Subsystem) spawn(ctx context.Context, dir string) error {
	path := WorkspaceStatusPath(dir)
	runID := strconv.FormatInt(time.Now().UnixNano(), 36)
	claimed, err := statefile.Mutate(ctx, path, func(st *statefile.Status) error {
		if err := st.Transition(statefile.Running, statefile.Queued); err != nil {
			return err
		}
		st.ProcessID = runID
		st.Runs++
		return nil
	})
	if err != nil {
		return err
	}
	time.Sleep(s.startDelay)
	cmd := exec.Command(s.agentBin, "--task", claimed.Task)
	if err := cmd.Start(); err != nil {
		_, giveBack := statefile.Mutate(ctx, path, func(st *statefile.Status) error {
			if st.ProcessID != runID {
				return errMovedOn
			}
			return st.Transition(statefile.Queued, statefile.Running)
		})
		return errors.Join(err, giveBack)
	}
	status[dir]++
	_, err = statefile.Mutate(ctx, path, func(st *statefile.Status) error {
		if st.State != statefile.Running || st.ProcessID != runID {
			return errMovedOn
		}
		st.PID = cmd.Process.Pid
		return nil
	})
	return err
}

func (s *Subsystem) resume(ctx context.Context, org, repo, task string) error {
	return UpdateStatus(ctx, s.workspaceDir(org, repo, task), statefile.Transition(statefile.Queued, statefile.Failed))
}

// Read only.
func (s *Subsystem) describe(dir string) string {
	r := ReadStatusResult(dir)
	st, ok := r.Value.(*WorkspaceStatus)
	if !ok {
		return "unknown"
	}
	return st.Status + " " + st.Task
}

// create makes the directory (WriteAtomic and Mutate refuse a missing
// parent), then creates the document if it does not exist.
func (s *Subsystem) create(ctx context.Context, org, repo, task string) error {
	dir := s.workspaceDir(org, repo, task)
	if err := corefs.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	_, err := statefile.Create(ctx, WorkspaceStatusPath(dir), statefile.Status{State: statefile.Queued, Repo: repo, Task: task})
	return err
}
