package slots_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/claim"
	"github.com/agentstate/core/status/slots"
)

// The Python package's slots (python/, import agentstate.slots; driven by
// testdata/slots_ops.py) against this package: the same operations on the
// same registry write the same bytes, and each reads what the other wrote.

var slotsOpsPy = filepath.Join("testdata", "slots_ops.py")

// layoutSeed is a registry as another program might have left it: its own
// members at both levels with values of every kind (a number beyond float64
// precision, escapes, HTML characters, empty containers), odd spacing, times
// in other forms and offsets, Go's zero time, counts that are wrong, an
// owner with a member of another case and one neither knows, null members.
const layoutSeed = `{"zeta": {"b" : [1.50, 1e400], "a": "\u00e9<&>"},   "max_total": 0, "active_count": 9,
 "max_concurrent": 5, "max_depth": 1, "alpha": null, "agents": [
  {"id": "s1", "key": "k1", "depth": 0, "owner": {"PID": 101, "host": "h", "future": 1},
   "reserved_at": "2020-01-02T3:04:05,120000+00:00", "docs": null, "resources": {"prompt": "/tmp/p1", "log": "/var/log/s1"},
   "type": "reviewer", "cost": 12345678901234567890123, "nested": {"x": [ ], "y": { }, "z": [ {"q" : "\u2028\n"} ]}},
  {"id": "s2", "key": "", "parent": "", "depth": 0, "owner": {"pid": 102, "boot": "b", "pidns": 7, "start": 3},
   "reserved_at": "2020-01-02T03:04:05.5+05:30", "adopted_at": null, "note": "\/slash"},
  {"id": "s3", "depth": 0, "owner": {"pid": 103}, "reserved_at": "0001-01-01T00:00:00Z", "resources": {}}
 ]}`

var (
	ownerA = claim.Owner{Host: "dispatch-1", Boot: "b", PIDNS: 4026531836, PID: 200, Start: 5}
	ownerB = claim.Owner{Host: "agent-1", Machine: "3d1219c7c4c5404aaa1f6d2a48adfda4", Boot: "b", PIDNS: 4026531836, TimeNS: 4026531834, PID: 201, Start: 6}
)

// pyOp runs one operation of the Python package on reg and decodes its
// answer.
func pyOp(t *testing.T, reg, op string, args any) pyAnswer {
	t.Helper()
	a, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("python3", slotsOpsPy, reg, op, string(a))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("slots_ops.py %s %s: %v", op, a, err)
	}
	var ans pyAnswer
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	if err := dec.Decode(&ans); err != nil {
		t.Fatalf("slots_ops.py %s: %q: %v", op, out, err)
	}
	return ans
}

// decodeNumbers decodes a JSON value with its numbers as they are written,
// for comparing values that Go keeps as read with those Python decoded.
func decodeNumbers(t *testing.T, raw []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func requirePython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 not found in PATH: this test needs it (make test installs it)")
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, to, string(b))
}

type pyAnswer struct {
	Slot     *pySlot  `json:"slot"`
	Slots    []pySlot `json:"slots"`
	Released []pySlot `json:"released"`
	Error    string   `json:"error"`
}

// pySlot is a slot as slots_ops.py prints it, and as goSlot makes one of
// Go's.
type pySlot struct {
	ID         string            `json:"id"`
	Key        string            `json:"key"`
	Parent     string            `json:"parent"`
	Depth      int               `json:"depth"`
	Owner      claim.Owner       `json:"owner"`
	ReservedAt string            `json:"reserved_at"`
	AdoptedAt  string            `json:"adopted_at"`
	Docs       []string          `json:"docs"`
	Resources  map[string]string `json:"resources"`
	Members    map[string]any    `json:"members"`
	Liveness   string            `json:"liveness,omitempty"`
}

