package racetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentstate/core/core"
	"github.com/agentstate/core/status"
)

// The workload of one "server" (an agent-service process): all loops
// below run in goroutines of one process, and several processes run them on
// the same workspace root at once. Nothing waits on a clock: every loop is
// driven by a channel or ends when it sees every workspace completed.
//
// Life of a workspace: the spawner creates it queued and claims it; a claim
// (queued -> running, runs+1, a new pid) starts an agent. Which agent it is
// depends on the run number: odd runs crash at once (their pid is dead),
// even runs ask a question and end blocked, run finalRun and later complete.
// The status tool fails (from the third run on: blocks) running workspaces
// whose pid is dead, through the 16-field status.Status, and asks for
// failed or blocked ones to be resumed; the resume loop queues them again
// and the queue drain of any server claims them. Every third claim of a
// server is killed. So each workspace goes through at least finalRun runs,
// each touched by several actors of several processes, and ends completed.

// finalRun is the run number from which an agent completes its task.
const finalRun = 6

// params configures one server. It is passed to child processes as JSON.
type params struct {
	Impl   string `json:"impl"` // see storeFor
	Dir    string `json:"dir"`  // holds the workspace root, the pid files and the done marker
	Server int    `json:"server"`
	// Incarnation tells apart the claim ids and pids of a server restarted
	// on the same root.
	Incarnation int `json:"incarnation"`
	Servers     int `json:"servers"`
	Workspaces  int `json:"workspaces"`
	// MaxPasses bounds the scanning loops (status tool, queue drain) for
	// implementations that never converge; the module's run converges long
	// before.
	MaxPasses int `json:"max_passes"`
	// StopAfter, if > 0, shuts the server down after that many
	// acknowledged updates, in the middle of the work.
	StopAfter int `json:"stop_after"`
}

func storeFor(impl string) (statusStore, error) {
	switch impl {
	case "module":
		return moduleStore{}, nil
	case "bare-inplace":
		return bareStore{inPlace: true}, nil
	case "bare-atomic":
		return bareStore{}, nil
	}
	return nil, fmt.Errorf("unknown implementation %q", impl)
}

func wsName(w int) string { return fmt.Sprintf("task-%02d", w) }

// wsRoot is the workspace root under a run's directory.
func wsRoot(dir string) string { return filepath.Join(dir, "workspaces") }

// wsPath is where core.StatusPath puts a workspace's document.
func wsPath(dir string, w int) string {
	return filepath.Join(wsRoot(dir), "agentstate", "core", wsName(w), "status.json")
}

// A pid stands for an agent process; it is alive while the file
// <dir>/pids/<pid> exists, which every server can check, like /proc.
func pidFile(dir string, pid int) string {
	return filepath.Join(dir, "pids", strconv.Itoa(pid))
}

// result is what one server reports: what it was told succeeded, and what
// its readers saw.
type result struct {
	Server int `json:"server"`
	// Acks counts, per workspace and actor, the updates whose Mutate
	// returned nil. Each of them incremented race_acks[actor] in the
	// document: the final document must hold exactly these counts.
	Acks map[string]map[string]int `json:"acks"`
	// Claims counts, per workspace, the acknowledged claims (runs+1).
	Claims map[string]int `json:"claims"`
	// Completed lists, per workspace, the claim ids whose completion was
	// acknowledged.
	Completed map[string][]string `json:"completed"`
	// Ops counts operations by outcome ("claim", "claim-conflict", ...).
	Ops         map[string]int `json:"ops"`
	Reads       int            `json:"reads"`
	Torn        int            `json:"torn"`
	Regressions int            `json:"regressions"`
	Examples    []string       `json:"examples"` // the first violations seen
	Errors      []string       `json:"errors"`   // unexpected errors
	GaveUp      []string       `json:"gave_up"`  // loops that hit MaxPasses
	ShutdownErr string         `json:"shutdown_err"`
}

// recorder collects a server's result from all its goroutines.
type recorder struct {
	mu        sync.Mutex
	r         result
	acked     int
	stopAfter int
	stop      chan struct{}
}

