// Package migrated holds the code of package p4 rewritten as MIGRATION.md
// says: nothing here may be reported.
package migrated

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status"
)

// Pattern 1 after: one Mutate with a guarded transition.
func markCompleted(ctx context.Context, path string) error {
	_, err := status.Mutate(ctx, path, func(s *status.Status) error {
		s.PID = 0
		return s.Transition("completed", "running")
	})
	return err
}

// Pattern 2 after: spawn, then record the PID only if nothing else changed
// the state meanwhile; no stale copy is ever written back.
func spawnAgent(ctx context.Context, path string) error {
	st, err := status.Load(ctx, path)
	if err != nil {
		return err
	}
	cmd := exec.Command("agent", "--task", st.Task)
	if err := cmd.Start(); err != nil {
		return err
	}
	_, err = status.Mutate(ctx, path, func(s *status.Status) error {
		if err := s.Transition("running", "queued"); err != nil {
			return err
		}
		s.PID = cmd.Process.Pid
		s.Runs++
		return nil
	})
	return err
}

// Pattern 3 after: a Store for any document type; reads and writes inside
// the function literal run under the lock.
func markDead(ctx context.Context, path string) error {
	_, err := status.NewStore[map[string]any](path).Mutate(ctx, func(m *map[string]any) error {
		data, err := os.ReadFile(path + ".extra")
		if err != nil {
			return err
		}
		var extra map[string]any
		if err := json.Unmarshal(data, &extra); err != nil {
			return err
		}
		(*m)["status"] = "failed"
		(*m)["extra"] = extra
		out, _ := json.Marshal(extra)
		return fs.WriteAtomic(path+".extra", out, 0o644)
	})
	return err
}

// A fresh document with no prior read.
func create(ws string) error {
	out, err := json.MarshalIndent(status.Status{State: "queued"}, "", "  ")
	if err != nil {
		return err
	}
	return fs.WriteAtomic(filepath.Join(ws, "status.json"), out, 0o644)
}

// Reading only.
func show(ws string) (map[string]any, error) {
	data, err := os.ReadFile(filepath.Join(ws, "status.json"))
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(data, &m)
}

// Read one path, write another (an export).
func export(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	out, _ := json.Marshal(m)
	return fs.WriteAtomic(dst, out, 0o644)
}

// Write before read: not a read-modify-write.
func writeThenRead(p string) error {
	out, _ := json.Marshal(map[string]any{"status": "queued"})
	if err := fs.WriteAtomic(p, out, 0o644); err != nil {
		return err
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	var m map[string]any
	return json.Unmarshal(data, &m)
}

// Read and rewrite of a file that is not decoded as JSON.
func appendLine(p string) error {
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	return fs.WriteAtomic(p, append(data, '\n'), 0o644)
}

// In-place writes of files that are not JSON, and a JSON file opened
// without truncation.
func notJSON(dir string) error {
	if err := os.WriteFile(filepath.Join(dir, "log.txt"), nil, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "status.json")+".bak", nil, 0o644); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, "events.json"), os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// The directive silences a finding the author has checked (here a file
// only this process writes, under its own lock).
func ignored(p string) error {
	data, _ := os.ReadFile(p)
	var m map[string]any
	_ = json.Unmarshal(data, &m)
	out, _ := json.Marshal(m)
	//statuslint:ignore written only by this process, under mu
	return fs.WriteAtomic(p, out, 0o644)
}