func goSlot(t *testing.T, s slots.Slot) pySlot {
	t.Helper()
	p := pySlot{ID: s.ID, Key: s.Key, Parent: s.Parent, Depth: s.Depth, Owner: s.Owner, Docs: s.Docs, Resources: s.Resources,
		Members: map[string]any{}}
	for name, v := range map[string]time.Time{"reserved_at": s.ReservedAt, "adopted_at": s.AdoptedAt} {
		if v.IsZero() {
			continue
		}
		b, err := v.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		json.Unmarshal(b, map[string]*string{"reserved_at": &p.ReservedAt, "adopted_at": &p.AdoptedAt}[name])
	}
	if p.Docs == nil {
		p.Docs = []string{}
	}
	if p.Resources == nil {
		p.Resources = map[string]string{}
	}
	for name, raw := range s.Members.All() {
		p.Members[name] = decodeNumbers(t, raw)
	}
	return p
}

// errName is the name of the Python class of a refusal.
func errName(err error) string {
	for _, e := range []struct {
		err  error
		name string
	}{
		{slots.ErrFull, "Full"}, {slots.ErrTotal, "TotalReached"}, {slots.ErrTooDeep, "TooDeep"}, {slots.ErrNoParent, "NoParent"},
		{slots.ErrExists, "Exists"}, {slots.ErrReleased, "Released"}, {slots.ErrAdopted, "Adopted"},
		{slots.ErrHasChildren, "HasChildren"}, {slots.ErrInvalid, "InvalidRegistry"},
	} {
		if errors.Is(err, e.err) {
			return e.name
		}
	}
	if err != nil {
		return "other: " + err.Error()
	}
	return ""
}

