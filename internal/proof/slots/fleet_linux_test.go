package slots_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
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
	docs     int // tasks and spares: every task document
	members  []fleetMember
	reports  *os.File // the test's copy of fd 3's write end
	barrier  *os.File // the test's copy of fd 4's write end
	barrierR *os.File // its read end, for diagnose
	cases    bool     // spawn each fixed case once before the fleet runs

	procsMu sync.Mutex
	procs   []*dispatcherProc // every dispatcher started

	mu        sync.Mutex
	reported  *sync.Cond            // on mu: an agent reported
	agents    map[string]*agentSeen // by slot ID
	killed    map[string]bool       // slot IDs whose agent the test killed
	longIDs   []string              // slots of long agents, for parents
	answers   map[string]int        // first word of dispatchers' answers
	pairs     map[string]int        // dispatchers started, by member
	aborted   []string              // "ID PROMPT"
	retried   map[string]string     // task -> the ID its first spawn got
	exists    int                   // retries answered with the first ID
	paused    int
	caseSeen  map[string]int // the fixed cases done: fail (aborted), pause-before-start, pause-before-handover
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
	last             string // its last report
}

// fixedCases are the spawn flags that every run of fleetUnderKills must
// see done at least once: fail (answered aborted), and the pauses.
var fixedCases = []string{"fail", "pause-before-start", "pause-before-handover"}

func newFleetRun(t *testing.T, mode string, members []fleetMember, tasks int, seed uint64) *fleetRun {
	f := &fleetRun{t: t, mode: mode, tasks: tasks, maxConc: 4, rng: rand.New(rand.NewPCG(seed, 7)),
		dir: t.TempDir(), members: members, docs: tasks + len(fixedCases),
		agents: map[string]*agentSeen{}, killed: map[string]bool{}, answers: map[string]int{}, pairs: map[string]int{}, retried: map[string]string{},
		caseSeen: map[string]int{}}
	f.reported = sync.NewCond(&f.mu)
	f.reg = filepath.Join(f.dir, "registry.json")
	writeJSON(t, f.reg, fmt.Sprintf(`{"agents": [], "max_concurrent": %d, "max_depth": 2}`, f.maxConc))
	for i := range f.docs { // the tasks, then a spare task per fixed case
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
	member string
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *os.File      // the read end of its stdout
	lines  chan string   // its answers, until its stdout ends
	exited chan struct{} // closed once the process has exited
	done   chan struct{} // closed at the test's end: stop reading

	last string // its last command and answer, for diagnose (under fleetRun.mu)
}

// startRandomDispatcher starts a dispatcher of a member drawn at random,
// which starts agents of a member drawn at random.
func (f *fleetRun) startRandomDispatcher() *dispatcherProc {
	f.t.Helper()
	m := f.members[f.intN(len(f.members))]
	return f.startDispatcher(m, f.members[f.intN(len(f.members))])
}

func (f *fleetRun) startDispatcher(m, agentMember fleetMember) *dispatcherProc {
	f.t.Helper()
	agent, _ := json.Marshal(agentMember.agent)
	name := m.name + " dispatcher, " + agentMember.name + " agents"
	f.mu.Lock()
	f.pairs[name]++
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
	// A pipe of the test's own rather than StdoutPipe, whose end Wait
	// closes: the answers are read until the pipe ends, but a process that
	// inherited the dispatcher's stdout may keep it open after the
	// dispatcher's death, so ask watches the process too.
	r, w, err := os.Pipe()
	if err != nil {
		f.t.Fatal(err)
	}
	cmd.Stdout = w
	err = cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		f.t.Fatal(err)
	}
	d := &dispatcherProc{member: name, cmd: cmd, in: in, out: r,
		lines: make(chan string), exited: make(chan struct{}), done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(d.exited)
	}()
	go d.read()
	f.procsMu.Lock()
	f.procs = append(f.procs, d)
	f.procsMu.Unlock()
	f.t.Cleanup(func() {
		d.kill()
		<-d.exited
		close(d.done)
		d.out.Close()
	})
	return d
}

// read passes the dispatcher's answers to lines until its stdout ends.
func (d *dispatcherProc) read() {
	defer close(d.lines)
	out := bufio.NewScanner(d.out)
	for out.Scan() {
		select {
		case d.lines <- out.Text():
		case <-d.done:
			return
		}
	}
}

