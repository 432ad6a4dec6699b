// Package p4 holds the unsafe patterns statuslint exists for: every
// read-modify-write below loses updates, every in-place write can be seen torn.
package p4

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/agentstate/core/fs"
)

type WorkspaceStatus struct {
	Status    string    `json:"status"`
	Agent     string    `json:"agent"`
	Repo      string    `json:"repo"`
	Org       string    `json:"org,omitempty"`
	Task      string    `json:"task"`
	PID       int       `json:"pid,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
	Runs      int       `json:"runs"`
}

// ReadStatus and writeStatus are the service's helpers.
func ReadStatus(wsDir string) (*WorkspaceStatus, error) {
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

func writeStatus(wsDir string, st *WorkspaceStatus) error {
	st.UpdatedAt = time.Now()
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(wsDir, "status.json"), data, 0o644) // want `not atomic: os.WriteFile truncates filepath.Join\(wsDir, "status.json"\) in place`
}

// Pattern 1: ReadStatus + change + writeStatus (the completion handler).
func markCompleted(wsDir string) error {
	st, err := ReadStatus(wsDir)
	if err != nil {
		return err
	}
	st.Status = "completed"
	st.PID = 0
	return writeStatus(wsDir, st) // want `read-modify-write of filepath\.Join\(wsDir, "status\.json"\) without a lock: read at line 51.*use status\.Mutate`
}

// Pattern 2: read, spawn a process, write back the stale copy (the spawner):
// a fast agent that finished meanwhile is reverted to "running".
func spawnAgent(wsDir string) error {
	st, err := ReadStatus(wsDir)
	if err != nil {
		return err
	}
	cmd := exec.Command("agent", "--task", st.Task)
	if err := cmd.Start(); err != nil {
		return err
	}
	st.Status = "running"
	st.PID = cmd.Process.Pid
	st.Runs++
	return writeStatus(wsDir, st) // want `read-modify-write of filepath\.Join\(wsDir, "status\.json"\) without a lock: read at line 63`
}

// Pattern 2b: read, then write back later from a goroutine after a sleep.
func resumeLater(wsDir string, delay time.Duration) {
	st, _ := ReadStatus(wsDir)
	go func() {
		time.Sleep(delay)
		st.Status = "running"
		_ = writeStatus(wsDir, st) // want `read-modify-write of filepath\.Join\(wsDir, "status\.json"\) without a lock: read at line 79`
	}()
}

// Pattern 3: the status tool rewrites dead workspaces, all inline, with an
// atomic write: atomic, but still a lost update.
func markDead(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var st WorkspaceStatus
	if err := json.Unmarshal(data, &st); err != nil {
		return err
	}
	st.Status = "failed"
	out, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return fs.WriteAtomic(path, out, 0o644) // want `read-modify-write of path without a lock: read at line 90`
}

// Pattern 4: the second service's 11-field copy of the struct: the write
// drops every field it does not declare, and loses concurrent updates.
type liteStatus struct {
	Status string `json:"status"`
	Repo   string `json:"repo"`
	Task   string `json:"task"`
}

func drainQueue(root, org, repo, task string) error {
	p := filepath.Join(root, org, repo, task, "status.json")
	raw, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	var st liteStatus
	if err := json.Unmarshal(raw, &st); err != nil {
		return err
	}
	if st.Status != "queued" {
		return nil
	}
	st.Status = "running"
	raw, err = json.Marshal(st)
	if err != nil {
		return err
	}
	return os.WriteFile(p, raw, 0o644) // want `not atomic: os.WriteFile truncates p in place` `read-modify-write of filepath\.Join\(root, org, repo, task, "status\.json"\) without a lock: read at line 116`
}

// The same path spelled twice as the same expression.
func killAgent(ws string) error {
	data, err := os.ReadFile(filepath.Join(ws, "status.json"))
	if err != nil {
		return err
	}
	var st map[string]any
	if err := json.Unmarshal(data, &st); err != nil {
		return err
	}
	st["status"] = "failed"
	data, err = json.Marshal(st)
	if err != nil {
		return err
	}
	return fs.WriteAtomic(filepath.Join(ws, "status.json"), data, 0o644) // want `read-modify-write of filepath.Join\(ws, "status.json"\)`
}

// Through the sandboxed Fs, by name.
func bumpRuns(fsys *fs.Fs, name string) error {
	data, err := fsys.ReadFile(name)
	if err != nil {
		return err
	}
	var st WorkspaceStatus
	if err := json.Unmarshal(data, &st); err != nil {
		return err
	}
	st.Runs++
	return fsys.WriteAtomic(name, must(json.Marshal(st)), 0o644) // want `read-modify-write of name`
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// Decoder and encoder on files; os.Create truncates: the write that loses
// the update is the truncation, reported there.
const statusFile = "status.json"

func setNote(dir, note string) error {
	f, err := os.Open(filepath.Join(dir, statusFile))
	if err != nil {
		return err
	}
	var st map[string]any
	err = json.NewDecoder(f).Decode(&st)
	f.Close()
	if err != nil {
		return err
	}
	st["note"] = note
	w, err := os.Create(filepath.Join(dir, statusFile)) // want `not atomic: os.Create truncates` `read-modify-write of filepath\.Join\(dir, "status\.json"\) without a lock: read at line 179`
	if err != nil {
		return err
	}
	defer w.Close()
	return json.NewEncoder(w).Encode(st)
}

// io.ReadAll of an opened file; OpenFile with O_TRUNC; (*os.File).Write.
func setQuestion(path, q string) error {
	r, err := os.Open(path)
	if err != nil {
		return err
	}
	data, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		return err
	}
	var st map[string]any
	if err := json.Unmarshal(data, &st); err != nil {
		return err
	}
	st["question"] = q
	out, _ := json.Marshal(st)
	w, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0) // want `read-modify-write of path without a lock: read at line 200`
	if err != nil {
		return err
	}
	defer w.Close()
	_, err = w.Write(out)
	return err
}

// A workspace type with receiver helpers and no path argument.
type Workspace struct{ Dir string }

func (w *Workspace) ReadStatus() (*WorkspaceStatus, error) { return ReadStatus(w.Dir) }
func (w *Workspace) WriteStatus(st *WorkspaceStatus) error { return writeStatus(w.Dir, st) }

func (w *Workspace) Requeue() error {
	st, err := w.ReadStatus()
	if err != nil {
		return err
	}
	st.Status = "queued"
	return w.WriteStatus(st) // want `read-modify-write of filepath\.Join\(w\.Dir, "status\.json"\) without a lock: read at line 231`
}

// In-place writes of JSON files, with no read at all.
func saveConfig(dir string, cfg map[string]any) error {
	data, _ := json.Marshal(cfg)
	if err := os.WriteFile(dir+"/config.json", data, 0o600); err != nil { // want `not atomic: os.WriteFile truncates dir \+ "/config.json"`
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, "state.JSON"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644) // want `not atomic: os.OpenFile with O_TRUNC truncates`
	if err != nil {
		return err
	}
	return f.Close()
}

// A method named Write is no write by its name: this one writes nothing.
type upstreamFs struct{}

func (upstreamFs) Write(path, content string) error { return nil }

func (u upstreamFs) save(ws string, st *WorkspaceStatus) error {
	data, _ := json.Marshal(st)
	return u.Write(filepath.Join(ws, "status.json"), string(data))
}

// A hand-made atomic write (temp file, then rename) is still a lost update.
func setBranch(ws, branch string) error {
	p := filepath.Join(ws, "status.json")
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	var st map[string]any
	if err := json.Unmarshal(data, &st); err != nil {
		return err
	}
	st["branch"] = branch
	out, _ := json.Marshal(st)
	if err := os.WriteFile(p+".tmp", out, 0o644); err != nil {
		return err
	}
	return os.Rename(p+".tmp", p) // want `read-modify-write of filepath\.Join\(ws, "status\.json"\) without a lock: read at line 265`
}
