package slots_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/claim"
	"github.com/agentstate/core/status/slots"
)

// A fleetMember is a dispatcher program and the agent program it starts
// (doc.go gives their line protocol).
type fleetMember struct {
	name              string
	dispatcher, agent agentCmd
}

// fleetMembers are the members a fleet draws its dispatchers and agents
// from: Go's, shell's with corestate, and Python's (testdata). A member in another
// language joins by being added to this list, its programs following
// doc.go's protocol.
func fleetMembers(t *testing.T) []fleetMember {
	self := []string{os.Args[0], "-test.run=^$"}
	goMember := fleetMember{
		name:       "go",
		dispatcher: agentCmd{Argv: self, Env: []string{helperEnv + "=dispatcher"}},
		agent:      agentCmd{Argv: self, Env: []string{helperEnv + "=agent"}},
	}
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	path := "PATH=" + corestateDir(t) + string(os.PathListSeparator) + os.Getenv("PATH")
	shMember := fleetMember{
		name:       "sh",
		dispatcher: agentCmd{Argv: []string{filepath.Join(testdata, "dispatcher.sh")}, Env: []string{path}},
		agent:      agentCmd{Argv: []string{filepath.Join(testdata, "agent.sh")}, Env: []string{path}},
	}
	return []fleetMember{goMember, shMember, pythonMember(t)}
}

// corestateBin is the corestate program the shell members run, built once
// per test binary (TestMain removes it).
var corestateBin struct {
	once sync.Once
	dir  string
	err  error
}

// corestateDir returns the directory of a corestate built from this
// checkout, for PATH.
func corestateDir(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"sh", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the shell members need %s: %v", tool, err)
		}
	}
	corestateBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "slots-proof-bin")
		if err != nil {
			corestateBin.err = err
			return
		}
		corestateBin.dir = dir
		out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "corestate"), "github.com/agentstate/core/cmd/corestate").CombinedOutput()
		if err != nil {
			corestateBin.err = fmt.Errorf("go build corestate: %v\n%s", err, out)
		}
	})
	if corestateBin.err != nil {
		t.Fatal(corestateBin.err)
	}
	return corestateBin.dir
}

// A fleetRun is one run of the fleet: its settings and what it saw.
type fleetRun struct {
	t       *testing.T
	mode    string // FLEET_MODE
	tasks   int
	kill    bool // kill agents and dispatchers at random
	killDis bool // dispatchers too
	maxConc int
	rngMu   sync.Mutex
	rng     *rand.Rand

	dir, reg string
	members  []fleetMember
	reports  *os.File // the test's copy of fd 3's write end
	barrier  *os.File // the test's copy of fd 4's write end

	mu        sync.Mutex
	agents    map[string]*agentSeen // by slot ID
	killed    map[string]bool       // slot IDs whose agent the test killed
	longIDs   []string              // slots of long agents, for parents
	answers   map[string]int        // first word of dispatchers' answers
	pairs     map[string]int        // dispatchers started, by member
	aborted   []string              // "ID PROMPT"
	retried   map[string]string     // task -> the ID its first spawn got
	exists    int                   // retries answered with the first ID
	paused    int
	errs      []string
	checks    int
	violation error
	violated  int
}

type agentSeen struct {
	pid              int
	start            uint64
	adopted, ended   bool // ended: released or refused
	long, lostByDisp bool
	task             string // of a lost slot
}

