package claim_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/claim"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang fails; nothing is timed
	t.Cleanup(cancel)
	return ctx
}

// startOwners starts n owner processes, each registering perOwner agents
// named prefix<i>-<k>, and waits until all are registered.
func startOwners(t *testing.T, f *fleet, prefix string, n, perOwner int) ([]*child, [][]string) {
	t.Helper()
	var cs []*child
	var agents [][]string
	for i := range n {
		a := ids(fmt.Sprintf("%s%d-", prefix, i), perOwner)
		cs = append(cs, startHelper(t, "owner", []string{"CLAIM_DIR=" + f.dir, "CLAIM_IDS=" + strings.Join(a, ",")}))
		agents = append(agents, a)
	}
	for _, c := range cs {
		c.expect("ready")
	}
	return cs, agents
}

// startIdle starts n processes that do nothing (helper "wait") and
// registers perOwner agents named prefix<i>-<k> for each, owned by it.
func startIdle(t *testing.T, f *fleet, prefix string, n, perOwner int) ([]*child, [][]string) {
	t.Helper()
	var cs []*child
	var agents [][]string
	for i := range n {
		c := startHelper(t, "wait", nil)
		c.expect("ready")
		o, err := claim.Of(c.pid())
		if err != nil {
			t.Fatal(err)
		}
		a := ids(fmt.Sprintf("%s%d-", prefix, i), perOwner)
		for _, id := range a {
			if err := f.register(testCtx(t), id, o); err != nil {
				t.Fatal(err)
			}
		}
		cs = append(cs, c)
		agents = append(agents, a)
	}
	return cs, agents
}

func releasedIDs(res claim.Result) []string {
	var out []string
	for _, c := range res.Released {
		out = append(out, c.ID)
	}
	slices.Sort(out)
	return out
}

func sorted(lists ...[]string) []string {
	out := slices.Concat(lists...)
	slices.Sort(out)
	return out
}

