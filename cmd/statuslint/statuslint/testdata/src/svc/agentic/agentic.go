package agentic

import (
	"os/exec"
	"time"

	"example.com/core"
)

// Subsystem runs agents in workspaces under root.
type Subsystem struct {
	root       string
	agentBin   string
	startDelay time.Duration
}

func (s *Subsystem) workspaceDir(org, repo, task string) string { // want workspaceDir:`path example\.com/core\.Path\(\$recv\.root, \$0, \$1, \$2\)`
	return core.Path(s.root, org, repo, task)
}

// Shape: the completion handler, ReadStatusResult + unwrap + change +
// writeStatusResult.
func (s *Subsystem) onAgentExit(org, repo, task string, code int) {
	dir := s.workspaceDir(org, repo, task)
	r := ReadStatusResult(dir)
	st, ok := workspaceStatusValue(r)
	if !ok {
		return
	}
	if code == 0 {
		st.Status = "completed"
	} else {
		st.Status = "failed"
	}
	st.PID = 0
	writeStatusResult(dir, st) // want `read-modify-write of dir without a lock: read and decoded at line 25`
}

// Shape: read, sleep, spawn a process, write back the copy read before,
// through the swappable helper variables.
func (s *Subsystem) spawn(dir string) error {
	st, ok := workspaceStatusValue(readStatus(dir))
	if !ok || st.Status != "queued" {
		return nil
	}
	time.Sleep(s.startDelay)
	cmd := exec.Command(s.agentBin, "--task", st.Task)
	if err := cmd.Start(); err != nil {
		return err
	}
	st.Status = "running"
	st.PID = cmd.Process.Pid
	st.Runs++
	writeStatus(dir, st) // want `read-modify-write of dir without a lock: read and decoded at line 42`
	go s.wait(dir, cmd)
	return nil
}

func (s *Subsystem) wait(dir string, cmd *exec.Cmd) {
	err := cmd.Wait()
	code := 0
	if err != nil {
		code = 1
	}
	// Shape: the write-back from a goroutine after a delay.
	r := ReadStatusResult(dir)
	go func() {
		time.Sleep(s.startDelay)
		if st, ok := workspaceStatusValue(r); ok {
			st.Runs += code
			writeStatusResult(dir, st) // want `read-modify-write of dir`
		}
	}()
}

// Shape: the caller inlines the wrapper: fs.Read, the framework's string
// decoder, fs.WriteAtomic of the framework's string encoder.
func (s *Subsystem) ask(dir, question string) core.Result {
	path := WorkspaceStatusPath(dir)
	r := fs.Read(path)
	if !r.OK {
		return r
	}
	var st WorkspaceStatus
	if d := core.JSONUnmarshalString(r.Value.(string), &st); !d.OK {
		return d
	}
	st.Question = question
	st.Status = "blocked"
	return fs.WriteAtomic(path, core.JSONMarshalString(st)) // want `read-modify-write of path without a lock: read and decoded at line 80`
}

// Shape: a method that reads through the helper and writes in place with
// the framework's Write.
func (s *Subsystem) resume(org, repo, task string) {
	dir := s.workspaceDir(org, repo, task)
	st, ok := workspaceStatusValue(ReadStatusResult(dir))
	if !ok {
		return
	}
	st.Status = "queued"
	fs.Write(WorkspaceStatusPath(dir), core.JSONMarshalString(st)) // want `read-modify-write of WorkspaceStatusPath\(dir\)` `not atomic: Write\(path, …\) writes WorkspaceStatusPath\(dir\) in place`
}

// Read only: not reported.
func (s *Subsystem) describe(dir string) string { // want describe:`reads svc/agentic\.fs\.path\(example\.com/core\.Path\(\$0, "status\.json"\)\) into result 0; reads decoded svc/agentic\.fs\.path\(example\.com/core\.Path\(\$0, "status\.json"\)\) into result 0`
	st, ok := workspaceStatusValue(ReadStatusResult(dir))
	if !ok {
		return "unknown"
	}
	return st.Status + " " + st.Task
}

// A fresh document that never read the file: not reported.
func (s *Subsystem) create(org, repo, task string) core.Result { // want create:`writes svc/agentic\.fs\.path\(example\.com/core\.Path\(example\.com/core\.Path\(\$recv\.root, \$0, \$1, \$2\), "status\.json"\)\)`
	st := &WorkspaceStatus{Status: "queued", Org: org, Repo: repo, Task: task, StartedAt: time.Now()}
	return writeStatusResult(s.workspaceDir(org, repo, task), st)
}