func newFleetRun(t *testing.T, mode string, members []fleetMember, tasks int, seed uint64) *fleetRun {
	f := &fleetRun{t: t, mode: mode, tasks: tasks, maxConc: 4, rng: rand.New(rand.NewPCG(seed, 7)),
		dir: t.TempDir(), members: members,
		agents: map[string]*agentSeen{}, killed: map[string]bool{}, answers: map[string]int{}, pairs: map[string]int{}, retried: map[string]string{}}
	f.reg = filepath.Join(f.dir, "registry.json")
	writeJSON(t, f.reg, fmt.Sprintf(`{"agents": [], "max_concurrent": %d, "max_depth": 2}`, f.maxConc))
	for i := range tasks {
		name := taskName(i)
		if err := os.Mkdir(filepath.Join(f.dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		writeJSON(t, filepath.Join(f.dir, name, "status.json"), `{"status": "queued"}`)
	}
	return f
}

// intN is rng.IntN for any goroutine.
func (f *fleetRun) intN(n int) int {
	f.rngMu.Lock()
	defer f.rngMu.Unlock()
	return f.rng.IntN(n)
}

func taskName(i int) string { return fmt.Sprintf("t%02d", i) }

func writeJSON(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A dispatcherProc is one dispatcher process, driven by the test.
type dispatcherProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func (f *fleetRun) startDispatcher() *dispatcherProc {
	f.t.Helper()
	m := f.members[f.intN(len(f.members))]
	agentMember := f.members[f.intN(len(f.members))]
	agent, _ := json.Marshal(agentMember.agent)
	f.mu.Lock()
	f.pairs[m.name+" dispatcher, "+agentMember.name+" agents"]++
	f.mu.Unlock()
	cmd := exec.Command(m.dispatcher.Argv[0], m.dispatcher.Argv[1:]...)
	cmd.Env = append(os.Environ(), m.dispatcher.Env...)
	cmd.Env = append(cmd.Env, "FLEET_REG="+f.reg, "FLEET_MODE="+f.mode, "FLEET_AGENT="+string(agent))
	cmd.ExtraFiles = []*os.File{f.reports, f.barrier}
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		f.t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		f.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	d := &dispatcherProc{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	f.t.Cleanup(func() {
		d.cmd.Process.Kill()
		d.cmd.Wait()
	})
	return d
}

// ask sends one command and returns the answer ("" if the dispatcher died).
func (d *dispatcherProc) ask(cmd string) string {
	if _, err := io.WriteString(d.in, cmd+"\n"); err != nil {
		return ""
	}
	if !d.out.Scan() {
		return ""
	}
	return d.out.Text()
}

func (d *dispatcherProc) kill() {
	d.cmd.Process.Kill()
	d.in.Close()
}

// readReports records the agents' reports until every writer has closed
// fd 3.
func (f *fleetRun) readReports(r io.Reader) {
	lines := bufio.NewScanner(r)
	for lines.Scan() {
		w := strings.Fields(lines.Text())
		if len(w) < 2 {
			f.mu.Lock()
			f.errs = append(f.errs, "agent: "+lines.Text())
			f.mu.Unlock()
			continue
		}
		f.mu.Lock()
		a := f.agents[w[1]]
		if a == nil {
			a = &agentSeen{}
			f.agents[w[1]] = a
		}
		switch w[0] {
		case "started":
			a.pid, _ = strconv.Atoi(w[2])
			a.start, _ = strconv.ParseUint(w[3], 10, 64)
		case "adopted":
			a.adopted = true
		case "released", "refused":
			a.ended = true
		case "long":
			a.long = true
		default:
			f.errs = append(f.errs, "agent: "+lines.Text())
		}
		f.mu.Unlock()
	}
}

// check reads the registry and every task under their locks, and returns
// the first broken invariant.
func (f *fleetRun) check(ctx context.Context) error {
	reg := status.NewStore[slots.Registry](f.reg)
	docs := []status.AnyStore{reg}
	for i := range f.tasks {
		docs = append(docs, status.NewStore[status.Status](filepath.Join(f.dir, taskName(i), "status.json")))
	}
	tx, err := status.LoadAll(ctx, docs...)
	if err != nil {
		return err
	}
	g, err := reg.In(tx)
	if err != nil {
		return err
	}
	switch {
	case len(g.Agents) > g.MaxConcurrent:
		return fmt.Errorf("%d active slots, max_concurrent %d", len(g.Agents), g.MaxConcurrent)
	case g.ActiveCount != len(g.Agents) || g.TotalSpawned < len(g.Agents):
		return fmt.Errorf("active_count %d, total_spawned %d, %d slots", g.ActiveCount, g.TotalSpawned, len(g.Agents))
	}
	keys, ids := map[string]bool{}, map[string]bool{}
	for _, s := range g.Agents {
		ids[s.ID] = true
	}
	for _, s := range g.Agents {
		if keys[s.Key] {
			return fmt.Errorf("two active slots with the key %s", s.Key)
		}
		keys[s.Key] = true
		if s.Parent != "" && !ids[s.Parent] {
			return fmt.Errorf("slot %s without its parent %s", s.ID, s.Parent)
		}
	}
	for i := range f.tasks {
		task, err := docs[i+1].(*status.Store[status.Status]).In(tx)
		if err != nil {
			return err
		}
		running := task.State == status.Running
		if running != keys[taskName(i)] {
			return fmt.Errorf("task %s: running %v, held by a slot %v", taskName(i), running, keys[taskName(i)])
		}
	}
	return nil
}

// run drives the fleet through every task and returns once it is quiet:
// no dispatcher spawns, and every agent has released its slot, refused, or
// adopted and keeps it.
func (f *fleetRun) run(ctx context.Context, dispatchers int) {
	t := f.t
	rr, rw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	br, bw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	f.reports, f.barrier = rw, bw
	reportsDone := make(chan struct{})
	go func() { f.readReports(rr); close(reportsDone) }()
	t.Cleanup(func() {
		f.killAgents()
		rw.Close()
		<-reportsDone
		rr.Close()
	})
	quiet := make(chan struct{})
	go func() { io.Copy(io.Discard, br); close(quiet) }()

	stop := make(chan struct{})
	var bg sync.WaitGroup
	bg.Go(func() { // the checker
		for {
			err := f.check(ctx)
			f.mu.Lock()
			f.checks++
			if err != nil {
				f.violated++
				if f.violation == nil {
					f.violation = err
				}
			}
			f.mu.Unlock()
			select {
			case <-stop:
				return
			default:
			}
		}
	})

	commands := make(chan string)
	var procsMu sync.Mutex
	var procs []*dispatcherProc
	var drivers sync.WaitGroup
	for range dispatchers {
		drivers.Go(func() {
			var d *dispatcherProc
			for cmd := range commands {
				for {
					if d == nil {
						procsMu.Lock()
						d = f.startDispatcher()
						procs = append(procs, d)
						procsMu.Unlock()
					}
					answer := d.ask(cmd)
					if answer == "" { // killed by the killer: a new one takes over
						d = nil
						continue
					}
					f.record(cmd, answer)
					if strings.HasPrefix(answer, "paused ") { // between Reserve and the hand-over
						d.kill()
						d = nil
					}
					break
				}
			}
			if d != nil {
				if d.ask("stop") != "stopped" {
					t.Errorf("a dispatcher did not stop")
				}
			}
		})
	}
	// The killer stops before the last fifth of the spawns, so that some
	// agents live at the end.
	killStop := make(chan struct{})
	if f.kill {
		bg.Go(func() { f.killer(killStop, &procsMu, &procs) })
	}
	for i := range f.tasks {
		if i == f.tasks*4/5 {
			close(killStop)
		}
		task := taskName(i)
		commands <- f.spawnCommand(i, task)
		if f.intN(4) == 0 { // a retried spawn
			commands <- fmt.Sprintf("spawn %s - long", task)
		}
	}
	close(commands)
	drivers.Wait()
	close(stop)
	bg.Wait()
	bw.Close()
	select { // every agent has decided; no dispatcher spawns
	case <-quiet:
	case <-ctx.Done():
		t.Fatalf("the fleet did not quiet down: %v", ctx.Err())
	}
	br.Close()
}

// spawnCommand chooses the flags of task i's spawn; a few are fixed so that
// every run has each case.
func (f *fleetRun) spawnCommand(i int, task string) string {
	flags := []string{"short"}
	switch {
	case i%10 == 3:
		flags = append(flags, "pause-before-start")
	case i%10 == 6:
		flags = append(flags, "pause-before-handover")
	case i%10 == 8:
		flags = append(flags, "fail")
	}
	if i%3 == 1 || f.mode == "nohandover" {
		flags[0] = "long"
	}
	parent := "-"
	f.mu.Lock()
	if len(f.longIDs) > 0 && f.intN(3) == 0 {
		parent = f.longIDs[f.intN(len(f.longIDs))]
	}
	f.mu.Unlock()
	return fmt.Sprintf("spawn %s %s %s", task, parent, strings.Join(flags, ","))
}

// record notes a dispatcher's answer.
func (f *fleetRun) record(cmd, answer string) {
	w := strings.Fields(answer)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers[w[0]]++
	c := strings.Fields(cmd)
	switch w[0] {
	case "ok":
		if strings.Contains(cmd, "long") {
			f.longIDs = append(f.longIDs, w[1])
		}
		f.retried[c[1]] = w[1]
	case "exists":
		// The first spawn's answer may have been lost with its dispatcher.
		if first, ok := f.retried[c[1]]; ok && first != w[1] {
			f.errs = append(f.errs, fmt.Sprintf("%s: exists %s, but the first spawn got %s", cmd, w[1], first))
		}
		f.exists++
	case "aborted":
		f.aborted = append(f.aborted, w[1]+" "+w[2])
	case "paused":
		f.paused++
	case "lost":
		a := f.agents[w[1]]
		if a == nil {
			a = &agentSeen{}
			f.agents[w[1]] = a
		}
		a.lostByDisp, a.task = true, c[1]
	case "refused", "conflict":
	default:
		f.errs = append(f.errs, fmt.Sprintf("%s: %s", cmd, answer))
	}
}

// killer kills agents (and, if killDis, dispatchers) at random moments
// until stop.
func (f *fleetRun) killer(stop <-chan struct{}, procsMu *sync.Mutex, procs *[]*dispatcherProc) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(time.Duration(50+f.intN(350)) * time.Millisecond): // when faults happen, not a synchronisation
		}
		if f.killDis && f.intN(5) == 0 {
			procsMu.Lock()
			if len(*procs) > 0 {
				(*procs)[f.intN(len(*procs))].cmd.Process.Kill()
			}
			procsMu.Unlock()
			continue
		}
		f.mu.Lock()
		var live []string
		for id, a := range f.agents {
			if a.pid > 0 && !a.ended && !f.killed[id] {
				live = append(live, id)
			}
		}
		slices.Sort(live)
		if len(live) > 0 {
			id := live[f.intN(len(live))]
			if killAgent(f.agents[id]) {
				f.killed[id] = true
			}
		}
		f.mu.Unlock()
	}
}

func (f *fleetRun) killAgents() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, a := range f.agents {
		if a.pid > 0 && !f.killed[id] {
			killAgent(a)
		}
	}
}