func newRecorder(server, stopAfter int) *recorder {
	return &recorder{
		r: result{
			Server:    server,
			Acks:      map[string]map[string]int{},
			Claims:    map[string]int{},
			Completed: map[string][]string{},
			Ops:       map[string]int{},
		},
		stopAfter: stopAfter,
		stop:      make(chan struct{}),
	}
}

func (r *recorder) ack(w int, actor string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.r.Acks[wsName(w)]
	if m == nil {
		m = map[string]int{}
		r.r.Acks[wsName(w)] = m
	}
	m[actor]++
	r.acked++
	if r.acked == r.stopAfter {
		close(r.stop)
	}
}

func (r *recorder) op(name string) {
	r.mu.Lock()
	r.r.Ops[name]++
	r.mu.Unlock()
}

func (r *recorder) claim(w int) {
	r.mu.Lock()
	r.r.Claims[wsName(w)]++
	r.mu.Unlock()
}

func (r *recorder) completed(w int, id string) {
	r.mu.Lock()
	r.r.Completed[wsName(w)] = append(r.r.Completed[wsName(w)], id)
	r.mu.Unlock()
}

func (r *recorder) torn() {
	r.mu.Lock()
	r.r.Torn++
	r.mu.Unlock()
}

func (r *recorder) regression(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.r.Regressions++
	if len(r.r.Examples) < 5 {
		r.r.Examples = append(r.r.Examples, fmt.Sprintf(format, args...))
	}
}

func (r *recorder) error(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.r.Errors) < 10 {
		r.r.Errors = append(r.r.Errors, err.Error())
	}
}

func (r *recorder) result() *result {
	r.mu.Lock()
	defer r.mu.Unlock()
	res := r.r
	return &res
}

// observer checks the states one reader goroutine sees, in its own order:
// a completed workspace never shows another state afterwards, and the run
// counter never goes down. (Per goroutine, because reads of different
// goroutines are not ordered with each other.)
type observer struct {
	who       string
	rec       *recorder
	completed map[int]string // workspace -> claim id seen completed
	runs      map[int]int
	reads     int
}

func newObserver(who string, rec *recorder) *observer {
	return &observer{who: who, rec: rec, completed: map[int]string{}, runs: map[int]int{}}
}

func (o *observer) see(w int, d doc) {
	o.reads++
	if id, ok := o.completed[w]; ok && (d.State != status.Completed || d.ProcessID != id) {
		o.rec.regression("%s: %s read completed (%s), then %s (%s)", o.who, wsName(w), id, d.State, d.ProcessID)
	}
	if d.Runs < o.runs[w] {
		o.rec.regression("%s: %s read runs=%d, then runs=%d", o.who, wsName(w), o.runs[w], d.Runs)
	}
	o.runs[w] = max(o.runs[w], d.Runs)
	if d.State == status.Completed {
		if _, ok := o.completed[w]; !ok {
			o.completed[w] = d.ProcessID
		}
	}
}

func (o *observer) done() {
	o.rec.mu.Lock()
	o.rec.r.Reads += o.reads
	o.rec.mu.Unlock()
}

// agent is a started agent run, handed from the claimer to the agent
// runtime (the completion handler).
type agent struct {
	w   int
	id  string // the claim id, kept in process_id
	pid int
	run int
}

type killReq struct {
	w  int
	id string
}

// errGone is returned by a guard that finds the document moved on (another
// run, or the run already finished): nothing to do.
var errGone = errors.New("workspace moved on")

type server struct {
	c       *core.Core     // root, Fs, background tasks
	paths   []string       // status document of each workspace, from c.StatusPath
	index   map[string]int // task name -> workspace number
	p       params
	st      statusStore
	rec     *recorder
	seq     atomic.Int64
	agents  chan agent
	kills   chan killReq
	resumes chan int
	// feedersDone is closed when the spawner and the queue drain have
	// returned. The drain returns once it has seen every workspace
	// completed, which is final, so the status tool has nothing left to
	// do then. (In the bare control a stale write can revert a completed
	// workspace after that; the final check reports it.)
	feedersDone chan struct{}
}

