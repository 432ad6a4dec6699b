// Package monitor is svc/monitor migrated: map[string]any documents go
// through a Store of that type, the helper variable becomes a Mutate
// wrapper, and the YAML state file became a JSON document with a Store.
// Nothing here may be reported.
package monitor

import (
	"context"
	"errors"
	"path/filepath"

	"example.com/core"

	statefile "github.com/agentstate/core/status"
)

func markDead(ctx context.Context, path string) error {
	_, err := statefile.NewStore[map[string]any](path).Mutate(ctx, func(m *map[string]any) error {
		if (*m)["status"] != "running" {
			return errors.New("not running")
		}
		(*m)["status"] = "failed"
		delete(*m, "pid")
		return nil
	})
	return err
}

var updateStatus = func(ctx context.Context, dir string, fn func(*map[string]any) error) error {
	_, err := statefile.NewStore[map[string]any](core.JoinPath(dir, "status.json")).Mutate(ctx, fn)
	return err
}

var errAlive = errors.New("process alive")

type Monitor struct {
	alive func(pid int) bool
}

func (mon *Monitor) sweep(ctx context.Context, dirs []string) {
	for _, dir := range dirs {
		_ = updateStatus(ctx, dir, func(m *map[string]any) error {
			pid, _ := (*m)["pid"].(float64)
			if (*m)["status"] != "running" || mon.alive(int(pid)) {
				return errAlive
			}
			(*m)["status"] = "failed"
			return nil
		})
	}
}

type state struct {
	Paused bool `json:"paused"`
}

func pause(ctx context.Context, dir string) error {
	_, err := statefile.NewStore[state](filepath.Join(dir, "monitor.json")).Mutate(ctx, func(s *state) error {
		s.Paused = true
		return nil
	})
	return err
}

func statusOf(dir string) string {
	m, _ := statefile.NewStore[map[string]any](core.JoinPath(dir, "status.json")).Load(context.TODO())
	s, _ := m["status"].(string)
	return s
}
