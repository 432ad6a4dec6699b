package claim_test

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/agentstate/core/status/claim"
)

// The Python package's claims (python/, import agentstate.claim; driven by
// testdata/claims.py) against this package: Python records the owners Go
// records and judges every owner as Local does (CONTROL: a pid-only judge
// disagrees); claims a Python agent took are released by Go's Reap once
// the agent is killed, and Go's are released by Python's reap, with Go and
// Python reapers at once releasing each claim once.

var claimsPy = filepath.Join("testdata", "claims.py")

func needPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 not found in PATH: this test needs it (make test installs it)")
	}
}

// startPython runs claims.py with args as a child that talks in lines.
func startPython(t *testing.T, args ...string) *child {
	t.Helper()
	return startChild(t, exec.Command("python3", append([]string{claimsPy}, args...)...))
}

func pyOwner(t *testing.T, line string) claim.Owner {
	t.Helper()
	var o claim.Owner
	if err := json.Unmarshal([]byte(line), &o); err != nil {
		t.Fatalf("Python's owner %q: %v", line, err)
	}
	return o
}

// TestPythonRecordsOwnersAsGo: Python's owner of a Go process is Go's, and
// the owner a Python process records for itself is the one Go records for
// it.
func TestPythonRecordsOwnersAsGo(t *testing.T) {
	needPython(t)
	g := startHelper(t, "wait", nil)
	g.expect("ready")
	want, err := claim.Of(g.pid())
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("python3", claimsPy, "owner", strconv.Itoa(g.pid())).Output()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, pyOwner(t, strings.TrimSpace(string(out)))); diff != "" {
		t.Errorf("Python's owner of a Go process (-go +python):\n%s", diff)
	}
	py := startPython(t, "self")
	recorded := pyOwner(t, py.line())
	want, err = claim.Of(py.pid())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, recorded); diff != "" {
		t.Errorf("the owner Python records for itself (-go +python):\n%s", diff)
	}
}

// TestPythonJudgesOwnersAsGo: owners in every case of the package doc's
// rules and every process state, judged by Local and by Python while the
// processes are held in those states.
func TestPythonJudgesOwnersAsGo(t *testing.T) {
	needPython(t)
	me := self(t)
	with := func(change func(*claim.Owner)) claim.Owner {
		o := me
		change(&o)
		return o
	}
	owners := map[string]claim.Owner{
		"the test":     me,
		"zero owner":   {},
		"no start":     with(func(o *claim.Owner) { o.Start = 0 }),
		"a lease":      with(func(o *claim.Owner) { o.Lease = "694d8c5f2a1b3c4d" }),
		"earlier boot": with(func(o *claim.Owner) { o.Boot = "00000000-0000-4000-8000-000000000000" }),
		"earlier boot, machine": with(func(o *claim.Owner) {
			o.Boot, o.Machine = "00000000-0000-4000-8000-000000000000", strings.Repeat("0", 32)
		}),
		"earlier boot, host":    with(func(o *claim.Owner) { o.Boot, o.Host = "00000000-0000-4000-8000-000000000000", o.Host+"-2" }),
		"another pid namespace": with(func(o *claim.Owner) { o.PIDNS++ }),
		"another time ns":       with(func(o *claim.Owner) { o.TimeNS++ }),
		"reused pid":            with(func(o *claim.Owner) { o.Start-- }),
		"initial pid namespace": with(func(o *claim.Owner) { o.Boot, o.PIDNS = "00000000-0000-4000-8000-000000000000", initPIDNS }),
	}
	proc := func(name string, prepare func(c *child)) {
		c := startHelper(t, "wait", nil)
		c.expect("ready")
		o, err := claim.Of(c.pid())
		if err != nil {
			t.Fatal(err)
		}
		prepare(c)
		owners[name] = o
	}
	proc("a live process", func(*child) {})
	proc("a stopped process", func(c *child) {
		c.cmd.Process.Signal(syscall.SIGSTOP)
		waitState(t, c.pid(), unix.WSTOPPED)
		t.Cleanup(func() { c.cmd.Process.Signal(syscall.SIGCONT) })
	})
	proc("a zombie", func(c *child) {
		c.cmd.Process.Signal(syscall.SIGKILL)
		waitState(t, c.pid(), unix.WEXITED)
	})
	proc("a process waited for", func(c *child) { c.kill() })

	names := make([]string, 0, len(owners))
	for name := range owners {
		names = append(names, name)
	}
	slices.Sort(names)
	list := make([]claim.Owner, len(names))
	goSays := make([]string, len(names))
	for i, name := range names {
		list[i] = owners[name]
		goSays[i] = liveness(t, owners[name]).String()
	}
	judge := func(mode string) []string {
		cmd := exec.Command("python3", claimsPy, mode)
		b, _ := json.Marshal(list)
		cmd.Stdin = bytes.NewReader(b)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("claims.py %s: %v", mode, err)
		}
		var got []string
		if err := json.Unmarshal(out, &got); err != nil || len(got) != len(list) {
			t.Fatalf("claims.py %s said %q (%v)", mode, out, err)
		}
		return got
	}
	pySays := judge("judge")
	for i, name := range names {
		if pySays[i] != goSays[i] {
			t.Errorf("%s: Python says %s, Go %s", name, pySays[i], goSays[i])
		}
	}
	disagree := 0
	for i, l := range judge("judge-pid-only") {
		if l != goSays[i] {
			disagree++
		}
	}
	if disagree == 0 {
		t.Error("CONTROL: a pid-only judge agreed with Go on every owner: the comparison cannot see a wrong rule")
	}
	t.Logf("%d owners judged alike by Go and Python (dead: %d); a pid-only judge disagrees on %d", len(names), strings.Count(strings.Join(goSays, " "), "dead"), disagree)
}