// killAgent sends SIGKILL to the agent through a pidfd, after checking
// that the pid still names it (its start time): a pid freed and reused by
// another process is never signalled.
func killAgent(a *agentSeen) bool {
	fd, _, errno := syscall.Syscall(434 /* pidfd_open */, uintptr(a.pid), 0, 0)
	if errno != 0 {
		return false // gone
	}
	defer syscall.Close(int(fd))
	o, err := claim.Of(a.pid)
	if err != nil || o.Start != a.start {
		return false
	}
	_, _, errno = syscall.Syscall6(424 /* pidfd_send_signal */, fd, uintptr(syscall.SIGKILL), 0, 0, 0, 0)
	return errno == 0
}

// finish reaps once more and compares the registry with the agents alive:
// it returns what differs.
func (f *fleetRun) finish(ctx context.Context) []string {
	reg := status.NewStore[slots.Registry](f.reg)
	env := fleetEnv{reg: reg}
	if _, err := slots.Reap(ctx, reg, env.failTask); errors.Is(err, slots.ErrInvalid) {
		return []string{"the final reap: " + err.Error()} // e.g. a child without its parent
	} else if err != nil {
		f.t.Fatal(err)
	}
	if err := f.check(ctx); err != nil {
		return []string{"after the final reap: " + err.Error()}
	}
	g, err := reg.Load(ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	byID := map[string]slots.Slot{}
	for _, s := range g.Agents {
		byID[s.ID] = s
	}
	// The slots expected: those of the agents alive, and the parents they
	// keep.
	want := map[string]bool{}
	for id, a := range f.agents {
		if a.pid == 0 || a.ended || f.killed[id] || a.lostByDisp || (f.mode == "handover" && !a.adopted) {
			continue
		}
		for p := id; p != "" && !want[p]; p = byID[p].Parent {
			want[p] = true
		}
	}
	var diff []string
	for id := range want {
		if _, ok := byID[id]; !ok {
			diff = append(diff, "live agent "+id+" has no slot")
		}
	}
	for id, s := range byID {
		if !want[id] {
			diff = append(diff, fmt.Sprintf("slot %s (task %s) has no live agent", id, s.Key))
		}
	}
	admitted := 0
	for i := range f.tasks {
		st, err := status.NewStore[status.Status](filepath.Join(f.dir, taskName(i), "status.json")).Load(ctx)
		if err != nil {
			f.t.Fatal(err)
		}
		if st.State != status.Queued {
			admitted++
		}
	}
	if g.TotalSpawned != admitted {
		diff = append(diff, fmt.Sprintf("total_spawned %d, %d tasks admitted", g.TotalSpawned, admitted))
	}
	slices.Sort(diff)
	return diff
}

// TestFleetUnderKills: the mixed fleet under kill -9 of agents and
// dispatchers, with a checker all the time, and the final reap.
func TestFleetUnderKills(t *testing.T) {
	fleetUnderKills(t, fleetMembers(t), 60)
}

// fleetUnderKills runs a fleet of members, spawning tasks, under kill -9,
// and checks it.
func fleetUnderKills(t *testing.T, members []fleetMember, tasks int) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	f := newFleetRun(t, "handover", members, tasks, seed)
	f.kill, f.killDis = true, true
	f.run(ctx, 3)
	for _, e := range f.errs {
		t.Error(e)
	}
	if f.violation != nil {
		t.Errorf("the checker saw %d of %d snapshots break the invariant; first: %v", f.violated, f.checks, f.violation)
	}
	if diff := f.finish(ctx); len(diff) > 0 {
		t.Errorf("after the final reap the registry is not the live agents:\n%s", strings.Join(diff, "\n"))
	}
	f.checkAborts(ctx)
	for id, a := range f.agents {
		// A live dispatcher's HandOver finds the slot gone only if its
		// agent adopted it and then released it, or died and was reaped.
		if !a.lostByDisp {
			continue
		}
		st, err := status.NewStore[status.Status](filepath.Join(f.dir, a.task, "status.json")).Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !a.adopted || (!f.killed[id] && st.State != status.Completed) {
			t.Errorf("HandOver found slot %s released, but its agent adopted %v, was killed %v, its task is %s", id, a.adopted, f.killed[id], st.State)
		}
	}
	if f.paused == 0 || f.answers["aborted"] == 0 {
		t.Errorf("no dispatcher paused (%d) or aborted (%d): the run missed a case", f.paused, f.answers["aborted"])
	}
	released, live := 0, 0
	for id, a := range f.agents {
		switch {
		case a.ended && a.adopted:
			released++
		case !a.ended && !f.killed[id] && a.adopted:
			live++
		}
	}
	t.Logf("dispatchers %v; %d snapshots; answers %v; %d retries got their slot back; %d agents: %d killed, %d released, %d alive at the end",
		f.pairs, f.checks, f.answers, f.exists, len(f.agents), len(f.killed), released, live)
}