func newServer(p params, st statusStore) *server {
	return &server{
		p:       p,
		st:      st,
		rec:     newRecorder(p.Server, p.StopAfter),
		agents:  make(chan agent, 1024),
		kills:   make(chan killReq, 1024),
		resumes: make(chan int, 64),

		feedersDone: make(chan struct{}),
	}
}

func (s *server) path(w int) string     { return s.paths[w] }
func (s *server) actor(r string) string { return fmt.Sprintf("s%d/%s", s.p.Server, r) }

// outcome sorts a Mutate error: true means the caller's loop should go on.
// Conflicts of guarded transitions are the expected answer to a race and
// are counted; ctx errors stop the loop; torn reads are counted; anything
// else is recorded as an unexpected error.
func (s *server) outcome(ctx context.Context, op string, err error) (ok, goOn bool) {
	switch {
	case err == nil:
		s.rec.op(op)
		return true, true
	case errors.Is(err, status.ErrConflict), errors.Is(err, errGone):
		s.rec.op(op + "-conflict")
		return false, true
	case ctx.Err() != nil:
		return false, false
	case errors.Is(err, errTorn):
		s.rec.torn()
		return false, true
	}
	s.rec.error(fmt.Errorf("%s: %w", op, err))
	return false, true
}

func (s *server) alive(pid int) bool {
	_, err := os.Stat(pidFile(s.p.Dir, pid))
	return err == nil
}

func (s *server) startProcess(pid int) {
	if err := os.WriteFile(pidFile(s.p.Dir, pid), nil, 0o644); err != nil {
		s.rec.error(err)
	}
}

func (s *server) exitProcess(pid int) {
	if err := os.Remove(pidFile(s.p.Dir, pid)); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.rec.error(err)
	}
}

// spawner creates this server's workspaces and starts their first agent.
func (s *server) spawner(ctx context.Context) {
	actor := s.actor("spawner")
	for w := s.p.Server; w < s.p.Workspaces; w += s.p.Servers {
		if ctx.Err() != nil {
			return
		}
		if err := s.c.Fs().MkdirAll("agentstate/core/"+wsName(w), 0o755); err != nil {
			s.rec.error(err)
			continue
		}
		_, err := s.st.Mutate(ctx, s.path(w), func(d *doc) error {
			if d.State != "" {
				return errGone
			}
			d.State = status.Queued
			d.Agent, d.Org, d.Repo, d.Task = "codex", "agentstate", "core", wsName(w)
			d.StartedAt = time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
			d.bump(actor)
			return nil
		})
		ok, goOn := s.outcome(ctx, "create", err)
		if !goOn {
			return
		}
		if ok {
			s.rec.ack(w, actor)
		}
		if !s.startAgent(ctx, w, "spawner") {
			return
		}
	}
}

// startAgent claims a queued workspace and starts an agent in it: claim
// under the lock with a guarded transition, start the process, then record
// what the start produced — again guarded, because a fast agent may have
// finished (or been killed) in between. It returns false when ctx ended.
func (s *server) startAgent(ctx context.Context, w int, role string) bool {
	n := s.seq.Add(1)
	id := fmt.Sprintf("s%d.%d-%d", s.p.Server, s.p.Incarnation, n)
	pid := s.p.Server*1_000_000 + s.p.Incarnation*100_000 + int(n)
	actor := s.actor(role)
	path := s.path(w)

	s.startProcess(pid)
	run := 0
	_, err := s.st.Mutate(ctx, path, func(d *doc) error {
		if err := d.Transition(status.Running, status.Queued); err != nil {
			return err
		}
		d.Runs++
		d.PID, d.ProcessID, d.Note, d.Question = pid, id, "", ""
		d.bump(actor)
		run = d.Runs
		return nil
	})
	ok, goOn := s.outcome(ctx, "claim", err)
	if !ok {
		s.exitProcess(pid)
		return goOn
	}
	s.rec.ack(w, actor)
	s.rec.claim(w)

	if run%2 == 1 && run < finalRun {
		s.exitProcess(pid) // this run crashes at once
	} else {
		select {
		case s.agents <- agent{w: w, id: id, pid: pid, run: run}:
		case <-ctx.Done():
			s.exitProcess(pid)
			return false
		}
	}
	if n%3 == 0 {
		select {
		case s.kills <- killReq{w: w, id: id}:
		case <-ctx.Done():
			return false
		}
	}

	// A bare read-modify-write would write back here the copy read before
	// the spawn, reverting a fast "completed" to "running".
	_, err = s.st.Mutate(ctx, path, func(d *doc) error {
		if d.State != status.Running || d.ProcessID != id {
			return errGone
		}
		d.Branch = "agent/" + id
		d.bump(actor)
		return nil
	})
	if ok, goOn = s.outcome(ctx, "started", err); ok {
		s.rec.ack(w, actor)
	}
	return goOn
}

