// Package runner is written the way the agent service's runner package
// handles workspace status: its own, narrower struct with its own read and
// write helpers (writing it back drops the fields it does not declare), and
// agentic's exported helpers used from another package (facts). Package
// svcfixed/runner is its migrated twin.
package runner

import (
	"os/exec"
	"time"

	"example.com/core"

	"svc/agentic"
)

var fs = (&core.Fs{}).NewUnrestricted()

// WorkspaceStatus is the runner's copy of the document: 5 of its 16 fields.
type WorkspaceStatus struct {
	Status string `json:"status"`
	Repo   string `json:"repo"`
	Task   string `json:"task"`
	PID    int    `json:"pid,omitempty"`
	Runs   int    `json:"runs"`
}

func ReadStatusResult(dir string) core.Result {
	r := fs.Read(core.JoinPath(dir, "status.json"))
	if !r.OK {
		return r
	}
	var st WorkspaceStatus
	if d := core.JSONUnmarshalString(r.Value.(string), &st); !d.OK {
		return d
	}
	return core.Result{Value: &st, OK: true}
}

func WriteStatus(dir string, st *WorkspaceStatus) error {
	if r := fs.WriteAtomic(core.JoinPath(dir, "status.json"), core.JSONMarshalString(st)); !r.OK {
		return r.Value.(error)
	}
	return nil
}

// Shape: the queue drain loop claims queued workspaces with the narrower
// struct.
func drainQueue(dirs []string) {
	for _, dir := range dirs {
		r := ReadStatusResult(dir)
		st, ok := r.Value.(*WorkspaceStatus)
		if !r.OK || !ok || st.Status != "queued" {
			continue
		}
		st.Status = "running"
		_ = WriteStatus(dir, st) // want `read-modify-write of dir \(status\.json\) without a lock: read at line 51`
	}
}

// Shape: retry after a backoff: read, sleep, spawn, write back.
func retry(dir string, backoff time.Duration) error {
	r := ReadStatusResult(dir)
	st, _ := r.Value.(*WorkspaceStatus)
	time.Sleep(backoff)
	if err := exec.Command("agent", "--task", st.Task).Start(); err != nil {
		return err
	}
	st.Runs++
	return WriteStatus(dir, st) // want `read-modify-write of status\.json in dir without a lock: read at line 63`
}

// Shape: agentic's helpers, from another package: the exported read
// variable and an exported wrapper of the write helper.
func requeue(dir string) error {
	st, err := agentic.ReadStatus(dir)
	if err != nil {
		return err
	}
	st.Status = "queued"
	return agentic.Save(dir, st) // want `read-modify-write of status\.json in dir without a lock: read at line 76`
}

// A different workspace: not reported.
func copyStatus(from, to string) error {
	r := ReadStatusResult(from)
	st, _ := r.Value.(*WorkspaceStatus)
	return WriteStatus(to, st)
}
