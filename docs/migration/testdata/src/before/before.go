// Package before holds the "before" code of docs/MIGRATION.md, patterns 1
// to 4, with the helpers they use. statuslint must report every one of them
// (the want comments); TestStatuslintReportsBeforePatterns checks it.
package before

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
)

type WorkspaceStatus struct {
	Status   string `json:"status"`
	PID      int    `json:"pid,omitempty"`
	Runs     int    `json:"runs"`
	Question string `json:"question,omitempty"`
}

func ReadStatus(wsDir string) (*WorkspaceStatus, error) { // want ReadStatus:`result 0: decoded`
	data, err := os.ReadFile(filepath.Join(wsDir, "status.json"))
	if err != nil {
		return nil, err
	}
	var st WorkspaceStatus
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

func writeStatus(wsDir string, st *WorkspaceStatus) error { // want writeStatus:`writes`
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(wsDir, "status.json"), data, 0o644) // want `not atomic: os.WriteFile truncates`
}

// Pattern 1.
func askQuestion(wsDir string) error {
	st, err := ReadStatus(wsDir)
	if err != nil {
		return err
	}
	st.Runs++
	st.Question = "which base branch?"
	return writeStatus(wsDir, st) // want `read-modify-write of filepath\.Join\(wsDir, "status\.json"\) without a lock: read at line 42.*use status\.Mutate`
}

func spawnAgent(ctx context.Context, wsDir string) (int, error) { return 4242, nil }

// Pattern 2.
func startAgent(ctx context.Context, wsDir string) error {
	st, _ := ReadStatus(wsDir)
	st.Status = "running"
	pid, err := spawnAgent(ctx, wsDir) // a fast agent can finish during this call
	if err != nil {
		return err
	}
	st.PID = pid
	return writeStatus(wsDir, st) // want `read-modify-write of filepath\.Join\(wsDir, "status\.json"\) without a lock: read at line 55`
}

type serviceStatus struct {
	Status string `json:"status"`
	Note   string `json:"note,omitempty"`
}

// Pattern 3.
func review(path string) {
	var s serviceStatus // declares some of the fields
	data, _ := os.ReadFile(path)
	_ = json.Unmarshal(data, &s)
	s.Note = "reviewed by QA"
	out, _ := json.Marshal(s)
	_ = os.WriteFile(path, out, 0o644) // want `read-modify-write of path without a lock`
}

// Pattern 4.
func save(dir string, data []byte) error { // want save:`writes`
	return os.WriteFile(filepath.Join(dir, "credentials.json"), data, 0o644) // want `not atomic: os.WriteFile truncates`
}