// completions is the agent runtime's completion handler: each agent either
// completes its task or stops with a question, then its process exits.
func (s *server) completions(ctx context.Context) {
	actor := s.actor("agent")
	for {
		var a agent
		select {
		case <-ctx.Done():
			return
		case x, more := <-s.agents:
			if !more {
				return
			}
			a = x
		}
		op := "blocked"
		_, err := s.st.Mutate(ctx, s.path(a.w), func(d *doc) error {
			if d.ProcessID != a.id {
				return errGone
			}
			if a.run >= finalRun {
				op = "complete"
				d.Note = "done"
				d.PRURL = "https://example.invalid/pr/" + a.id
				if err := d.Transition(status.Completed, status.Running); err != nil {
					return err
				}
			} else {
				d.Question = "which base branch?"
				if err := d.Transition(status.Blocked, status.Running); err != nil {
					return err
				}
			}
			d.bump(actor)
			return nil
		})
		ok, goOn := s.outcome(ctx, op, err)
		s.exitProcess(a.pid)
		if ok {
			s.rec.ack(a.w, actor)
			if op == "complete" {
				s.rec.completed(a.w, a.id)
			}
		}
		if !goOn {
			return
		}
	}
}

// statusTool reads every workspace, fails the running ones whose process
// is dead — through status.Status, which does not know race_acks — and asks
// for failed and blocked ones to be resumed.
func (s *server) statusTool(ctx context.Context) {
	s.scan(ctx, "status-tool", s.feedersDone, func(w int, d doc) bool {
		switch d.State {
		case status.Running:
			if d.PID != 0 && !s.alive(d.PID) {
				return s.failDead(ctx, w, d)
			}
		case status.Failed, status.Blocked:
			select {
			case s.resumes <- w:
			default: // the resume loop is busy; the next pass asks again
			}
		}
		return true
	})
}

// corruptAfter is how many passes in a row a scanning loop must find a
// workspace undecodable before it stops waiting for it. Only the in-place
// control ever corrupts a file (two unlocked in-place writes interleaved);
// nobody can repair it, so without this its loops would spin to MaxPasses.
const corruptAfter = 50

