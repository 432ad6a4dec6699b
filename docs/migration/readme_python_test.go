package migration_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/claim"
	"github.com/agentstate/core/status/slots"
)

// pythonAgentBlock matches README.md's Python agent of "Your first fleet".
var pythonAgentBlock = regexp.MustCompile("(?s)<!-- python: TestReadmePythonAgent -->\n```python\n(.*?\n)```")

// TestReadmePythonAgent runs README.md's Python agent, as written, under
// the README's Go dispatcher (Example_readmeFleet, with this agent in
// place of agentProgram's stand-in): the dispatcher reserves a slot per
// task and hands it over to the agent it starts, which adopts it, works,
// and releases it with its task completed. An agent whose slot was
// released before it ran (a reaper found its dispatcher dead) stops
// without working.
func TestReadmePythonAgent(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 not found in PATH: this test needs it (make test installs it)")
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := pythonAgentBlock.FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no <!-- python: TestReadmePythonAgent --> block")
	}
	src, err := filepath.Abs(filepath.Join("..", "..", "python", "src"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	agentPy := filepath.Join(dir, "agent.py")
	if err := os.WriteFile(agentPy, m[1], 0o644); err != nil {
		t.Fatal(err)
	}
	agent := func(reg, id string) *exec.Cmd {
		cmd := exec.Command("python3", agentPy, reg, id) // python3 agent.py AGENT_REGISTRY.json SLOT
		cmd.Env = append(os.Environ(), "PYTHONPATH="+src, "PYTHONDONTWRITEBYTECODE=1")
		return cmd
	}

	ctx := context.Background()
	reg := status.NewStore[slots.Registry](filepath.Join(dir, "AGENT_REGISTRY.json"))
	if _, err := reg.Create(ctx, slots.Registry{MaxConcurrent: 2}); err != nil {
		t.Fatal(err)
	}
	me, err := claim.Self()
	if err != nil {
		t.Fatal(err)
	}
	var started []*exec.Cmd
	for _, task := range []string{"fix-42", "fix-43"} {
		s, err := slots.Reserve(ctx, reg, slots.Request{Key: task, Owner: me})
		if err != nil {
			t.Fatal(err)
		}
		a := agent(reg.Name(), s.ID)
		a.Stderr = os.Stderr
		if err := a.Start(); err != nil {
			t.Fatal(err)
		}
		started = append(started, a)
		to, err := claim.Of(a.Process.Pid)
		if err == nil {
			_, err = slots.HandOver(ctx, reg, s.ID, to)
		}
		// The agent may have adopted, or even released, first.
		if err != nil && !errors.Is(err, slots.ErrReleased) {
			t.Fatalf("%s: hand-over: %v", task, err)
		}
	}
	for _, a := range started {
		if err := a.Wait(); err != nil {
			t.Errorf("agent %v: %v", a.Args, err)
		}
	}
	g, err := reg.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Agents) != 0 || g.ActiveCount != 0 || g.TotalSpawned != 2 {
		t.Errorf("after the agents: %d slots, active_count %d, total_spawned %d; want 0, 0, 2", len(g.Agents), g.ActiveCount, g.TotalSpawned)
	}
	for _, task := range []string{"fix-42", "fix-43"} {
		st, err := status.Load(ctx, filepath.Join(dir, task, "status.json"))
		if err != nil || st.State != status.Completed {
			t.Errorf("task %s: %q, %v; want completed", task, st.State, err)
		}
	}

	// A slot released before its agent runs: the agent does no work.
	s, err := slots.Reserve(ctx, reg, slots.Request{Key: "fix-44", Owner: me})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := slots.Abort(ctx, reg, s.ID); err != nil {
		t.Fatal(err)
	}
	out, err := agent(reg.Name(), s.ID).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "was reaped: not working") || strings.Contains(string(out), "working on") {
		t.Errorf("an agent whose slot is gone: %v, %q", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "fix-44")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the agent whose slot is gone worked on its task: %v", err)
	}

	// A slot whose key names a path out of the registry's directory (a
	// member who can write the registry rewrote it): the agent writes
	// nothing there.
	outside := filepath.Join(t.TempDir(), "elsewhere")
	rel, err := filepath.Rel(dir, outside)
	if err != nil {
		t.Fatal(err)
	}
	s, err = slots.Reserve(ctx, reg, slots.Request{Key: filepath.ToSlash(rel), Owner: me})
	if err != nil {
		t.Fatal(err)
	}
	out, err = agent(reg.Name(), s.ID).CombinedOutput()
	if _, serr := os.Stat(outside); err == nil || !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("an agent whose slot's key is %q: %v, %q; it made %s: %v", s.Key, err, out, outside, serr)
	}
}
