// Package monitor is written the way the agent service's monitor handles
// workspace status: the sweep that marks a workspace whose process died,
// through map[string]any, with helpers behind package-level function
// variables and methods on a Monitor; and a YAML state file through a
// library that decodes by reflection. Package svcfixed/monitor is its
// migrated twin.
package monitor

import (
	"os"

	"example.com/core"
	"example.com/yaml"
)

var fs = (&core.Fs{}).NewUnrestricted()

// Shape: read into map[string]any, set m["status"], write back.
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
	return fs.WriteAtomic(path, core.JSONMarshalString(m)) // want `read-modify-write of path without a lock: read at line 20`
}

var (
	loadStatus = func(dir string) (map[string]any, bool) {
		var m map[string]any
		r := fs.Read(core.JoinPath(dir, "status.json"))
		if !r.OK {
			return nil, false
		}
		d := core.JSONUnmarshalString(r.Value.(string), &m)
		return m, d.OK
	}
	saveStatus = func(dir string, m map[string]any) bool {
		return fs.WriteAtomic(core.JoinPath(dir, "status.json"), core.JSONMarshalString(m)).OK
	}
)

type Monitor struct {
	alive func(pid int) bool
}

// Shape: the sweep, through the helper variables, from a method.
func (mon *Monitor) sweep(dirs []string) {
	for _, dir := range dirs {
		m, ok := loadStatus(dir)
		if !ok || m["status"] != "running" {
			continue
		}
		if pid, _ := m["pid"].(float64); !mon.alive(int(pid)) {
			m["status"] = "failed"
			saveStatus(dir, m) // want `read-modify-write of dir \(status\.json\) without a lock: read at line 55`
		}
	}
}

// Shape: a YAML document through os.ReadFile and os.WriteFile.
type state struct {
	Paused bool `yaml:"paused"`
}

func pause(dir string) error {
	p := core.JoinPath(dir, "monitor.yaml")
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	var s state
	if err := yaml.Unmarshal(data, &s); err != nil {
		return err
	}
	s.Paused = true
	out, _ := yaml.Marshal(s)
	return os.WriteFile(p, out, 0o644) // want `read-modify-write of p \(monitor\.yaml\) without a lock: read at line 73`
}

// Read only, through map[string]any: not reported.
func statusOf(dir string) string {
	m, _ := loadStatus(dir)
	s, _ := m["status"].(string)
	return s
}
