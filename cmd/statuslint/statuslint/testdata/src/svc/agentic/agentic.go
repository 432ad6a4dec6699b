package agentic

import (
	"os/exec"
	"time"

	"example.com/core"
)

type AgentOptions struct{}

// ServiceRuntime stands in for the framework's generic runtime a service
// embeds.
type ServiceRuntime[T any] struct{ opts T }

type PrepSubsystem struct {
	*ServiceRuntime[AgentOptions]
	agentBin string
	backoff  map[string]time.Time
}

func (s *PrepSubsystem) alive(pid int) bool { return pid > 0 }

var spawnAgent = func(s *PrepSubsystem, agent, prompt, dir string) (int, error) {
	cmd := exec.Command(s.agentBin, "--agent", agent, "--prompt", prompt)
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	return cmd.Process.Pid, nil
}

// Shape: the completion handler.
func (s *PrepSubsystem) onAgentComplete(dir string, exitCode int) {
	finalStatus := "completed"
	if exitCode != 0 {
		finalStatus = "failed"
	}
	result := ReadStatusResult(dir)
	st, ok := workspaceStatusValue(result)
	if ok {
		st.Status = finalStatus
		st.PID = 0
		writeStatusResult(dir, st) // want `read-modify-write of status\.json in dir without a lock: read at line 39`
	}
}

// Shape: the queue drain claims a queued workspace: read, sleep, spawn,
// write back the copy read before.
func (s *PrepSubsystem) drainOne(delay time.Duration) bool {
	for _, statusPath := range WorkspaceStatusPaths() {
		dir := core.PathDir(statusPath)
		st, ok := workspaceStatusValue(ReadStatusResult(dir))
		if !ok || st.Status != "queued" {
			continue
		}
		if until, ok := s.backoff[st.Agent]; ok && time.Now().Before(until) {
			continue
		}
		time.Sleep(delay)
		pid, err := spawnAgent(s, st.Agent, core.Concat("TASK: ", st.Task), dir)
		if err != nil {
			continue
		}
		st.Status = "running"
		st.PID = pid
		st.Runs++
		preserveNote(dir, st)
		if r := writeStatusResult(dir, st); !r.OK { // want `read-modify-write of dir \(status\.json\) without a lock: read at line 53`
			core.Warn("agentic: failed to write workspace status", "reason", r.Value)
		}
		return true
	}
	return false
}

// preserveNote reads the document again and copies a field over: a read,
// no write.
func preserveNote(dir string, st *WorkspaceStatus) {
	prev, ok := workspaceStatusValue(ReadStatusResult(dir))
	if ok && st.Note == "" {
		st.Note = prev.Note
	}
}

// Shape: create if absent, else change.
func (s *PrepSubsystem) recordRuntime(dir, agent string) {
	st, ok := workspaceStatusValue(ReadStatusResult(dir))
	if !ok {
		st = &WorkspaceStatus{Status: "running", Agent: agent, StartedAt: time.Now()}
	}
	st.Runtime = "vz"
	if r := writeStatusResult(dir, st); !r.OK { // want `read-modify-write of status\.json in dir without a lock: read at line 88`
		core.Warn("agentic: failed to record runtime", "reason", r.Error())
	}
}

// Shape: through the variables, with a goroutine writing back after a
// delay.
func (s *PrepSubsystem) resumeLater(dir string, delay time.Duration) {
	st, err := ReadStatus(dir)
	if err != nil {
		return
	}
	go func() {
		time.Sleep(delay)
		st.Status = "running"
		_ = writeStatus(dir, st) // want `read-modify-write of status\.json in dir without a lock: read at line 101`
	}()
}

// Shape: the caller inlines the wrapper.
func (s *PrepSubsystem) ask(dir, question string) core.Result {
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
	return fs.WriteAtomic(path, core.JSONMarshalString(st)) // want `read-modify-write of path \(status\.json\) without a lock: read at line 115`
}

// Shape: the framework's Write, which writes in place, of the status file.
func (s *PrepSubsystem) resume(dir string) {
	st, ok := workspaceStatusValue(ReadStatusResult(dir))
	if !ok {
		return
	}
	st.Status = "queued"
	fs.Write(WorkspaceStatusPath(dir), core.JSONMarshalString(st)) // want `read-modify-write of WorkspaceStatusPath\(dir\)` `not atomic: fs.Write truncates WorkspaceStatusPath\(dir\) in place`
}

// Read only: not reported.
func (s *PrepSubsystem) describe(dir string) string {
	st, ok := workspaceStatusValue(ReadStatusResult(dir))
	if !ok {
		return "unknown"
	}
	return st.Status + " " + st.Task
}

// A fresh document that never read the file: not reported.
func (s *PrepSubsystem) create(dir, repo, task string) core.Result {
	st := &WorkspaceStatus{Status: "queued", Repo: repo, Task: task, StartedAt: time.Now()}
	return writeStatusResult(dir, st)
}
