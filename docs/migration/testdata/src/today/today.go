// Package today holds the "before" code of docs/MIGRATION.md for status
// code written the way the agent services write it today: a package-level
// file-system wrapper whose Read returns a core.Result, the framework's
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

var fs = core.NewFs("/")

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

func WorkspaceStatusPath(dir string) string { return core.Path(dir, "status.json") } // want WorkspaceStatusPath:`path`

func ReadStatusResult(dir string) core.Result { // want ReadStatusResult:`reads decoded`
	r := fs.Read(WorkspaceStatusPath(dir))
	if !r.OK {
		return r
	}
	var st WorkspaceStatus
	if d := core.JSONUnmarshalString(r.Value.(string), &st); !d.OK {
		return d
	}
	return core.Ok(&st)
}

func writeStatusResult(dir string, st *WorkspaceStatus) core.Result { // want writeStatusResult:`writes`
	st.UpdatedAt = time.Now()
	return fs.WriteAtomic(WorkspaceStatusPath(dir), core.JSONMarshalString(st))
}

func workspaceStatusValue(r core.Result) (*WorkspaceStatus, bool) {
	st, ok := r.Value.(*WorkspaceStatus)
	return st, ok && r.OK
}

// Swapped by tests.
var (
	readStatus  = ReadStatusResult  // want readStatus:`reads decoded`
	writeStatus = writeStatusResult // want writeStatus:`writes`
)

// Section 1a: the completion handler.
func onAgentExit(dir string) core.Result {
	r := ReadStatusResult(dir)
	st, ok := workspaceStatusValue(r)
	if !ok {
		return r
	}
	st.Status = "completed"
	st.PID = 0
	return writeStatusResult(dir, st) // want `read-modify-write of dir without a lock`
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
	return writeStatusResult(dir, st) // want `read-modify-write of dir without a lock`
}

// Section 2a: read, sleep, spawn, write back the copy read before.
func spawn(dir string, delay time.Duration) error {
	st, ok := workspaceStatusValue(readStatus(dir))
	if !ok || st.Status != "queued" {
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
	writeStatus(dir, st) // want `read-modify-write of dir without a lock`
	return nil
}

// Section 3a: the runner's own, narrower struct and its helpers.
type RunnerStatus struct {
	Status string `json:"status"`
	Repo   string `json:"repo"`
	Task   string `json:"task"`
	Runs   int    `json:"runs"`
}

func readRunnerStatus(dir string) (*RunnerStatus, bool) { // want readRunnerStatus:`reads decoded`
	r := fs.Read(core.Path(dir, "status.json"))
	var st RunnerStatus
	if !r.OK || !core.JSONUnmarshalString(r.Value.(string), &st).OK {
		return nil, false
	}
	return &st, true
}

func writeRunnerStatus(dir string, st *RunnerStatus) core.Result { // want writeRunnerStatus:`writes`
	return fs.WriteAtomic(core.Path(dir, "status.json"), core.JSONMarshalString(st))
}

func drainQueue(dirs []string) {
	for _, dir := range dirs {
		st, ok := readRunnerStatus(dir)
		if !ok || st.Status != "queued" {
			continue
		}
		st.Status = "running"
		writeRunnerStatus(dir, st) // want `read-modify-write of dir without a lock`
	}
}