// checkAborts: an aborted spawn left no slot, its task blocked, and the
// prompt file the slot recorded is gone.
func (f *fleetRun) checkAborts(ctx context.Context) {
	for _, a := range f.aborted {
		id, prompt, _ := strings.Cut(a, " ")
		if _, err := os.Stat(prompt); !errors.Is(err, os.ErrNotExist) {
			f.t.Errorf("aborted %s: prompt %s still there (%v)", id, prompt, err)
		}
		st, err := status.NewStore[status.Status](filepath.Join(filepath.Dir(prompt), "status.json")).Load(ctx)
		if err != nil || st.State != status.Blocked {
			f.t.Errorf("aborted %s: task %v, %v", id, st.State, err)
		}
	}
}

// TestFleetControlBareReadModifyWrite: the same fleet admitting, releasing
// and reaping with the registry read, changed and written back without its
// lock (the task changed in a call of its own) must be caught: by the
// checker (a running task without its slot, counts off, over the cap) or
// by the final comparison.
func TestFleetControlBareReadModifyWrite(t *testing.T) {
	bareFleetCaught(t, fleetMembers(t)[:1])
}

// bareFleetCaught runs a fleet of members in the bare mode until it is
// caught, at most three times.
func bareFleetCaught(t *testing.T, members []fleetMember) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	for attempt := 1; attempt <= 3; attempt++ {
		f := newFleetRun(t, "bare", members, 40, uint64(attempt))
		f.run(ctx, 3)
		diff := f.finish(ctx)
		if f.violation != nil || len(diff) > 0 {
			t.Logf("CONTROL caught (attempt %d): checker %d of %d snapshots, first %v; final: %v", attempt, f.violated, f.checks, f.violation, diff)
			return
		}
	}
	t.Fatal("CONTROL: the bare read-modify-write fleet was not caught in 3 runs: the harness does not see the race")
}

// TestFleetControlNoHandover: a fleet whose slots stay with their
// dispatchers (no hand-over, no adopt) and whose agents are killed while
// their dispatchers live must be caught by the final comparison: Reap
// cannot free those slots.
func TestFleetControlNoHandover(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	f := newFleetRun(t, "nohandover", fleetMembers(t)[:1], 20, 1)
	f.kill = true
	f.run(ctx, 3)
	diff := f.finish(ctx)
	if !slices.ContainsFunc(diff, func(d string) bool { return strings.Contains(d, "has no live agent") }) {
		t.Fatalf("CONTROL: no slot of a killed agent was left (killed %d): %v", len(f.killed), diff)
	}
	t.Logf("CONTROL caught: %s", strings.Join(diff, "; "))
}