// scan is the shape of the service's scanning loops: pass over every
// workspace, reading without a lock, checking what this goroutine sees
// (observer), and visiting the ones not completed; visit returns false
// when ctx ended. scan returns when one pass finds every workspace
// completed (or hopelessly corrupt), when any loop of any server has seen
// that (the marker below), when stop is closed, after MaxPasses, or when
// ctx ends.
func (s *server) scan(ctx context.Context, loop string, stop <-chan struct{}, visit func(w int, d doc) bool) {
	obs := newObserver(s.actor(loop), s.rec)
	defer obs.done()
	tornStreak := make([]int, s.p.Workspaces)
	var last []string // what the previous pass found unfinished, for the give-up report
	for pass := 0; ctx.Err() == nil; pass++ {
		select {
		case <-stop:
			return
		default:
		}
		if s.allCompletedSeen() {
			return
		}
		if pass == s.p.MaxPasses {
			s.giveUp(loop, last)
			return
		}
		last = last[:0]
		// List the workspaces as the service does: every pass, from the
		// root (new ones appear while the spawners create them).
		list, err := s.c.Workspaces(ctx)
		if err != nil {
			if ctx.Err() == nil {
				s.rec.error(err)
			}
			return
		}
		all := len(list) == s.p.Workspaces
		for _, ws := range list {
			w, ok := s.index[ws.Task]
			if !ok {
				s.rec.error(fmt.Errorf("%s: unknown workspace %s", loop, ws))
				continue
			}
			d, err := s.st.Read(s.path(w))
			if err != nil {
				s.readFailed(err)
				if errors.Is(err, errTorn) {
					if tornStreak[w]++; tornStreak[w] >= corruptAfter {
						continue
					}
				}
				all = false
				continue
			}
			tornStreak[w] = 0
			obs.see(w, d)
			if d.State == status.Completed {
				continue
			}
			all = false
			last = append(last, fmt.Sprintf("%s %s %s pid %d alive=%v", wsName(w), d.State, d.ProcessID, d.PID, s.alive(d.PID)))
			if !visit(w, d) {
				return
			}
		}
		if all {
			s.markAllCompleted()
			return
		}
	}
}

// The first scanning loop, of any server, that sees every workspace
// completed leaves a marker in the root; the other scanning loops stop
// when they see it. Completed is final, so nothing is left to do then.
// (In the bare control a stale write can still revert a workspace; the
// final check reports it, instead of the loops spinning on it.)
func (s *server) markerPath() string { return filepath.Join(s.p.Dir, "all-completed") }

func (s *server) allCompletedSeen() bool {
	_, err := os.Stat(s.markerPath())
	return err == nil
}

func (s *server) markAllCompleted() {
	if err := os.WriteFile(s.markerPath(), nil, 0o644); err != nil {
		s.rec.error(err)
	}
}

// failDead marks a workspace whose process died as failed (or, from the
// third run on, blocked for a human to look at), unless it moved on
// meanwhile; it never overwrites completed: the transition is guarded.
func (s *server) failDead(ctx context.Context, w int, seen doc) bool {
	_, err := s.st.MutateStatus(ctx, s.path(w), func(st *status.Status) error {
		if st.ProcessID != seen.ProcessID {
			return errGone
		}
		st.Note = "pid " + strconv.Itoa(seen.PID) + " not alive"
		if st.Runs >= 3 {
			st.Question = "agent exited without reporting"
			return st.Transition(status.Blocked, status.Running)
		}
		return st.Transition(status.Failed, status.Running)
	})
	_, goOn := s.outcome(ctx, "fail-dead", err)
	return goOn
}

// drain is the queue-drain loop: it claims queued workspaces of any server.
func (s *server) drain(ctx context.Context) {
	s.scan(ctx, "drain", nil, func(w int, d doc) bool {
		return d.State != status.Queued || s.startAgent(ctx, w, "drain")
	})
}

// killer kills the runs it is asked to kill, if they are still running.
func (s *server) killer(ctx context.Context) {
	actor := s.actor("kill")
	for {
		var k killReq
		select {
		case <-ctx.Done():
			return
		case x, more := <-s.kills:
			if !more {
				return
			}
			k = x
		}
		_, err := s.st.Mutate(ctx, s.path(k.w), func(d *doc) error {
			if d.ProcessID != k.id {
				return errGone
			}
			if err := d.Transition(status.Failed, status.Running); err != nil {
				return err
			}
			d.Note = "killed"
			d.bump(actor)
			return nil
		})
		ok, goOn := s.outcome(ctx, "kill", err)
		if ok {
			s.rec.ack(k.w, actor)
		}
		if !goOn {
			return
		}
	}
}

// resumer queues failed and blocked workspaces again.
func (s *server) resumer(ctx context.Context) {
	actor := s.actor("resume")
	for {
		var w int
		select {
		case <-ctx.Done():
			return
		case x, more := <-s.resumes:
			if !more {
				return
			}
			w = x
		}
		_, err := s.st.Mutate(ctx, s.path(w), func(d *doc) error {
			if err := d.Transition(status.Queued, status.Failed, status.Blocked); err != nil {
				return err
			}
			d.PID, d.ProcessID, d.Question = 0, "", ""
			d.bump(actor)
			return nil
		})
		ok, goOn := s.outcome(ctx, "resume", err)
		if ok {
			s.rec.ack(w, actor)
		}
		if !goOn {
			return
		}
	}
}

