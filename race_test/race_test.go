package racetest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Sizes. A run of the module's side makes about 300 acknowledged durable
// updates and 10,000-25,000 unlocked reads over 3 processes;
// SOAK=1 scales it up.
func sizes() (servers, workspaces int) {
	if soak() {
		return 5, 64
	}
	return 3, 12
}

// maxPasses bounds the scanning loops of an implementation that never
// converges (the bare control can leave a workspace stuck); the module's
// runs end by themselves far below it.
const maxPasses = 4000

func TestAgentWorkloadModule(t *testing.T) {
	servers, workspaces := sizes()
	v := runFleet(t, "module", servers, workspaces, 0)
	t.Logf("module: %s", v)

	// The properties the suite exists for.
	if v.Lost != 0 || v.Phantom != 0 {
		t.Errorf("lost updates: %d, phantom updates: %d (want 0, 0)", v.Lost, v.Phantom)
	}
	if v.Torn != 0 {
		t.Errorf("torn reads: %d (want 0)", v.Torn)
	}
	if v.Regressions != 0 {
		t.Errorf("state regressions: %d (want 0): %q", v.Regressions, v.Examples)
	}
	if len(v.Errors) > 0 || len(v.ShutdownErrs) > 0 {
		t.Errorf("unexpected errors: %q; shutdown: %q", v.Errors, v.ShutdownErrs)
	}
	if len(v.GaveUp) > 0 || v.Unfinished != 0 {
		t.Errorf("did not converge: %d workspaces not completed, loops that gave up: %q", v.Unfinished, v.GaveUp)
	}
	// The workload really went through every path it claims to cover,
	// and really shared files between processes: otherwise zero
	// violations would prove nothing.
	v.requireCoverage(t, workspaces, servers)
}

// The controls: the same workload on a bare read-modify-write (no lock).
// They pass only if the suite DETECTS the bug there.

func TestAgentWorkloadControlBareInPlace(t *testing.T) {
	controlDetects(t, "bare-inplace")
}

func TestAgentWorkloadControlBareAtomic(t *testing.T) {
	// Atomic writes alone (no lock): no torn reads, but updates are
	// still lost and states still go backwards.
	controlDetects(t, "bare-atomic")
}

func controlDetects(t *testing.T, impl string) {
	servers, workspaces := sizes()
	v := runFleet(t, impl, servers, workspaces, 0)
	t.Logf("%s: %s", impl, v)
	if v.Lost+v.Phantom+v.Torn+v.Regressions == 0 {
		t.Fatalf("CONTROL: the suite saw no lost update, torn read or regression on %s: the harness does not detect the bug", impl)
	}
}

// TestShutdownMidWorkload stops a server in the middle of its work (after a
// count of acknowledged updates, not after a time), checks that shutdown
// leaves no goroutine (goleak in TestMain) and that everything acknowledged
// is on disk, then restarts a server on the same root, which finishes the
// work from where the first one left it.
func TestShutdownMidWorkload(t *testing.T) {
	_, workspaces := sizes()
	root := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	st, _ := storeFor("module")
	p := params{Impl: "module", Dir: root, Servers: 1, Workspaces: workspaces, MaxPasses: maxPasses}

	p.StopAfter = workspaces * 4
	first := newServer(p, st).run(ctx)
	if first.ShutdownErr != "" {
		t.Fatalf("shutdown mid-work: %s", first.ShutdownErr)
	}
	v := verify(t, root, workspaces, []*result{first})
	t.Logf("after shutdown: %s", v)
	if v.Unfinished == 0 {
		t.Fatalf("the first server finished everything: StopAfter=%d did not stop it mid-work", p.StopAfter)
	}
	if v.Lost != 0 || v.Phantom != 0 || v.Torn != 0 || v.Regressions != 0 || len(v.Errors) > 0 {
		t.Fatalf("after shutdown mid-work: %s", v)
	}

	p.StopAfter, p.Incarnation = 0, 1
	second := newServer(p, st).run(ctx)
	v = verify(t, root, workspaces, []*result{first, second})
	t.Logf("after restart: %s", v)
	if v.Lost != 0 || v.Phantom != 0 || v.Torn != 0 || v.Regressions != 0 || len(v.Errors) > 0 ||
		len(v.ShutdownErrs) > 0 || len(v.GaveUp) > 0 || v.Unfinished != 0 {
		t.Fatalf("after restart: %s", v)
	}
}

// --- cross-process fleet ---

const envServer = "RACETEST_SERVER" // a child's params, as JSON

// TestHelperProcess is not a test: it is the body of the extra servers the
// fleet tests start by re-executing the test binary. In the parent (no
// params in the environment) it returns at once. A child reports
// "RACE-READY", waits for a line on stdin (the start gate, so that all
// servers start together), runs its server and reports "RACE-RESULT
// <json>". It then returns normally, so TestMain's goleak check runs in
// the child too and a leak makes the child fail.
func TestHelperProcess(t *testing.T) {
	raw := os.Getenv(envServer)
	if raw == "" {
		return
	}
	var p params
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		t.Fatalf("child params: %v", err)
	}
	st, err := storeFor(p.Impl)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("RACE-READY")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		t.Fatalf("child gate: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res := newServer(p, st).run(ctx)
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("RACE-RESULT %s\n", b)
}

