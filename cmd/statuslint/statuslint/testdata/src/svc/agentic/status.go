// Package agentic is written the way the agent service's agentic package
// handles workspace status today: a package-level file-system wrapper
// whose Read returns a core.Result, the framework's string JSON helpers,
// a path helper, an unwrap helper, ReadStatusResult / writeStatusResult,
// helpers behind package-level function variables (so that tests can swap
// them) and methods on a subsystem struct. Every bare read-modify-write
// below must be reported; package svcfixed/agentic is its migrated twin.
package agentic

import (
	"time"

	"example.com/core"
)

var fs = core.NewFs("/")

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

func WorkspaceStatusPath(dir string) string { return core.Path(dir, "status.json") } // want WorkspaceStatusPath:`path example\.com/core\.Path\(\$0, "status\.json"\)`

func ReadStatusResult(dir string) core.Result { // want ReadStatusResult:`reads svc/agentic\.fs\.path\(example\.com/core\.Path\(\$0, "status\.json"\)\) into result 0; reads decoded svc/agentic\.fs\.path\(example\.com/core\.Path\(\$0, "status\.json"\)\) into result 0`
	r := fs.Read(WorkspaceStatusPath(dir))
	if !r.OK {
		return r
	}
	s, _ := r.Value.(string)
	var st WorkspaceStatus
	if d := core.JSONUnmarshalString(s, &st); !d.OK {
		return d
	}
	return core.Ok(&st)
}

func writeStatusResult(dir string, st *WorkspaceStatus) core.Result { // want writeStatusResult:`writes svc/agentic\.fs\.path\(example\.com/core\.Path\(\$0, "status\.json"\)\)`
	st.UpdatedAt = time.Now()
	return fs.WriteAtomic(WorkspaceStatusPath(dir), core.JSONMarshalString(st))
}

// WriteStatusResult is the exported write helper other packages use.
var WriteStatusResult = writeStatusResult // want WriteStatusResult:`writes svc/agentic\.fs\.path\(example\.com/core\.Path\(\$0, "status\.json"\)\)`

func workspaceStatusValue(r core.Result) (*WorkspaceStatus, bool) {
	if !r.OK {
		return nil, false
	}
	st, ok := r.Value.(*WorkspaceStatus)
	return st, ok
}

// The helpers tests swap out.
var (
	readStatus  = ReadStatusResult                                    // want readStatus:`reads decoded svc/agentic\.fs\.path.* into result 0`
	writeStatus = func(dir string, st *WorkspaceStatus) core.Result { // want writeStatus:`writes svc/agentic\.fs\.path\(example\.com/core\.Path\(\$0, "status\.json"\)\)`
		return writeStatusResult(dir, st)
	}
)