func (s *server) readFailed(err error) {
	switch {
	case errors.Is(err, errTorn):
		s.rec.torn()
	case errors.Is(err, os.ErrNotExist): // not created yet
	default:
		s.rec.error(err)
	}
}

func (s *server) giveUp(loop string, unfinished []string) {
	s.rec.mu.Lock()
	s.rec.r.GaveUp = append(s.rec.r.GaveUp, fmt.Sprintf("%s: %q", s.actor(loop), unfinished))
	s.rec.mu.Unlock()
}

// run starts the server's loops as tracked background tasks, waits until
// they are done (or StopAfter updates were acknowledged, or ctx ends),
// then shuts them down and returns what the server saw.
func (s *server) run(ctx context.Context) *result {
	if err := s.open(); err != nil {
		s.rec.error(err)
		return s.rec.result()
	}
	var feeders, watchers sync.WaitGroup
	feeders.Add(2)
	watchers.Add(2)
	loops := []struct {
		name string
		fn   func(context.Context)
	}{
		{"spawner", func(ctx context.Context) { defer feeders.Done(); s.spawner(ctx) }},
		{"queue-drain", func(ctx context.Context) { defer feeders.Done(); s.drain(ctx) }},
		{"status-tool", func(ctx context.Context) { defer watchers.Done(); s.statusTool(ctx) }},
		{"killer", func(ctx context.Context) { defer watchers.Done(); s.killer(ctx) }},
		{"completions", s.completions},
		{"resumer", s.resumer},
		// Close the hand-off channels when their senders are done, so
		// that their receivers end by themselves (channels, not clocks).
		{"close-agents", func(context.Context) { feeders.Wait(); close(s.agents); close(s.kills); close(s.feedersDone) }},
		{"close-resumes", func(context.Context) { watchers.Wait(); close(s.resumes) }},
	}
	// finished is closed by the last loop to return.
	var pending atomic.Int32
	pending.Store(int32(len(loops)))
	finished := make(chan struct{})
	for _, l := range loops {
		fn := l.fn
		err := s.c.Go(l.name, func(ctx context.Context) {
			defer func() {
				if pending.Add(-1) == 0 {
					close(finished)
				}
			}()
			fn(ctx)
		})
		if err != nil { // cannot happen before Shutdown; keep the count right anyway
			s.rec.error(err)
			if pending.Add(-1) == 0 {
				close(finished)
			}
		}
	}
	select {
	case <-finished:
	case <-s.rec.stop:
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Shutdown cancels every loop's context and waits for all of them;
	// goleak (TestMain) then checks that nothing is left.
	if err := s.c.Shutdown(sctx); err != nil {
		s.rec.mu.Lock()
		s.rec.r.ShutdownErr = err.Error()
		s.rec.mu.Unlock()
	}
	// Agents that were started but never reached the completion handler
	// die with their server.
	for {
		select {
		case a, more := <-s.agents:
			if !more {
				return s.rec.result()
			}
			s.exitProcess(a.pid)
		default:
			return s.rec.result()
		}
	}
}

// open creates the server's Core on the shared workspace root and
// resolves the workspaces' status paths through it.
func (s *server) open() error {
	for _, d := range []string{wsRoot(s.p.Dir), filepath.Join(s.p.Dir, "pids")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	c, err := core.New(wsRoot(s.p.Dir))
	if err != nil {
		return err
	}
	s.c = c
	s.index = make(map[string]int)
	for w := range s.p.Workspaces {
		p, err := c.StatusPath("agentstate", "core", wsName(w))
		if err != nil {
			_ = c.Shutdown(context.Background())
			return err
		}
		s.paths = append(s.paths, p)
		s.index[wsName(w)] = w
	}
	return nil
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
