// Package today holds the "before" code of docs/MIGRATION.md for status
// code written the way the agent services write it today: a package-level
// file-system wrapper whose Read returns a core.Result (failures carry a
// core.E error in Value), the framework's
// string JSON helpers, path and unwrap helpers, helpers behind package-level
// variables, map[string]any, a second, narrower struct. statuslint must
// report every read-modify-write (the want comments), and
// TestStatuslintReportsBeforePatterns checks it. The framework stub,
// example.com/core, is the one in cmd/statuslint/statuslint/testdata.
package today

import (
	"os/exec"
	"time"

	"example.com/core"
)

type WorkspaceStatus struct {
	Status    string    `json:"status"`
	Agent     string    `json:"agent"`
	Repo      string    `json:"repo"`
	Task      string    `json:"task"`
	PID       int       `json:"pid,omitempty"`
	StartedAt time.Time `json:"started_at"`
	UpdatedAt time.Time `json:"updated_at"`
	Runs      int       `json:"runs"`
}

var fs = (&core.Fs{}).NewUnrestricted()

func WorkspaceStatusPath(dir string) string { return core.JoinPath(dir, "status.json") } // want WorkspaceStatusPath:`path`

func ReadStatusResult(dir string) core.Result { // want ReadStatusResult:`result 0: decoded`
	r := fs.Read(WorkspaceStatusPath(dir))
	if !r.OK {
		err, _ := r.Value.(error)
		return core.Result{Value: core.E("ReadStatusResult", core.Concat("no status in ", dir), err), OK: false}
	}
	var st WorkspaceStatus
	if d := core.JSONUnmarshalString(r.Value.(string), &st); !d.OK {
		err, _ := d.Value.(error)
		return core.Result{Value: core.E("ReadStatusResult", "invalid status json", err), OK: false}
	}
	return core.Result{Value: &st, OK: true}
}

func writeStatusResult(dir string, st *WorkspaceStatus) core.Result { // want writeStatusResult:`writes`
	if st == nil {
		return core.Result{Value: core.E("writeStatus", "status is required", nil), OK: false}
	}
	st.UpdatedAt = time.Now()
	if r := fs.WriteAtomic(WorkspaceStatusPath(dir), core.JSONMarshalString(st)); !r.OK {
		err, _ := r.Value.(error)
		return core.Result{Value: core.E("writeStatus", "failed to write status", err), OK: false}
	}
	return core.Result{OK: true}
}

func workspaceStatusValue(r core.Result) (*WorkspaceStatus, bool) {
	st, ok := r.Value.(*WorkspaceStatus)
	return st, ok && r.OK
}

// The error-returning forms, package-level function variables (swapped by
// tests).
var ReadStatus = func(dir string) (*WorkspaceStatus, error) { // want ReadStatus:`result 0: decoded`
	r := ReadStatusResult(dir)
	if !r.OK {
		err, _ := r.Value.(error)
		return nil, err
	}
	st, ok := workspaceStatusValue(r)
	if !ok {
		return nil, core.E("ReadStatus", "invalid status payload", nil)
	}
	return st, nil
}

var writeStatus = func(dir string, st *WorkspaceStatus) error { // want writeStatus:`writes`
	if r := writeStatusResult(dir, st); !r.OK {
		err, _ := r.Value.(error)
		return err
	}
	return nil
}

// Section 1a: the completion handler.
func onAgentExit(dir string) core.Result {
	r := ReadStatusResult(dir)
	st, ok := workspaceStatusValue(r)
	if !ok {
		return r
	}
	st.Status = "completed"
	st.PID = 0
	return writeStatusResult(dir, st) // want `read-modify-write of status\.json in dir without a lock: read at line 90`
}

// Section 1b: the status tool marks a workspace whose process died.
func markDead(path string) core.Result {
	r := fs.Read(path)
	if !r.OK {
		return r
	}
	var m map[string]any
	if d := core.JSONUnmarshalString(r.Value.(string), &m); !d.OK {
		return d
	}
	m["status"] = "failed"
	delete(m, "pid")
	return fs.WriteAtomic(path, core.JSONMarshalString(m)) // want `read-modify-write of path without a lock`
}

// Section 1c: create if absent.
func createWorkspace(dir, task string) core.Result {
	if r := ReadStatusResult(dir); r.OK {
		return r // already there
	}
	st := &WorkspaceStatus{Status: "queued", Task: task, StartedAt: time.Now()}
	return writeStatusResult(dir, st) // want `read-modify-write of status\.json in dir without a lock: read at line 117`
}

// Section 2a: read, sleep, spawn, write back the copy read before.
func spawn(dir string, delay time.Duration) error {
	st, err := ReadStatus(dir)
	if err != nil || st.Status != "queued" {
		return nil
	}
	time.Sleep(delay)
	cmd := exec.Command("agent", "--task", st.Task)
	if err := cmd.Start(); err != nil {
		return err // the workspace stays queued, or is it?
	}
	st.Status = "running"
	st.PID = cmd.Process.Pid
	st.Runs++
	writeStatus(dir, st) // want `read-modify-write of status\.json in dir without a lock: read at line 126`
	return nil
}

// Section 3a: the runner's own, narrower struct and its helpers.
type RunnerStatus struct {
	Status string `json:"status"`
	Repo   string `json:"repo"`
	Task   string `json:"task"`
	Runs   int    `json:"runs"`
}

func readRunnerStatus(dir string) (*RunnerStatus, bool) { // want readRunnerStatus:`result 0: decoded`
	r := fs.Read(core.JoinPath(dir, "status.json"))
	var st RunnerStatus
	if !r.OK || !core.JSONUnmarshalString(r.Value.(string), &st).OK {
		return nil, false
	}
	return &st, true
}

func writeRunnerStatus(dir string, st *RunnerStatus) core.Result { // want writeRunnerStatus:`writes`
	return fs.WriteAtomic(core.JoinPath(dir, "status.json"), core.JSONMarshalString(st))
}

func drainQueue(dirs []string) {
	for _, dir := range dirs {
		st, ok := readRunnerStatus(dir)
		if !ok || st.Status != "queued" {
			continue
		}
		st.Status = "running"
		writeRunnerStatus(dir, st) // want `read-modify-write of dir \(status\.json\) without a lock: read at line 165`
	}
}