type child struct {
	name   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Scanner
	stderr bytes.Buffer
}

func startChild(t *testing.T, p params) *child {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), envServer+"="+string(b))
	return startProcess(t, fmt.Sprintf("server %d", p.Server), cmd)
}

// startProcess starts cmd and waits for its "RACE-READY" line.
func startProcess(t *testing.T, name string, cmd *exec.Cmd) *child {
	t.Helper()
	c := &child{name: name, cmd: cmd}
	c.cmd.Stderr = &c.stderr
	var err error
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		if c.cmd.ProcessState == nil { // a test that failed half-way leaves no child behind
			_ = c.cmd.Process.Kill()
			_ = c.cmd.Wait()
		}
	})
	c.out = bufio.NewScanner(stdout)
	c.out.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for c.out.Scan() {
		if c.out.Text() == "RACE-READY" {
			return c
		}
	}
	_ = c.cmd.Wait()
	t.Fatalf("%s did not get ready: %s", name, c.stderr.String())
	return nil
}

// result reads the child's output to the end, waits for it and decodes its
// "RACE-RESULT <json>" line into v.
func (c *child) result(t *testing.T, v any) {
	t.Helper()
	found := false
	var other []string
	for c.out.Scan() {
		line := c.out.Text()
		if js, ok := strings.CutPrefix(line, "RACE-RESULT "); ok {
			if err := json.Unmarshal([]byte(js), v); err != nil {
				t.Fatalf("%s: result: %v", c.name, err)
			}
			found = true
		} else if line != "PASS" {
			other = append(other, line)
		}
	}
	if err := c.cmd.Wait(); err != nil || !found {
		t.Fatalf("%s: %v (result: %v)\nstdout: %s\nstderr: %s", c.name, err, found, strings.Join(other, "\n"), c.stderr.String())
	}
}

