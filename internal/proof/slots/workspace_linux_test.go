package slots_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/claim"
	"github.com/agentstate/core/status/slots"
)

// TestSharedWorkspaceLinkOut: in a workspace shared through a group (setgid,
// group-writable registry), a second user who is a member plants a link to
// a directory of root's and appends, with flock(1) and jq, a dead slot whose
// document goes through it. A root reaper then reaps (corestate slot reap,
// Python's reap with doc_path) or releases it (corestate slot release): each
// refuses the registry and leaves root's document and directory as they
// were. CONTROL: Go's Reap with the path built from the name's shape alone
// rewrites root's document.
func TestSharedWorkspaceLinkOut(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a second user's process (CI runs as root)")
	}
	for _, tool := range []string{"setpriv", "flock", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is missing: %v", tool, err)
		}
	}
	corestate := filepath.Join(corestateDir(t), "corestate")
	requirePython(t)
	src, err := filepath.Abs(filepath.Join("..", "..", "..", "python", "src"))
	if err != nil {
		t.Fatal(err)
	}
	me, err := claim.Self()
	if err != nil {
		t.Fatal(err)
	}
	dead := me
	dead.Boot = "00000000-0000-0000-0000-000000000000" // an earlier boot: dead
	owner, _ := json.Marshal(dead)
	const nobody = 65534

	attacked := func(t *testing.T) (reg, victim string) {
		ws, outside := sharedTemp(t), sharedTemp(t)
		if err := os.Chown(ws, 0, nobody); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(ws, 0o2775); err != nil {
			t.Fatal(err)
		}
		victim = filepath.Join(outside, "status.json")
		writeJSON(t, victim, `{"status": "running"}`)
		reg = filepath.Join(ws, "registry.json")
		for _, f := range []string{reg, reg + ".lock"} {
			writeJSON(t, f, "")
			if err := os.Chown(f, 0, nobody); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(f, 0o664); err != nil {
				t.Fatal(err)
			}
		}
		writeJSON(t, reg, `{"agents": [], "max_concurrent": 4}`)
		plant := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-c", `
cd "$WS" && ln -s "$OUTSIDE" evil &&
flock registry.json.lock sh -c 'jq --argjson o "$OWNER" ".agents += [{id: \"x1\", depth: 0, owner: \$o, docs: [\"evil/status.json\"]}]" registry.json >.new && cat .new >registry.json && rm .new'`)
		plant.Env = append(os.Environ(), "WS="+ws, "OUTSIDE="+outside, "OWNER="+string(owner))
		if out, err := plant.CombinedOutput(); err != nil {
			t.Fatalf("the member's plant: %v\n%s", err, out)
		}
		return reg, victim
	}
	untouched := func(t *testing.T, victim string) {
		t.Helper()
		if b, err := os.ReadFile(victim); err != nil || string(b) != `{"status": "running"}` {
			t.Errorf("root's document: %q, %v; want it unchanged", b, err)
		}
		if _, err := os.Lstat(victim + ".lock"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a lock file was made in root's directory: %v", err)
		}
	}

	for _, c := range []struct{ name, want string }{
		{"corestate reap", "exit status 3"},
		{"corestate release", "exit status 3"},
		{"python reap", "InvalidRegistry"},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "-"), func(t *testing.T) {
			reg, victim := attacked(t)
			var cmd *exec.Cmd
			switch c.name {
			case "corestate reap":
				cmd = exec.Command(corestate, "slot", "reap", reg, "--if", "status=running", "status=failed")
			case "corestate release":
				cmd = exec.Command(corestate, "slot", "release", reg, "x1", "--if", "status=running", "status=completed")
			default:
				cmd = exec.Command("python3", "-c", `import sys
from agentstate import slots
reg = sys.argv[1]
slots.reap(reg, lambda s: slots.transition(slots.doc_path(reg, s.docs[0]), "failed", "running"))`, reg)
				cmd.Env = append(os.Environ(), "PYTHONPATH="+src, "PYTHONDONTWRITEBYTECODE=1")
			}
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(err.Error()+string(out), c.want) {
				t.Errorf("%v\n%s; want %s", err, out, c.want)
			}
			untouched(t, victim)
		})
	}

	t.Run("CONTROL", func(t *testing.T) {
		reg, victim := attacked(t)
		store := status.NewStore[slots.Registry](reg)
		_, err := slots.Reap(context.Background(), store, func(s slots.Slot) (slots.Edit, error) {
			p := filepath.Join(filepath.Dir(reg), filepath.FromSlash(s.Docs[0])) // the shape alone
			return slots.Transition(status.NewStore[status.Status](p), status.Failed, status.Running), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if st, err := status.Load(context.Background(), victim); err != nil || st.State != status.Failed {
			t.Fatalf("CONTROL: root's document is %q, %v: the planted link was not followed, the test shows nothing", st.State, err)
		}
	})
}

// sharedTemp is a new directory that a second user may traverse.
func sharedTemp(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "slots-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}