// TestPythonWritesTheRegistryAsGo: from one registry, each operation by Go
// and by Python writes the same bytes (the times an operation records are
// the only difference, and are taken from Go's), refuses alike, and returns
// the same slot.
func TestPythonWritesTheRegistryAsGo(t *testing.T) {
	requirePython(t)
	ctx := t.Context()
	dir := t.TempDir()
	goReg, pyReg := filepath.Join(dir, "go", "registry.json"), filepath.Join(dir, "py", "registry.json")
	for _, reg := range []string{goReg, pyReg} {
		if err := os.MkdirAll(filepath.Join(filepath.Dir(reg), "t1"), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(filepath.Dir(reg), "t1", "status.json"), `{"status": "queued"}`)
		writeFile(t, reg, layoutSeed)
	}
	reg := status.NewStore[slots.Registry](goReg)
	task := status.NewStore[status.Status](filepath.Join(dir, "go", "t1", "status.json"))
	var members status.Document
	if err := members.UnmarshalJSON([]byte(`{"type": "fixer", "tags": ["a", "<&é\u2028"], "limits": {"cpu": 2.5, "mem": 1024}, "empty": {}}`)); err != nil {
		t.Fatal(err)
	}
	pyMembers := map[string]any{"type": "fixer", "tags": []string{"a", "<&é\u2028"}, "limits": map[string]any{"cpu": 2.5, "mem": 1024}, "empty": map[string]any{}}
	dead := map[int]bool{}
	check := slots.WithCheck(func(_ context.Context, o claim.Owner) (claim.Liveness, error) {
		if dead[o.PID] {
			return claim.Dead, nil
		}
		return claim.Alive, nil
	})

	steps := []struct {
		name    string
		prepare func(g *slots.Registry) // a policy change, by Go's Store on both sides
		goOp    func() (slots.Slot, error)
		op      string
		args    map[string]any
	}{
		{"release heals the counts and keeps the others' members", nil, func() (slots.Slot, error) { return slots.Release(ctx, reg, "s3") },
			"release", map[string]any{"id": "s3"}},
		{"reserve a root with its task, resources and members", nil, func() (slots.Slot, error) {
			return slots.Reserve(ctx, reg, slots.Request{ID: "r1", Key: "t1", Owner: ownerA, Resources: map[string]string{"prompt": "/tmp/r1", "a": "1"}, Members: members},
				slots.Transition(task, status.Running, status.Queued))
		}, "reserve", map[string]any{"id": "r1", "key": "t1", "owner": ownerA, "resources": map[string]string{"prompt": "/tmp/r1", "a": "1"}, "members": pyMembers,
			"task": filepath.Join(dir, "py", "t1", "status.json"), "to": "running", "from": "queued"}},
		{"a retried key", nil, func() (slots.Slot, error) { return slots.Reserve(ctx, reg, slots.Request{Key: "k1", Owner: ownerA}) },
			"reserve", map[string]any{"key": "k1", "owner": ownerA}},
		{"reserve a child", nil, func() (slots.Slot, error) {
			return slots.Reserve(ctx, reg, slots.Request{ID: "c1", Parent: "r1", Owner: ownerA})
		}, "reserve", map[string]any{"id": "c1", "parent": "r1", "owner": ownerA}},
		{"too deep", nil, func() (slots.Slot, error) { return slots.Reserve(ctx, reg, slots.Request{Parent: "c1", Owner: ownerA}) },
			"reserve", map[string]any{"parent": "c1", "owner": ownerA}},
		{"hand over", nil, func() (slots.Slot, error) { return slots.HandOver(ctx, reg, "c1", ownerB) },
			"handover", map[string]any{"id": "c1", "to": ownerB}},
		{"adopt what was handed over", nil, func() (slots.Slot, error) { return slots.Adopt(ctx, reg, "c1", ownerB) },
			"adopt", map[string]any{"id": "c1", "owner": ownerB}},
		{"adopt taken", nil, func() (slots.Slot, error) { return slots.Adopt(ctx, reg, "c1", ownerA) },
			"adopt", map[string]any{"id": "c1", "owner": ownerA}},
		{"abort adopted", nil, func() (slots.Slot, error) { return slots.Abort(ctx, reg, "c1") }, "abort", map[string]any{"id": "c1"}},
		{"release a parent", nil, func() (slots.Slot, error) { return slots.Release(ctx, reg, "r1") }, "release", map[string]any{"id": "r1"}},
		{"adopt the seed's slot", nil, func() (slots.Slot, error) { return slots.Adopt(ctx, reg, "s2", ownerB) },
			"adopt", map[string]any{"id": "s2", "owner": ownerB}},
		{"abort", nil, func() (slots.Slot, error) { return slots.Abort(ctx, reg, "s1") }, "abort", map[string]any{"id": "s1"}},
		{"released", nil, func() (slots.Slot, error) { return slots.Release(ctx, reg, "s1") }, "release", map[string]any{"id": "s1"}},
		{"full", func(g *slots.Registry) { g.MaxConcurrent = 3 }, func() (slots.Slot, error) {
			return slots.Reserve(ctx, reg, slots.Request{Owner: ownerA})
		}, "reserve", map[string]any{"owner": ownerA}},
	}
	for _, st := range steps {
		if st.prepare != nil {
			if _, err := reg.Mutate(ctx, func(g *slots.Registry) error { st.prepare(g); return nil }); err != nil {
				t.Fatal(err)
			}
			copyFile(t, goReg, pyReg)
		}
		before, err := os.ReadFile(goReg)
		if err != nil {
			t.Fatal(err)
		}
		gs, gerr := st.goOp()
		after, err := os.ReadFile(goReg)
		if err != nil {
			t.Fatal(err)
		}
		ans := pyOp(t, pyReg, st.op, st.args)
		got, err := os.ReadFile(pyReg)
		if err != nil {
			t.Fatal(err)
		}
		if want := errName(gerr); ans.Error != want {
			t.Fatalf("%s: Python's refusal %q, Go's %q (%v)", st.name, ans.Error, want, gerr)
		}
		if (gerr == nil) != (ans.Slot != nil) && ans.Error == "" {
			t.Fatalf("%s: Python returned %+v, Go %v", st.name, ans.Slot, gerr)
		}
		if ans.Slot != nil {
			want := goSlot(t, gs)
			// The times this operation recorded, taken from Go's.
			for _, tm := range [][2]string{{ans.Slot.ReservedAt, want.ReservedAt}, {ans.Slot.AdoptedAt, want.AdoptedAt}} {
				if tm[0] != tm[1] && tm[0] != "" && tm[1] != "" && !bytes.Contains(before, []byte(tm[1])) {
					got = bytes.ReplaceAll(got, []byte(`"`+tm[0]+`"`), []byte(`"`+tm[1]+`"`))
				}
			}
			ans.Slot.ReservedAt, ans.Slot.AdoptedAt = want.ReservedAt, want.AdoptedAt
			if diff := cmp.Diff(want, *ans.Slot); diff != "" {
				t.Errorf("%s: the slot returned (-go +python):\n%s", st.name, diff)
			}
		}
		if diff := cmp.Diff(string(after), string(got)); diff != "" {
			t.Fatalf("%s: the registry written (-go +python):\n%s", st.name, diff)
		}
		if gerr != nil && !bytes.Equal(before, after) {
			t.Fatalf("%s: Go's refusal wrote", st.name)
		}
		copyFile(t, goReg, pyReg) // the next step starts from the same bytes
	}
	// Reap: the dead owner's slots, as Go releases them.
	dead[ownerA.PID], dead[ownerB.PID] = true, true
	gr, err := slots.Reap(ctx, reg, nil, check)
	if err != nil {
		t.Fatal(err)
	}
	ans := pyOp(t, pyReg, "reap", map[string]any{"dead": []int{ownerA.PID, ownerB.PID}})
	var want []pySlot
	for _, s := range gr.Released {
		want = append(want, goSlot(t, s))
	}
	if diff := cmp.Diff(want, ans.Released); diff != "" {
		t.Errorf("reap: the slots released (-go +python):\n%s", diff)
	}
	a, _ := os.ReadFile(goReg)
	b, _ := os.ReadFile(pyReg)
	if diff := cmp.Diff(string(a), string(b)); diff != "" {
		t.Errorf("reap: the registry written (-go +python):\n%s", diff)
	}
	if len(want) != 3 {
		t.Errorf("reap released %d slots, want 3 (s2 and c1, then their parent r1)", len(want))
	}
}