// TestReapKilledOwners: six processes register three agents each; four
// are killed with SIGKILL. One Reap releases exactly their twelve claims,
// their tasks fail, and active_count is again the number of running tasks;
// a second Reap finds nothing. The survivors then finish normally and the
// count comes down to 0.
func TestReapKilledOwners(t *testing.T) {
	f := newFleet(t)
	owners, agents := startOwners(t, f, "p", 6, 3)
	all := slices.Concat(agents...)
	if s := f.snapshot(t, all); s.reg.ActiveCount != 18 || s.check() != nil {
		t.Fatalf("before: active %d, %v", s.reg.ActiveCount, s.check())
	}
	for _, c := range owners[:4] {
		c.kill()
	}

	res, err := f.reap(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	dead := sorted(agents[:4]...)
	if diff := cmp.Diff(dead, releasedIDs(res)); diff != "" {
		t.Errorf("released (-killed owners' +released):\n%s", diff)
	}
	if len(res.Unknown) != 0 {
		t.Errorf("unknown owners: %v", res.Unknown)
	}
	s := f.snapshot(t, all)
	if err := s.check(); err != nil {
		t.Fatal(err)
	}
	if s.reg.ActiveCount != 6 {
		t.Errorf("active_count %d after the reap; want 6", s.reg.ActiveCount)
	}
	for _, id := range dead {
		if tk := s.tasks[id]; tk.State != status.Failed || tk.Reaped != 1 {
			t.Errorf("task %s: %+v; want failed, reaped once", id, tk)
		}
	}
	if res, err := f.reap(testCtx(t)); err != nil || len(res.Released) != 0 {
		t.Errorf("second reap: released %v, %v; want nothing", releasedIDs(res), err)
	}

	for _, c := range owners[4:] {
		c.send("finish")
		c.expect("finished")
	}
	s = f.snapshot(t, all)
	if err := s.check(); err != nil || s.reg.ActiveCount != 0 {
		t.Errorf("after the survivors finished: active_count %d, %v", s.reg.ActiveCount, err)
	}
}

// TestReaperKilled: a reaper killed in the middle of its releases leaves
// the documents as they were (one transaction); the next Reap releases
// everything. CONTROL: the hand-written reconciler, one Mutate for the
// registry and one for the task, killed between them, leaves a task
// running that the registry no longer counts.
func TestReaperKilled(t *testing.T) {
	setup := func(t *testing.T) (*fleet, []string) {
		f := newFleet(t)
		dead, deadAgents := startIdle(t, f, "d", 2, 2)
		_, liveAgents := startIdle(t, f, "l", 1, 2)
		for _, c := range dead {
			c.kill()
		}
		return f, sorted(slices.Concat(deadAgents...), slices.Concat(liveAgents...))
	}

	t.Run("Reap", func(t *testing.T) {
		f, all := setup(t)
		r := startHelper(t, "stall", []string{"CLAIM_DIR=" + f.dir})
		r.expect("releasing") // the first claim is released, in fn
		r.kill()
		s := f.snapshot(t, all)
		if err := s.check(); err != nil {
			t.Fatalf("after the reaper was killed: %v", err)
		}
		if got := s.registered(); !slices.Equal(got, all) {
			t.Errorf("registered after the reaper was killed: %v; want all of %v", got, all)
		}
		res, err := f.reap(testCtx(t))
		if err != nil || len(res.Released) != 4 {
			t.Fatalf("next reap released %v, %v; want the 4 dead claims", releasedIDs(res), err)
		}
		if err := f.snapshot(t, all).check(); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("CONTROL two Mutates", func(t *testing.T) {
		f, all := setup(t)
		r := startHelper(t, "twosteps", []string{"CLAIM_DIR=" + f.dir})
		r.expect("between")
		r.kill()
		err := f.snapshot(t, all).check()
		if err == nil {
			t.Fatal("CONTROL: a reconciler killed between its two writes left the documents consistent")
		}
		t.Logf("CONTROL: %v", err)
	})
}

// TestReapRecycledPID: pids are reused, and a claim names its owner's
// pid. The checks here use real processes whose pid is the pid a claim
// records and whose start time is not the one it records.
func TestReapRecycledPID(t *testing.T) {
	// A live owner X registers "live". "earlier" names X's pid with an
	// earlier start time: a process that held X's pid before X, now dead.
	setup := func(t *testing.T) *fleet {
		f := newFleet(t)
		c := startHelper(t, "wait", nil)
		c.expect("ready")
		x, err := claim.Of(c.pid())
		if err != nil {
			t.Fatal(err)
		}
		if err := f.register(testCtx(t), "live", x); err != nil {
			t.Fatal(err)
		}
		earlier := x
		earlier.Start--
		if err := f.register(testCtx(t), "earlier", earlier); err != nil {
			t.Fatal(err)
		}
		return f
	}
	t.Run("dead owner of a reused pid", func(t *testing.T) {
		f := setup(t)
		res, err := f.reap(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		if got := releasedIDs(res); !slices.Equal(got, []string{"earlier"}) {
			t.Errorf("released %v; want [earlier] (and never live)", got)
		}
		if err := f.snapshot(t, []string{"live", "earlier"}).check(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("CONTROL pid-only", func(t *testing.T) {
		f := setup(t)
		res, err := f.reap(testCtx(t), claim.WithCheck(pidOnly))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Released) != 0 {
			t.Fatalf("CONTROL: pid-only liveness released %v; want nothing (the reused pid looks alive)", releasedIDs(res))
		}
		t.Logf("CONTROL: pid-only liveness keeps the dead owner's claim: active_count stays %d", f.snapshot(t, []string{"live", "earlier"}).reg.ActiveCount)
	})

	// Live owners in another pid namespace (a container), recorded by
	// themselves: "shadowed" has the pid of a live process out here, the
	// test process, whose start time differs (the pid looks reused);
	// "free" has a pid that names no process out here (the owner looks
	// gone). Both are alive: nothing may release them.
	t.Run("live owners in another pid namespace", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root: unshare of a pid namespace, ns_last_pid")
		}
		shadowed := ownerInNewPIDNS(t, os.Getpid())
		free := ownerInNewPIDNS(t, freePID(t))
		me := self(t)
		if shadowed.Start == me.Start {
			t.Fatal("the owner started in the test process's clock tick: the pid would not look reused")
		}
		setup := func(t *testing.T) *fleet {
			f := newFleet(t)
			for id, o := range map[string]claim.Owner{"shadowed": shadowed, "free": free} {
				if err := f.register(testCtx(t), id, o); err != nil {
					t.Fatal(err)
				}
			}
			return f
		}
		f := setup(t)
		res, err := f.reap(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Released) != 0 || len(res.Unknown) != 2 {
			t.Errorf("released %v, %d unknown; want nothing released, both unknown", releasedIDs(res), len(res.Unknown))
		}

		// CONTROLS: the same claims, judged without the namespace.
		noNS := func(ctx context.Context, o claim.Owner) (claim.Liveness, error) {
			o.PIDNS, o.TimeNS = me.PIDNS, me.TimeNS
			return claim.Local(ctx, o)
		}
		for _, ctl := range []struct {
			name  string
			check claim.Check
			want  string
		}{
			{"pid and start time", noNS, "shadowed"},
			{"pid only", pidOnly, "free"},
		} {
			res, err := setup(t).reap(testCtx(t), claim.WithCheck(ctl.check))
			if err != nil {
				t.Fatal(err)
			}
			if got := releasedIDs(res); !slices.Contains(got, ctl.want) {
				t.Errorf("CONTROL %s liveness released %v; want it to release the live %s", ctl.name, got, ctl.want)
			} else {
				t.Logf("CONTROL: %s liveness releases a live owner's claims: %v", ctl.name, got)
			}
		}
	})
}

// ownerInNewPIDNS starts the helper "self" as the process with the given
// pid in a new pid namespace (unshare(1), ns_last_pid) and returns the
// owner it records for itself. It runs until the test ends.
func ownerInNewPIDNS(t *testing.T, pid int) claim.Owner {
	t.Helper()
	// sh, pid 1 of the namespace, sets the last pid and forks the helper.
	// A background job's input is /dev/null unless redirected from
	// another descriptor.
	script := `echo $((CLAIM_NSPID - 1)) >/proc/sys/kernel/ns_last_pid || exit 1
exec 3<&0
"$0" "$1" <&3 &
wait`
	c := startHelper(t, "self", []string{"CLAIM_NSPID=" + strconv.Itoa(pid)},
		"unshare", "--pid", "--fork", "--kill-child", "--mount-proc", "sh", "-c", script)
	var o claim.Owner
	if err := json.Unmarshal([]byte(c.line()), &o); err != nil {
		t.Fatal(err)
	}
	if o.PID != pid || o.PIDNS == self(t).PIDNS {
		t.Fatalf("the owner is pid %d in pid namespace %d; want pid %d in a new one", o.PID, o.PIDNS, pid)
	}
	return o
}

// freePID returns a pid that names no process: one below the last pid
// handed out, which the kernel hands out again only after wrapping
// around.
func freePID(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/kernel/ns_last_pid")
	if err != nil {
		t.Fatal(err)
	}
	last, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	for pid := last - 1; pid > 300; pid-- {
		if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			return pid
		}
	}
	t.Fatal("no free pid")
	return 0
}

// TestReapersAtOnce: reapers that run at once release each claim once.
// In one process, two reapers both list the dead claims before either
// commits (a barrier): the second finds them gone. CONTROL: the same two
// reapers deciding before the transaction and releasing what they decided
// (the hand-written reconciler's shape) release the claims twice. Across
// processes, four reapers of three goroutines each, started together,
// release forty claims: each once, and the counts are exact.
func TestReapersAtOnce(t *testing.T) {
	setup := func(t *testing.T, dead, perDead int) (*fleet, []string, []string) {
		f := newFleet(t)
		owners, deadAgents := startIdle(t, f, "d", dead, perDead)
		_, liveAgents := startIdle(t, f, "l", 2, 3)
		for _, c := range owners {
			c.kill()
		}
		return f, sorted(deadAgents...), sorted(liveAgents...)
	}
	// together runs two reapers; each lists the claims, then waits until
	// the other has too.
	together := func(reap func(claims func(*registry) []claim.Claim) ([]string, error)) ([]string, error) {
		var listed sync.WaitGroup
		listed.Add(2)
		var mu sync.Mutex
		var all []string
		var errs []error
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				first := true
				got, err := reap(func(r *registry) []claim.Claim {
					cs := (&fleet{}).claims(r)
					if first {
						first = false
						listed.Done()
						listed.Wait()
					}
					return cs
				})
				mu.Lock()
				defer mu.Unlock()
				all = append(all, got...)
				errs = append(errs, err)
			})
		}
		wg.Wait()
		slices.Sort(all)
		return all, errors.Join(errs...)
	}

	t.Run("two goroutines", func(t *testing.T) {
		f, dead, live := setup(t, 3, 4)
		released, err := together(func(claims func(*registry) []claim.Claim) ([]string, error) {
			res, err := claim.Reap(testCtx(t), f.reg, claims, func(tx *status.Tx, c claim.Claim) error {
				return f.unregister(tx, c.ID, status.Failed)
			})
			return releasedIDs(res), err
		})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(dead, released); diff != "" {
			t.Errorf("released by the two reapers (-dead claims +released):\n%s", diff)
		}
		s := f.snapshot(t, slices.Concat(dead, live))
		if err := s.check(); err != nil || s.reg.ActiveCount != len(live) {
			t.Errorf("active_count %d (want %d): %v", s.reg.ActiveCount, len(live), err)
		}
	})

	t.Run("CONTROL decided before the transaction", func(t *testing.T) {
		f, dead, live := setup(t, 3, 4)
		released, err := together(func(claims func(*registry) []claim.Claim) ([]string, error) {
			return blindReap(testCtx(t), f, claims)
		})
		if err != nil {
			t.Fatal(err)
		}
		s := f.snapshot(t, slices.Concat(dead, live))
		if len(released) == len(dead) && s.check() == nil {
			t.Fatal("CONTROL: two reapers that decide outside the transaction released each claim once")
		}
		t.Logf("CONTROL: %d releases of %d claims; %v", len(released), len(dead), s.check())
	})

	t.Run("processes", func(t *testing.T) {
		f, dead, live := setup(t, 8, 5)
		var reapers []*child
		for range 4 {
			reapers = append(reapers, startHelper(t, "reaper", []string{"CLAIM_DIR=" + f.dir, "CLAIM_GOROUTINES=3"}))
		}
		for _, r := range reapers {
			r.send("go")
		}
		var released []string
		for _, r := range reapers {
			for line := r.line(); line != "done"; line = r.line() {
				id, ok := strings.CutPrefix(line, "released ")
				if !ok {
					t.Fatalf("reaper said %q", line)
				}
				released = append(released, id)
			}
		}
		slices.Sort(released)
		if diff := cmp.Diff(dead, released); diff != "" {
			t.Errorf("released by all reapers (-dead claims +released):\n%s", diff)
		}
		s := f.snapshot(t, slices.Concat(dead, live))
		if err := s.check(); err != nil || s.reg.ActiveCount != len(live) {
			t.Errorf("active_count %d (want %d): %v", s.reg.ActiveCount, len(live), err)
		}
	})
}

