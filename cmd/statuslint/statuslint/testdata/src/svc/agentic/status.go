// Package agentic is written the way the agent service's agentic package
// handles workspace status, against the framework stand-in example.com/core
// (which has the real framework's signatures and body shapes): a
// package-level Fs made with (&core.Fs{}).NewUnrestricted(), a path helper
// over core.JoinPath, ReadStatusResult / writeStatusResult returning a
// core.Result, helpers and the status tool behind package-level function
// variables (so that tests can swap them), and methods of a subsystem that
// embeds the framework's runtime. Every bare read-modify-write must be
// reported; package svcfixed/agentic is its migrated twin.
package agentic

import (
	"time"

	"example.com/core"
)

type WorkspaceStatus struct {
	Status    string    `json:"status"`
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

// The write helper behind a variable, as the service has it.
var writeStatus = func(dir string, st *WorkspaceStatus) error { // want writeStatus:`writes example.com/core.Fs.validatePath\(svc/agentic.fs, example.com/core.Join\("/", \{\$0, "status.json"\}\)\).Value`
	r := writeStatusResult(dir, st)
	if !r.OK {
		err, _ := r.Value.(error)
		if err == nil {
			err = core.E("writeStatus", "failed to write status", nil)
		}
		return err
	}
	return nil
}

func writeStatusResult(dir string, st *WorkspaceStatus) core.Result { // want writeStatusResult:`^writes example.com/core.Fs.validatePath\(svc/agentic.fs, example.com/core.Join\("/", \{\$0, "status.json"\}\)\).Value$`
	if st == nil {
		return core.Result{Value: core.E("writeStatus", "status is required", nil), OK: false}
	}
	st.UpdatedAt = time.Now()
	statusPath := WorkspaceStatusPath(dir)
	if r := fs.WriteAtomic(statusPath, core.JSONMarshalString(st)); !r.OK {
		core.Warn("agentic.writeStatus: failed to write status", "path", statusPath)
		return core.Result{Value: core.E("writeStatus", "failed to write status", nil), OK: false}
	}
	return core.Result{OK: true}
}

func ReadStatusResult(dir string) core.Result { // want ReadStatusResult:`result 0: decoded example.com/core.Fs.validatePath\(svc/agentic.fs, example.com/core.Join\("/", \{\$0, "status.json"\}\)\).Value.*reads example.com/core.Fs.validatePath`
	r := fs.Read(WorkspaceStatusPath(dir))
	if !r.OK {
		err, _ := r.Value.(error)
		return core.Result{Value: core.E("ReadStatusResult", core.Concat("status not found for ", dir), err), OK: false}
	}
	var st WorkspaceStatus
	if pr := core.JSONUnmarshalString(r.Value.(string), &st); !pr.OK {
		return core.Result{Value: core.E("ReadStatusResult", "invalid status json", nil), OK: false}
	}
	return core.Result{Value: &st, OK: true}
}

// ReadStatus is the error-returning form, behind a variable.
var ReadStatus = func(dir string) (*WorkspaceStatus, error) {
	result := ReadStatusResult(dir)
	if !result.OK {
		err, _ := result.Value.(error)
		return nil, err
	}
	st, ok := workspaceStatusValue(result)
	if !ok {
		return nil, core.E("ReadStatus", "invalid status payload", nil)
	}
	return st, nil
}

func workspaceStatusValue(result core.Result) (*WorkspaceStatus, bool) {
	st, ok := result.Value.(*WorkspaceStatus)
	if !ok || st == nil {
		return nil, false
	}
	return st, true
}

type StatusInput struct {
	Workspace string
	Status    string
}

type StatusOutput struct {
	Total, Running, Failed int
}

// Shape: the status tool, a function literal behind a variable, walks every
// workspace and rewrites the ones whose process died.
var status = func(s *PrepSubsystem, input StatusInput) (StatusOutput, error) {
	var out StatusOutput
	for _, statusPath := range WorkspaceStatusPaths() {
		dir := core.PathDir(statusPath)
		if input.Workspace != "" && input.Workspace != WorkspaceName(dir) {
			continue
		}
		result := ReadStatusResult(dir)
		st, ok := workspaceStatusValue(result)
		if !ok {
			out.Failed++
			continue
		}
		if st.Status == "running" && st.PID > 0 && !s.alive(st.PID) {
			if r := fs.Read(workspaceBlockedPath(dir)); r.OK {
				st.Status = "blocked"
				st.Question = core.Trim(r.Value.(string))
			} else {
				st.Status = "failed"
			}
			writeStatusResult(dir, st) // want `read-modify-write of dir \(status\.json\) without a lock: read at line 116`
		}
		out.Total++
	}
	return out, nil
}

// Save is the write helper other packages use.
func Save(dir string, st *WorkspaceStatus) error { return writeStatus(dir, st) }