// TestPythonAndGoReadEachOther: a registry Python wrote is listed by Go as
// Python lists it, and the other way round, liveness included (this
// process alive, a killed one dead, another host's unknown).
func TestPythonAndGoReadEachOther(t *testing.T) {
	requirePython(t)
	ctx := t.Context()
	dir := t.TempDir()
	me, err := claim.Self()
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command("true")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	gone, err := claim.Of(c.Process.Pid)
	c.Wait()
	if err != nil {
		t.Fatal(err)
	}
	other := claim.Owner{Host: "elsewhere", Boot: "x", PIDNS: 1, PID: 1, Start: 1}
	for _, writer := range []string{"go", "python"} {
		t.Run("written by "+writer, func(t *testing.T) {
			path := filepath.Join(dir, writer, "registry.json")
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, path, `{"max_concurrent": 4, "max_depth": 1}`)
			reg := status.NewStore[slots.Registry](path)
			var members status.Document
			members.Encode("type", "reviewer")
			for i, o := range []claim.Owner{me, gone, other} {
				req := map[string]any{"id": fmt.Sprintf("s%d", i), "key": fmt.Sprintf("k%d", i), "owner": o, "resources": map[string]string{"log": "/l"},
					"members": map[string]any{"type": "reviewer"}}
				if i > 0 {
					req["parent"] = "s0"
				}
				if writer == "python" {
					if ans := pyOp(t, path, "reserve", req); ans.Error != "" {
						t.Fatal(ans.Error)
					}
					continue
				}
				r := slots.Request{ID: req["id"].(string), Key: req["key"].(string), Owner: o, Resources: map[string]string{"log": "/l"}, Members: members}
				if i > 0 {
					r.Parent = "s0"
				}
				if _, err := slots.Reserve(ctx, reg, r); err != nil {
					t.Fatal(err)
				}
			}
			listed, err := slots.List(ctx, reg)
			if err != nil {
				t.Fatal(err)
			}
			var want []pySlot
			for _, l := range listed {
				s := goSlot(t, l.Slot)
				s.Liveness = l.Liveness.String()
				want = append(want, s)
			}
			got := pyOp(t, path, "list", map[string]any{}).Slots
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the slots listed (-go +python):\n%s", diff)
			}
			if len(got) != 3 || got[0].Liveness != "alive" || got[1].Liveness != "dead" || got[2].Liveness != "unknown" {
				t.Errorf("liveness: %+v", got)
			}
		})
	}
}