// TestReapClaimTakenAgain: between a Reap's read without the locks and
// its transaction, another reaper releases a dead owner's claim and a
// live owner takes the same claim (same ID) again. The Reap decides again
// under the locks and leaves it. CONTROL: a reaper that releases what it
// decided before the transaction takes the live owner's claim away.
func TestReapClaimTakenAgain(t *testing.T) {
	for _, control := range []bool{false, true} {
		f := newFleet(t)
		owners, _ := startIdle(t, f, "x", 1, 1)
		owners[0].kill()
		me := self(t)
		first := true
		claims := func(r *registry) []claim.Claim {
			cs := f.claims(r)
			if first {
				first = false
				if res, err := f.reap(testCtx(t)); err != nil || len(res.Released) != 1 {
					t.Fatalf("the other reaper released %v, %v", releasedIDs(res), err)
				}
				if err := f.register(testCtx(t), "x0-0", me); err != nil {
					t.Fatal(err)
				}
			}
			return cs
		}
		var released []string
		if control {
			var err error
			if released, err = blindReap(testCtx(t), f, claims); err != nil {
				t.Fatal(err)
			}
		} else {
			res, err := claim.Reap(testCtx(t), f.reg, claims, func(tx *status.Tx, c claim.Claim) error {
				return f.unregister(tx, c.ID, status.Failed)
			})
			if err != nil {
				t.Fatal(err)
			}
			released = releasedIDs(res)
		}
		s := f.snapshot(t, []string{"x0-0"})
		kept := slices.Equal(s.registered(), []string{"x0-0"}) && s.reg.Agents[0].Owner == me && s.check() == nil
		switch {
		case !control && (!kept || len(released) != 0):
			t.Errorf("released %v; registered %v (%v): the live owner's claim must stay", released, s.registered(), s.check())
		case control && kept:
			t.Errorf("CONTROL: a reaper deciding before its transaction left the live owner's claim")
		case control:
			t.Logf("CONTROL: released %v, registered %v: %v", released, s.registered(), s.check())
		}
	}
}