// TestGoReapsPythonClaims: Python agents take claims recorded with their
// own owner; the killed ones' claims are released by Go's Reap, exactly,
// and the live one's kept.
func TestGoReapsPythonClaims(t *testing.T) {
	needPython(t)
	f := newFleet(t)
	var owners []*child
	var agents [][]string
	for i := range 3 {
		a := ids("py"+strconv.Itoa(i)+"-", 2)
		c := startPython(t, append([]string{"register", f.dir}, a...)...)
		c.expect("ready")
		owners, agents = append(owners, c), append(agents, a)
	}
	all := slices.Concat(agents...)
	owners[0].kill()
	owners[1].kill()
	res, err := f.reap(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := releasedIDs(res), sorted(agents[0], agents[1]); !slices.Equal(got, want) {
		t.Fatalf("Go released %v; want the killed Python agents' %v", got, want)
	}
	s := f.snapshot(t, all)
	if err := s.check(); err != nil || s.reg.ActiveCount != 2 || !slices.Equal(s.registered(), sorted(agents[2])) {
		t.Fatalf("after the reap: active %d, registered %v, %v", s.reg.ActiveCount, s.registered(), err)
	}
}

// TestPythonReapsGoClaims: Go agents take claims; the killed ones' are
// released by two Python reapers and a Go reaper running at once, each
// claim once, and the live ones' kept.
func TestPythonReapsGoClaims(t *testing.T) {
	needPython(t)
	f := newFleet(t)
	owners, agents := startOwners(t, f, "go", 4, 3)
	all := slices.Concat(agents...)
	for _, c := range owners[:3] {
		c.kill()
	}
	reapers := []*child{startPython(t, "reap", f.dir), startPython(t, "reap", f.dir), startHelper(t, "reaper", []string{"CLAIM_DIR=" + f.dir, "CLAIM_GOROUTINES=1"})}
	for _, r := range reapers {
		r.send("go")
	}
	var released []string
	for _, r := range reapers {
		for {
			l := r.line()
			if l == "done" {
				break
			}
			id, ok := strings.CutPrefix(l, "released ")
			if !ok {
				t.Fatalf("reaper %d said %q", r.pid(), l)
			}
			released = append(released, id)
		}
		if err := r.close(); err != nil {
			t.Fatalf("reaper %d: %v\n%s", r.pid(), err, r.stderr)
		}
	}
	slices.Sort(released)
	if want := sorted(agents[0], agents[1], agents[2]); !slices.Equal(released, want) {
		t.Fatalf("released %v; want each of the killed Go agents' %v once", released, want)
	}
	s := f.snapshot(t, all)
	if err := s.check(); err != nil || s.reg.ActiveCount != 3 || !slices.Equal(s.registered(), sorted(agents[3])) {
		t.Fatalf("after the reapers: active %d, registered %v, %v", s.reg.ActiveCount, s.registered(), err)
	}
}