// TestPythonAndCorestateOnOneRegistry: Python and corestate take turns on
// one registry: a retried spawn finds the other client's slot (Python's
// Exists, corestate's exit 10), each lists what the other wrote, adopts
// the other's slot and releases it with its task.
func TestPythonAndCorestateOnOneRegistry(t *testing.T) {
	requirePython(t)
	corestate := filepath.Join(corestateDir(t), "corestate")
	ctx := t.Context()
	dir := t.TempDir()
	reg := filepath.Join(dir, "registry.json")
	writeFile(t, reg, `{"max_concurrent": 3}`)
	task := func(name string) string { return filepath.Join(dir, name, "status.json") }
	for _, name := range []string{"t1", "t2"} {
		if err := os.Mkdir(filepath.Dir(task(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, task(name), `{"status": "queued"}`)
	}
	me, err := claim.Self()
	if err != nil {
		t.Fatal(err)
	}
	cs := func(wantCode int, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(corestate, append([]string{"slot"}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != wantCode {
			t.Fatalf("corestate slot %v: exit %d, want %d: %s%s", args, code, wantCode, out, stderr.Bytes())
		}
		return out
	}
	slotID := func(out []byte) string {
		t.Helper()
		var s struct{ ID string }
		if err := json.Unmarshal(out, &s); err != nil || s.ID == "" {
			t.Fatalf("corestate printed %q: %v", out, err)
		}
		return s.ID
	}

	id1 := slotID(cs(0, "reserve", "--key", "t1", "--resource", "log=/l1", reg, "--", task("t1"), "--if", "status=queued", "status=running"))
	if ans := pyOp(t, reg, "reserve", map[string]any{"key": "t1", "owner": me}); ans.Error != "Exists" || ans.Slot == nil || ans.Slot.ID != id1 {
		t.Fatalf("Python's retry of corestate's t1: %+v", ans)
	}
	ans := pyOp(t, reg, "reserve", map[string]any{"key": "t2", "owner": me, "resources": map[string]string{"log": "/l2"},
		"task": task("t2"), "to": "running", "from": "queued"})
	if ans.Error != "" || ans.Slot == nil {
		t.Fatalf("Python's reserve of t2: %+v", ans)
	}
	id2 := ans.Slot.ID
	if got := slotID(cs(10, "reserve", "--key", "t2", reg)); got != id2 {
		t.Fatalf("corestate's retry of Python's t2 printed %s, want %s", got, id2)
	}

	var fromCorestate []pySlot
	for _, line := range bytes.Split(bytes.TrimSpace(cs(0, "list", "--json", reg)), []byte("\n")) {
		var l struct {
			Slot     slots.Slot `json:"slot"`
			Liveness string     `json:"liveness"`
		}
		if err := json.Unmarshal(line, &l); err != nil {
			t.Fatalf("corestate slot list --json: %q: %v", line, err)
		}
		s := goSlot(t, l.Slot)
		s.Liveness = l.Liveness
		fromCorestate = append(fromCorestate, s)
	}
	if diff := cmp.Diff(fromCorestate, pyOp(t, reg, "list", map[string]any{}).Slots); diff != "" {
		t.Errorf("the slots listed (-corestate +python):\n%s", diff)
	}
	if len(fromCorestate) != 2 || fromCorestate[0].ID != id1 || fromCorestate[1].ID != id2 {
		t.Fatalf("listed %+v", fromCorestate)
	}

	if ans := pyOp(t, reg, "adopt", map[string]any{"id": id1, "owner": me}); ans.Error != "" {
		t.Fatalf("Python's adopt of corestate's slot: %+v", ans)
	}
	cs(0, "adopt", reg, id2) // its owner: this process, corestate's parent
	cs(0, "release", reg, id1, "--if", "status=running", "status=completed")
	if ans := pyOp(t, reg, "release", map[string]any{"id": id2}); ans.Error != "" || ans.Slot == nil || ans.Slot.Resources["log"] != "/l2" {
		t.Fatalf("Python's release of its slot adopted by corestate: %+v", ans)
	}
	g, err := status.NewStore[slots.Registry](reg).Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Agents) != 0 || g.ActiveCount != 0 || g.TotalSpawned != 2 {
		t.Errorf("at the end: %d slots, active_count %d, total_spawned %d; want 0, 0, 2", len(g.Agents), g.ActiveCount, g.TotalSpawned)
	}
	for name, want := range map[string]status.State{"t1": status.Completed, "t2": status.Running} {
		if st, err := status.Load(ctx, task(name)); err != nil || st.State != want {
			t.Errorf("task %s: %q, %v; want %s", name, st.State, err, want)
		}
	}
}