// blindReap is the CONTROL reaper: it decides which claims to release
// from a read without the locks, then releases those in a transaction
// without looking again.
func blindReap(ctx context.Context, f *fleet, claims func(*registry) []claim.Claim) ([]string, error) {
	r, err := f.reg.Load(ctx)
	if err != nil {
		return nil, err
	}
	var dead []claim.Claim
	docs := []status.AnyStore{f.reg}
	for _, c := range claims(&r) {
		if l, _ := claim.Local(ctx, c.Owner); l == claim.Dead {
			dead = append(dead, c)
			docs = append(docs, c.Docs...)
		}
	}
	var out []string
	_, err = status.MutateAll(ctx, docs, func(tx *status.Tx) error {
		out = nil
		r, err := f.reg.In(tx)
		if err != nil {
			return err
		}
		for _, c := range dead {
			r.Agents = slices.DeleteFunc(r.Agents, func(a agent) bool { return a.ID == c.ID })
			r.ActiveCount--
			t, err := c.Docs[0].(*status.Store[task]).In(tx)
			if err != nil {
				return err
			}
			t.State = status.Failed
			t.Reaped++
			out = append(out, c.ID)
		}
		return nil
	})
	return out, err
}

// TestReapStoppedOwner: an owner stopped with SIGSTOP (a paused container,
// a debugger) is alive: Reap releases nothing, and once it continues it
// finishes its work normally. CONTROL: liveness guessed from heartbeats
// (an owner silent for longer than a limit is dead) releases the stopped
// owner's claims; its clock is set to a moment past the limit instead of
// waiting for it.
func TestReapStoppedOwner(t *testing.T) {
	f := newFleet(t)
	owners, agents := startOwners(t, f, "s", 1, 2)
	o := owners[0]
	if err := o.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitState(t, o.pid(), unix.WSTOPPED)

	res, err := f.reap(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Released) != 0 {
		t.Errorf("released %v of a stopped owner", releasedIDs(res))
	}

	// CONTROL, on a copy of the registry: a heartbeat limit of 10s, and a
	// clock 11s after the last beat.
	ctl := newFleet(t)
	r, err := f.reg.Load(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	beats := map[claim.Owner]int64{}
	for _, a := range r.Agents {
		beats[a.Owner] = max(beats[a.Owner], a.Beat)
		if err := ctl.register(testCtx(t), a.ID, a.Owner); err != nil {
			t.Fatal(err)
		}
	}
	heartbeat := func(_ context.Context, o claim.Owner) (claim.Liveness, error) {
		const limit = 10 * time.Second
		now := beats[o] + int64(limit+time.Second)
		if now-beats[o] > int64(limit) {
			return claim.Dead, nil
		}
		return claim.Alive, nil
	}
	if res, err := ctl.reap(testCtx(t), claim.WithCheck(heartbeat)); err != nil || len(res.Released) != 2 {
		t.Errorf("CONTROL: heartbeat liveness released %v, %v; want the stopped owner's 2 claims", releasedIDs(res), err)
	}

	if err := o.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	o.send("finish")
	o.expect("finished")
	s := f.snapshot(t, agents[0])
	if err := s.check(); err != nil || s.reg.ActiveCount != 0 {
		t.Errorf("after the owner finished: active_count %d, %v", s.reg.ActiveCount, err)
	}
	for _, id := range agents[0] {
		if tk := s.tasks[id]; tk.State != status.Completed {
			t.Errorf("task %s is %s; want completed by its owner", id, tk.State)
		}
	}
}