// ask sends one command and returns the answer: "" if the dispatcher
// died first (its answer, written the moment before, may then be lost:
// the same as a kill a moment earlier), an error if ctx ended first.
func (f *fleetRun) ask(ctx context.Context, d *dispatcherProc, cmd string) (string, error) {
	answer, err := func() (string, error) {
		if _, err := io.WriteString(d.in, cmd+"\n"); err != nil {
			return "", nil
		}
		select {
		case l := <-d.lines:
			return l, nil // "" once lines is closed
		case <-d.exited:
			select { // an answer read already
			case l := <-d.lines:
				return l, nil
			default:
				return "", nil
			}
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}()
	f.mu.Lock()
	d.last = fmt.Sprintf("%q answered %q", cmd, answer)
	f.mu.Unlock()
	return answer, err
}

// kill kills the dispatcher and closes its stdin (which its children, such
// as the shell member's cat, may hold).
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
		a.last = lines.Text()
		f.reported.Broadcast()
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

// awaitStarted waits until the agent of slot id has reported that it
// started, or ctx ends, and returns its pid (0 then).
func (f *fleetRun) awaitStarted(ctx context.Context, id string) int {
	stop := context.AfterFunc(ctx, func() {
		f.mu.Lock()
		f.reported.Broadcast()
		f.mu.Unlock()
	})
	defer stop()
	f.mu.Lock()
	defer f.mu.Unlock()
	for (f.agents[id] == nil || f.agents[id].pid == 0) && ctx.Err() == nil {
		f.reported.Wait()
	}
	if a := f.agents[id]; a != nil {
		return a.pid
	}
	return 0
}

// check reads the registry and every task under their locks, and returns
// the first broken invariant.
func (f *fleetRun) check(ctx context.Context) error {
	reg := status.NewStore[slots.Registry](f.reg)
	docs := []status.AnyStore{reg}
	for i := range f.docs {
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
	for i := range f.docs {
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

// plumb makes the pipes that dispatchers and agents inherit: the agents'
// reports (fd 3), read by readReports, and the barrier (fd 4).
func (f *fleetRun) plumb() {
	rr, rw, err := os.Pipe()
	if err != nil {
		f.t.Fatal(err)
	}
	br, bw, err := os.Pipe()
	if err != nil {
		f.t.Fatal(err)
	}
	f.reports, f.barrier, f.barrierR = rw, bw, br
	reportsDone := make(chan struct{})
	go func() { f.readReports(rr); close(reportsDone) }()
	f.t.Cleanup(func() {
		f.killAgents()
		rw.Close()
		<-reportsDone
		rr.Close()
		bw.Close()
		br.Close()
	})
}

// run drives the fleet through every task and returns once it is quiet:
// no dispatcher spawns, and every agent has released its slot, refused, or
// adopted and keeps it.
func (f *fleetRun) run(ctx context.Context, dispatchers int) {
	t := f.t
	f.plumb()
	quiet := make(chan struct{})
	go func() { io.Copy(io.Discard, f.barrierR); close(quiet) }()

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

	if f.cases {
		f.spawnCases(ctx)
	}
	commands := make(chan string)
	var drivers sync.WaitGroup
	for range dispatchers {
		drivers.Go(func() {
			var d *dispatcherProc
			for cmd := range commands {
				for ctx.Err() == nil {
					if d == nil {
						d = f.startRandomDispatcher()
					}
					answer, err := f.ask(ctx, d, cmd)
					if err != nil {
						f.fail(fmt.Sprintf("%s: %q has no answer: %v", d.member, cmd, err))
						break
					}
					if answer == "" { // killed by the killer: a new one takes over
						d.kill()
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
			if d != nil && ctx.Err() == nil {
				if answer, err := f.ask(ctx, d, "stop"); answer != "stopped" {
					f.fail(fmt.Sprintf("%s did not stop: %q, %v", d.member, answer, err))
				}
			}
		})
	}
	// The killer stops before the last fifth of the spawns, so that some
	// agents live at the end.
	killStop := make(chan struct{})
	if f.kill {
		bg.Go(func() { f.killer(killStop) })
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
	f.barrier.Close()
	if ctx.Err() != nil {
		t.Fatalf("the fleet did not finish its spawns: %v\n%s", ctx.Err(), f.diagnose())
	}
	select { // every agent has decided; no dispatcher spawns
	case <-quiet:
	case <-ctx.Done():
		t.Fatalf("the fleet did not quiet down: %v\n%s", ctx.Err(), f.diagnose())
	}
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
		f.aborted = append(f.aborted, strings.Join(w[1:], " "))
		f.caseSeen["fail"]++
	case "paused":
		f.paused++
		for _, pause := range fixedCases[1:] {
			if len(c) == 4 && slices.Contains(strings.Split(c[3], ","), pause) {
				f.caseSeen[pause]++
			}
		}
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

// fail records a failure of the harness's own, reported with the others.
func (f *fleetRun) fail(msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, msg)
}

// spawnCases spawns each of fixedCases once on its spare task, before the
// fleet runs, each with a dispatcher of its own and room in the registry
// (at most two slots stay: a paused reserver's and an agent's), so that no
// run misses a case: the fleet's own spawns of them may all be refused
// (full, no parent), or retried as exists after a kill.
func (f *fleetRun) spawnCases(ctx context.Context) {
	for k, c := range fixedCases {
		d := f.startRandomDispatcher()
		cmd := fmt.Sprintf("spawn %s - short,%s", taskName(f.tasks+k), c)
		answer, err := f.ask(ctx, d, cmd)
		d.kill() // paused (killed between Reserve and the hand-over), or done
		if err != nil || answer == "" {
			f.t.Fatalf("%s: %s: answer %q, %v\n%s", d.member, cmd, answer, err, f.diagnose())
		}
		f.record(cmd, answer)
	}
}

// diagnose describes the fleet, for a failure: the processes that hold the
// barrier (and so keep the test waiting), each dispatcher's state and last
// exchange, each agent's last report, the harness's errors, the registry.
func (f *fleetRun) diagnose() string {
	var b strings.Builder
	b.WriteString("processes holding the barrier (fd 4):\n")
	for _, p := range pipeHolders(f.barrierR) {
		fmt.Fprintf(&b, "  %s\n", p)
	}
	f.procsMu.Lock()
	procs := slices.Clone(f.procs)
	f.procsMu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	b.WriteString("dispatchers:\n")
	for _, d := range procs {
		state := "running"
		select {
		case <-d.exited:
			state = d.cmd.ProcessState.String()
		default:
		}
		fmt.Fprintf(&b, "  pid %d (%s), %s: last %s\n", d.cmd.Process.Pid, d.member, state, d.last)
	}
	b.WriteString("agents (slot ID, pid, killed by the test: last report):\n")
	for _, id := range slices.Sorted(maps.Keys(f.agents)) {
		a := f.agents[id]
		fmt.Fprintf(&b, "  %s %d %v: %q\n", id, a.pid, f.killed[id], a.last)
	}
	for _, e := range f.errs {
		fmt.Fprintf(&b, "error: %s\n", e)
	}
	reg, err := os.ReadFile(f.reg)
	fmt.Fprintf(&b, "registry (%v):\n%s", err, reg)
	return b.String()
}

// pipeHolders lists the other processes that hold an end of the pipe r
// is an end of, with their command line and state.
func pipeHolders(r *os.File) []string {
	var st syscall.Stat_t
	if r == nil || syscall.Fstat(int(r.Fd()), &st) != nil {
		return nil
	}
	pipe := fmt.Sprintf("pipe:[%d]", st.Ino)
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	seen := map[string]bool{}
	var out []string
	for _, fd := range fds {
		pid := strings.Split(fd, "/")[2]
		if seen[pid] || pid == strconv.Itoa(os.Getpid()) {
			continue
		}
		if l, err := os.Readlink(fd); err != nil || l != pipe {
			continue
		}
		seen[pid] = true
		cmdline, _ := os.ReadFile("/proc/" + pid + "/cmdline")
		stat, _ := os.ReadFile("/proc/" + pid + "/stat")
		state := ""
		if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+3 < len(stat) {
			state = string(stat[i+2 : i+3])
		}
		out = append(out, fmt.Sprintf("pid %s, state %s: %s", pid, state, strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " ")))
	}
	return out
}

// killer kills agents (and, if killDis, dispatchers) at random moments
// until stop.
func (f *fleetRun) killer(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(time.Duration(50+f.intN(350)) * time.Millisecond): // when faults happen, not a synchronisation
		}
		if f.killDis && f.intN(5) == 0 {
			f.procsMu.Lock()
			if len(f.procs) > 0 {
				f.procs[f.intN(len(f.procs))].cmd.Process.Kill()
			}
			f.procsMu.Unlock()
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
	for i := range f.docs {
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
	f.kill, f.killDis, f.cases = true, true, true
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
	for _, c := range fixedCases {
		if f.caseSeen[c] == 0 {
			t.Errorf("no spawn %s was done (answers %v): the run missed a case", c, f.answers)
		}
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

// TestDispatchersKeepTheirAnswers: the agents a member's dispatcher starts
// do not hold its stdout, where it answers the test. An agent that held it
// would keep the test waiting for the answer of a dispatcher killed
// meanwhile, for as long as the agent lives.
func TestDispatchersKeepTheirAnswers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	members := fleetMembers(t)
	f := newFleetRun(t, "handover", members, len(members), 1)
	f.plumb()
	for i, m := range members {
		d := f.startDispatcher(m, m)
		cmd := fmt.Sprintf("spawn %s - long", taskName(i))
		answer, err := f.ask(ctx, d, cmd)
		w := strings.Fields(answer)
		if err != nil || len(w) != 3 || w[0] != "ok" {
			t.Fatalf("%s: %s: answer %q, %v", m.name, cmd, answer, err)
		}
		for _, h := range pipeHolders(d.out) {
			if strings.HasPrefix(h, "pid "+w[2]+",") {
				t.Errorf("%s: its agent holds the dispatcher's stdout: %s", m.name, h)
			}
		}
		// Known to the test, so that its clean-up kills it.
		if pid := f.awaitStarted(ctx, w[1]); strconv.Itoa(pid) != w[2] {
			t.Fatalf("%s: agent %s reported pid %d, its dispatcher %s", m.name, w[1], pid, w[2])
		}
	}
}

// TestAskSeesDispatcherDeath: a dispatcher killed while a process it
// started holds its stdout answers nothing, and ask says so at once rather
// than wait for that process to end. CONTROL: the stdout is still held
// after the dispatcher's death, so a reader that waits for its end waits
// for the process that holds it.
func TestAskSeesDispatcherDeath(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f := newFleetRun(t, "handover", nil, 1, 1)
	f.plumb()
	leaky := fleetMember{name: "leaky", dispatcher: agentCmd{Argv: []string{"sh", "-c", `sleep 600 & read cmd; kill -KILL $$`}}}
	d := f.startDispatcher(leaky, leaky)
	t.Cleanup(func() { // the sleep, before the dispatcher's own clean-up
		for _, h := range pipeHolders(d.out) {
			if pid, err := strconv.Atoi(strings.TrimSuffix(strings.Fields(h)[1], ",")); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	answer, err := f.ask(ctx, d, "spawn t00 - long")
	if answer != "" || err != nil {
		t.Fatalf("ask: %q, %v; want no answer", answer, err)
	}
	<-d.exited
	if holders := pipeHolders(d.out); len(holders) == 0 {
		t.Fatal("CONTROL: nothing holds the dead dispatcher's stdout: the test shows nothing")
	} else {
		t.Logf("CONTROL: after the dispatcher's death its stdout is held by %v", holders)
	}
}

// TestMembersAnswerRefusals: each member's dispatcher answers a spawn that
// cannot be admitted as doc.go says, on one line: a task that is not
// queued, a parent that holds no slot, a full registry.
func TestMembersAnswerRefusals(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, m := range fleetMembers(t) {
		t.Run(m.name, func(t *testing.T) {
			f := newFleetRun(t, "handover", []fleetMember{m}, 3, 1)
			f.plumb()
			writeJSON(t, filepath.Join(f.dir, taskName(0), "status.json"), `{"status": "completed"}`)
			d := f.startDispatcher(m, m)
			for _, c := range []struct{ cmd, want string }{
				{"spawn t00 - short", "conflict"},
				{"spawn t01 no-such-slot short", "refused noparent"},
				{"full", ""},
				{"spawn t02 - short", "refused full"},
				{"stop", "stopped"},
			} {
				if c.cmd == "full" {
					writeJSON(t, f.reg, `{"agents": [], "max_concurrent": 0}`)
					continue
				}
				if answer, err := f.ask(ctx, d, c.cmd); answer != c.want || err != nil {
					t.Errorf("%s: answer %q, %v; want %q", c.cmd, answer, err, c.want)
				}
			}
		})
	}
}