// runFleet runs the workload with impl on one fresh workspace root: server
// 0 in this process, servers 1.. in re-executed children and, if pyRounds
// > 0, the Python QA agent (testdata/qa_agent.py) making pyRounds passes,
// all released by one start gate. It returns the verdict over every
// participant's result and the final documents.
func runFleet(t *testing.T, impl string, servers, workspaces, pyRounds int) verdict {
	t.Helper()
	st, err := storeFor(impl)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	base := params{Impl: impl, Dir: dir, Servers: servers, Workspaces: workspaces, MaxPasses: maxPasses}
	var children []*child
	for i := 1; i < servers; i++ {
		p := base
		p.Server = i
		children = append(children, startChild(t, p))
	}
	var py *child
	if pyRounds > 0 {
		if err := os.MkdirAll(wsRoot(dir), 0o755); err != nil {
			t.Fatal(err)
		}
		py = startProcess(t, "python qa agent", exec.Command("python3", filepath.Join("testdata", "qa_agent.py"),
			wsRoot(dir), strconv.Itoa(workspaces), strconv.Itoa(pyRounds)))
		children = append(children, py)
	}
	for _, c := range children { // the start gate
		if _, err := io.WriteString(c.stdin, "go\n"); err != nil {
			t.Fatal(err)
		}
		c.stdin.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	results := []*result{newServer(base, st).run(ctx)}
	for _, c := range children {
		res := new(result)
		if c == py {
			var done map[string]int
			c.result(t, &done)
			res.Acks = map[string]map[string]int{}
			for ws, n := range done {
				res.Acks[ws] = map[string]int{pyActor: n}
			}
		} else {
			c.result(t, res)
		}
		results = append(results, res)
	}
	return verify(t, dir, workspaces, results)
}

// pyActor is the Python agent's name in race_acks.
const pyActor = "py/qa"

// --- verdict ---

// verdict compares what the servers were told succeeded with the final
// documents, and adds up what their readers saw.
type verdict struct {
	Lost         int // acknowledged updates missing from the final documents
	Phantom      int // updates in the documents that nobody was told succeeded
	Torn         int // reads that could not decode what they found (final reads included)
	Regressions  int // states seen going backwards, acknowledged completions reverted
	Unfinished   int // workspaces not completed at the end
	SharedFiles  int // workspaces updated by actors of two or more processes
	Acked        int // updates acknowledged to the suite's actors (race_acks increments)
	PyAcked      int // of which committed by the Python agent
	Claims       int
	Reads        int
	Ops          map[string]int
	Examples     []string
	Errors       []string
	ShutdownErrs []string
	GaveUp       []string
}

func (v verdict) String() string {
	return fmt.Sprintf("lost=%d phantom=%d torn=%d regressions=%d unfinished=%d acked=%d (python %d) claims=%d reads=%d shared-files=%d ops=%v examples=%q errors=%q gave-up=%q",
		v.Lost, v.Phantom, v.Torn, v.Regressions, v.Unfinished, v.Acked, v.PyAcked, v.Claims, v.Reads, v.SharedFiles, v.Ops, v.Examples, v.Errors, v.GaveUp)
}

func verify(t *testing.T, root string, workspaces int, results []*result) verdict {
	t.Helper()
	v := verdict{Ops: map[string]int{}}
	acks := map[string]map[string]int{}
	claims := map[string]int{}
	completed := map[string][]string{}
	for _, r := range results {
		v.Torn += r.Torn
		v.Regressions += r.Regressions
		v.Reads += r.Reads
		v.Examples = append(v.Examples, r.Examples...)
		v.Errors = append(v.Errors, r.Errors...)
		v.GaveUp = append(v.GaveUp, r.GaveUp...)
		if r.ShutdownErr != "" {
			v.ShutdownErrs = append(v.ShutdownErrs, r.ShutdownErr)
		}
		for op, n := range r.Ops {
			v.Ops[op] += n
		}
		for ws, m := range r.Acks {
			if acks[ws] == nil {
				acks[ws] = map[string]int{}
			}
			for actor, n := range m {
				acks[ws][actor] += n
				v.Acked += n
			}
		}
		for ws, n := range r.Claims {
			claims[ws] += n
			v.Claims += n
		}
		for ws, ids := range r.Completed {
			completed[ws] = append(completed[ws], ids...)
		}
	}
	for w := range workspaces {
		ws := wsName(w)
		data, err := os.ReadFile(wsPath(root, w))
		if errors.Is(err, os.ErrNotExist) {
			v.Unfinished++
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var d doc
		if err := json.Unmarshal(data, &d); err != nil {
			v.Torn++
			v.Examples = append(v.Examples, fmt.Sprintf("%s: final document undecodable: %v", ws, err))
			continue
		}
		if d.State != "completed" {
			v.Unfinished++
			v.Examples = append(v.Examples, fmt.Sprintf("%s: final state %s (%s)", ws, d.State, d.ProcessID))
		}
		processes := map[string]bool{}
		for _, actor := range sortedKeys(acks[ws]) {
			want, got := acks[ws][actor], d.Acks[actor]
			if got < want {
				v.Lost += want - got
			}
			processes[strings.SplitN(actor, "/", 2)[0]] = true
		}
		for actor, got := range d.Acks {
			if want := acks[ws][actor]; got > want {
				v.Phantom += got - want
			}
		}
		// The Python agent also counts in a field of its own that no Go
		// struct declares: every Go writer must have kept it.
		var py struct {
			QA struct {
				Checked int `json:"checked"`
			} `json:"qa"`
		}
		if err := json.Unmarshal(data, &py); err != nil {
			t.Fatal(err)
		}
		v.PyAcked += acks[ws][pyActor]
		if want := acks[ws][pyActor]; py.QA.Checked < want {
			v.Lost += want - py.QA.Checked
		} else if py.QA.Checked > want {
			v.Phantom += py.QA.Checked - want
		}
		if len(processes) >= 2 {
			v.SharedFiles++
		}
		if d.Runs < claims[ws] {
			v.Lost += claims[ws] - d.Runs
		} else if d.Runs > claims[ws] {
			v.Phantom += d.Runs - claims[ws]
		}
		switch ids := completed[ws]; {
		case len(ids) > 1:
			v.Regressions++
			v.Examples = append(v.Examples, fmt.Sprintf("%s: completed %d times: %q", ws, len(ids), ids))
		case len(ids) == 1 && (d.State != "completed" || d.ProcessID != ids[0]):
			v.Regressions++
			v.Examples = append(v.Examples, fmt.Sprintf("%s: completion of %s acknowledged, final state %s (%s)", ws, ids[0], d.State, d.ProcessID))
		}
	}
	if len(v.Examples) > 8 {
		v.Examples = v.Examples[:8]
	}
	return v
}

// requireCoverage fails unless the workload exercised every path: without
// this, a workload that did nothing would pass with zero violations.
func (v verdict) requireCoverage(t *testing.T, workspaces, servers int) {
	t.Helper()
	if v.Claims < workspaces*finalRun {
		t.Errorf("claims: %d, want >= %d (every workspace runs %d times)", v.Claims, workspaces*finalRun, finalRun)
	}
	if v.Ops["complete"] != workspaces {
		t.Errorf("acknowledged completions: %d, want one per workspace (%d)", v.Ops["complete"], workspaces)
	}
	for _, op := range []string{"create", "claim", "started", "blocked", "fail-dead", "resume", "kill"} {
		if v.Ops[op] == 0 {
			t.Errorf("path %q never succeeded: ops %v", op, v.Ops)
		}
	}
	if servers > 1 && v.SharedFiles == 0 {
		t.Errorf("no workspace was updated by two processes: the cross-process part did not happen")
	}
	if v.Reads == 0 {
		t.Errorf("no reads")
	}
}
