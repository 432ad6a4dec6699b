// Package runner is written the way the agent service's runner package
// handles workspace status today: its own, narrower status struct with its
// own ReadStatusResult / WriteStatus pair (writing it back drops the fields
// it does not declare), and agentic's exported helpers used from another
// package. Package svcfixed/runner is its migrated twin.
package runner

import (
	"os/exec"
	"time"

	"example.com/core"

	"svc/agentic"
)

var fs = core.NewFs("/")

// WorkspaceStatus is the runner's copy of the document: 5 of its 16 fields.
type WorkspaceStatus struct {
	Status string `json:"status"`
	Repo   string `json:"repo"`
	Task   string `json:"task"`
	PID    int    `json:"pid,omitempty"`
	Runs   int    `json:"runs"`
}

func ReadStatusResult(dir string) core.Result { // want ReadStatusResult:`reads svc/runner\.fs\.path\(example\.com/core\.Path\(\$0, "status\.json"\)\) into result 0; reads decoded svc/runner\.fs\.path\(example\.com/core\.Path\(\$0, "status\.json"\)\) into result 0`
	r := fs.Read(core.Path(dir, "status.json"))
	if !r.OK {
		return r
	}
	var st WorkspaceStatus
	if d := core.JSONUnmarshalString(r.Value.(string), &st); !d.OK {
		return d
	}
	return core.Ok(&st)
}

func WriteStatus(dir string, st *WorkspaceStatus) error { // want WriteStatus:`writes svc/runner\.fs\.path\(example\.com/core\.Path\(\$0, "status\.json"\)\)`
	if r := fs.WriteAtomic(core.Path(dir, "status.json"), core.JSONMarshalString(st)); !r.OK {
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
		_ = WriteStatus(dir, st) // want `read-modify-write of dir without a lock: read and decoded at line 51`
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
	return WriteStatus(dir, st) // want `read-modify-write of dir`
}

// Shape: agentic's exported helpers, from another package (facts).
func requeue(dir string) {
	r := agentic.ReadStatusResult(dir)
	if st, ok := r.Value.(*agentic.WorkspaceStatus); ok {
		st.Status = "queued"
		agentic.WriteStatusResult(dir, st) // want `read-modify-write of dir without a lock: read and decoded at line 75`
	}
}

// A different workspace: not reported.
func copyStatus(from, to string) error { // want copyStatus:`writes svc/runner\.fs\.path\(example\.com/core\.Path\(\$1, "status\.json"\)\)`
	r := ReadStatusResult(from)
	st, _ := r.Value.(*WorkspaceStatus)
	return WriteStatus(to, st)
}
