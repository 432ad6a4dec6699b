//go:build unix

package etcdstore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/claim"
	"github.com/agentstate/core/status/slots"
)

// A registry of slots in etcd, owned by leases of processes.

type slotsFleet struct {
	dir   string
	opt   status.Option
	reg   *status.Store[slots.Registry]
	tasks []string
}

func openSlotsFleet(cli *clientv3.Client, dir string, tasks int) *slotsFleet {
	f := &slotsFleet{dir: dir, opt: With(cli)}
	f.reg = status.NewStore[slots.Registry](filepath.Join(dir, "registry.json"), f.opt)
	for i := range tasks {
		f.tasks = append(f.tasks, fmt.Sprintf("t%d", i))
	}
	return f
}

func (f *slotsFleet) task(name string) *status.Store[status.Status] {
	return status.NewStore[status.Status](filepath.Join(f.dir, name, "status.json"), f.opt)
}

func (f *slotsFleet) failTask(s slots.Slot) (slots.Edit, error) {
	p, err := slots.DocPath(f.reg, s.Docs[0])
	if err != nil {
		return slots.Edit{}, err
	}
	return slots.Transition(status.NewStore[status.Status](p, f.opt), status.Failed, status.Running), nil
}

// check reads the registry and the tasks at one revision (LoadAll): the
// counts are the slots', at most max_concurrent, and a task runs exactly
// while a slot holds it.
func (f *slotsFleet) check(ctx context.Context) error {
	docs := []status.AnyStore{f.reg}
	for _, name := range f.tasks {
		docs = append(docs, f.task(name))
	}
	tx, err := status.LoadAll(ctx, docs...)
	if err != nil {
		return err
	}
	g, err := f.reg.In(tx)
	if err != nil {
		return err
	}
	if g.ActiveCount != len(g.Agents) || len(g.Agents) > g.MaxConcurrent {
		return fmt.Errorf("active_count %d, %d slots, max_concurrent %d", g.ActiveCount, len(g.Agents), g.MaxConcurrent)
	}
	for i, name := range f.tasks {
		held := slices.ContainsFunc(g.Agents, func(s slots.Slot) bool { return s.Key == name })
		task, err := docs[i+1].(*status.Store[status.Status]).In(tx)
		if err != nil {
			return err
		}
		if running := task.State == status.Running; running != held {
			return fmt.Errorf("task %s: running %v, held by a slot %v", name, running, held)
		}
	}
	return nil
}

// A slotsChild is a process (TestSlotsHelperProcess) with a lease of TTL
// 2s: an agent that adopts slot SLOT (or, with ROLE noadopt, does not),
// or a dispatcher that reserves slot SLOT for task SLOT; it prints its
// lease, then "adopted", "refused" or "reserved", and waits; on "release"
// an agent releases its slot and prints "released".
type slotsChild struct {
	*child
	lease claim.Owner
}

func startSlotsChild(t *testing.T, endpoint, dir, role, slot string) *slotsChild {
	t.Helper()
	c := &slotsChild{child: startChild(t, "TestSlotsHelperProcess", "ETCDSTORE_HELPER=slots",
		"ETCDSTORE_ENDPOINT="+endpoint, "ETCDSTORE_PATH="+dir, "ETCDSTORE_ROLE="+role, "ETCDSTORE_SLOT="+slot)}
	c.lease.Lease = c.line()
	return c
}

// TestSlotsHelperProcess is the child side of TestSlotsLeases. Run
// normally, it does nothing.
func TestSlotsHelperProcess(t *testing.T) {
	if os.Getenv("ETCDSTORE_HELPER") != "slots" {
		return
	}
	if err := helperSlots(); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func helperSlots() error {
	cli, err := dial(os.Getenv("ETCDSTORE_ENDPOINT"))
	if err != nil {
		return err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l, err := NewLease(ctx, cli, 2*time.Second)
	if err != nil {
		return err
	}
	fmt.Println(l.Owner().Lease)
	f := openSlotsFleet(cli, os.Getenv("ETCDSTORE_PATH"), 0)
	id := os.Getenv("ETCDSTORE_SLOT")
	switch os.Getenv("ETCDSTORE_ROLE") {
	case "agent":
		if _, err := slots.Adopt(ctx, f.reg, id, l.Owner()); errors.Is(err, slots.ErrReleased) {
			fmt.Println("refused")
			return nil
		} else if err != nil {
			return err
		}
		fmt.Println("adopted")
	case "noadopt":
		fmt.Println("working")
	case "dispatcher":
		if _, err := slots.Reserve(ctx, f.reg, slots.Request{ID: id, Key: id, Owner: l.Owner()},
			slots.Transition(f.task(id), status.Running, status.Queued)); err != nil {
			return err
		}
		fmt.Println("reserved")
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if in.Text() == "release" {
			if _, err := slots.Release(ctx, f.reg, id, slots.Transition(f.task(id), status.Completed, status.Running)); err != nil {
				return err
			}
			fmt.Println("released")
		}
	}
	return l.Revoke(ctx)
}

// TestSlotsLeases: slots in etcd owned by leases. This process, a
// dispatcher with a lease, reserves slots t0..t5 and starts an agent
// process for each, which adopts its slot with its own lease; a dispatcher
// process reserves t6 and is killed before any agent runs; agents t0..t2
// are killed with SIGKILL. Once their leases have expired, two reapers at
// once with LeaseCheck release exactly t0..t2 and t6, each once, failing
// their tasks; the live agents keep theirs and release them. A checker
// reading the registry and the tasks at one revision never sees the counts,
// the cap or a task differ from the slots.
//
// CONTROL: t7's agent does not adopt its slot (the hand-off left out), and
// is killed too: its slot stays with this live dispatcher's lease, and no
// reap frees it.
func TestSlotsLeases(t *testing.T) {
	endpoint := sharedServer(t).Endpoint()
	cli := newClient(t, endpoint)
	ctx := testCtx(t)
	dir := t.TempDir()
	f := openSlotsFleet(cli, dir, 8)
	if _, err := f.reg.Create(ctx, slots.Registry{MaxConcurrent: 8}); err != nil {
		t.Fatal(err)
	}
	for _, name := range f.tasks {
		if _, err := f.task(name).Create(ctx, status.Status{State: status.Queued}); err != nil {
			t.Fatal(err)
		}
	}
	me, err := NewLease(ctx, cli, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer me.Revoke(context.Background())

	stop := make(chan struct{})
	var checked, violated int
	var firstViolation error
	var checker sync.WaitGroup
	checker.Go(func() {
		for {
			err := f.check(ctx)
			checked++
			if err != nil {
				violated++
				if firstViolation == nil {
					firstViolation = err
				}
			}
			select {
			case <-stop:
				return
			default:
			}
		}
	})

	agents := map[string]*slotsChild{}
	for _, name := range []string{"t0", "t1", "t2", "t3", "t4", "t5", "t7"} {
		if _, err := slots.Reserve(ctx, f.reg, slots.Request{ID: name, Key: name, Owner: me.Owner()},
			slots.Transition(f.task(name), status.Running, status.Queued)); err != nil {
			t.Fatal(err)
		}
		role, want := "agent", "adopted"
		if name == "t7" {
			role, want = "noadopt", "working"
		}
		agents[name] = startSlotsChild(t, endpoint, dir, role, name)
		if got := agents[name].line(); got != want {
			t.Fatalf("agent %s said %q", name, got)
		}
	}
	dispatcher := startSlotsChild(t, endpoint, dir, "dispatcher", "t6")
	if got := dispatcher.line(); got != "reserved" {
		t.Fatalf("dispatcher said %q", got)
	}

	// Watch each lease that is to die: a key attached to it is deleted when
	// the lease ends.
	var gone []<-chan int64
	for _, c := range []*slotsChild{agents["t0"], agents["t1"], agents["t2"], agents["t7"], dispatcher} {
		id, _ := strconv.ParseUint(c.lease.Lease, 16, 64)
		sentinel := "/slots-test/sentinel/" + c.lease.Lease
		if _, err := cli.Put(ctx, sentinel, "", clientv3.WithLease(clientv3.LeaseID(id))); err != nil {
			t.Fatal(err)
		}
		gone = append(gone, deleted(t, cli, sentinel))
		c.kill()
	}
	if res, err := slots.Reap(ctx, f.reg, f.failTask, slots.WithCheck(LeaseCheck(cli))); err != nil {
		t.Fatal(err)
	} else if len(res.Released) != 0 {
		// Possible only if a lease ended within the TTL: say so.
		t.Logf("reaped before the leases' TTL: %v", res.Released)
	}
	for _, g := range gone {
		if <-g == 0 {
			t.Fatal("a killed process's lease did not end")
		}
	}

	// Two reapers at once.
	var mu sync.Mutex
	var released []string
	var reapers sync.WaitGroup
	for range 2 {
		rcli := newClient(t, endpoint)
		reapers.Go(func() {
			rf := openSlotsFleet(rcli, dir, 0)
			res, err := slots.Reap(ctx, rf.reg, rf.failTask, slots.WithCheck(LeaseCheck(rcli)))
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			for _, s := range res.Released {
				released = append(released, s.ID)
			}
			mu.Unlock()
		})
	}
	reapers.Wait()
	slices.Sort(released)
	if want := []string{"t0", "t1", "t2", "t6"}; !slices.Equal(released, want) {
		t.Errorf("released %v; want %v, each once", released, want)
	}
	for name, want := range map[string]status.State{"t0": status.Failed, "t1": status.Failed, "t2": status.Failed, "t6": status.Failed,
		"t3": status.Running, "t4": status.Running, "t5": status.Running, "t7": status.Running} {
		st, err := f.task(name).Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.State != want {
			t.Errorf("task %s is %s, want %s", name, st.State, want)
		}
	}
	g, err := f.reg.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(g.Agents, func(s slots.Slot) bool { return s.ID == "t7" }); i < 0 {
		t.Error("CONTROL: the slot of the agent that never adopted it was released")
	} else {
		t.Log("CONTROL: the killed agent that did not adopt leaves its slot with the live dispatcher's lease")
	}
	for _, name := range []string{"t3", "t4", "t5"} {
		agents[name].send("release")
		if got := agents[name].line(); got != "released" {
			t.Errorf("agent %s said %q", name, got)
		}
	}
	close(stop)
	checker.Wait()
	if firstViolation != nil {
		t.Errorf("the checker saw %d of %d reads break the invariant; first: %v", violated, checked, firstViolation)
	}
	g, err = f.reg.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Agents) != 1 || g.ActiveCount != 1 || g.TotalSpawned != 8 {
		t.Errorf("at the end: %d slots, active_count %d, total_spawned %d; want 1, 1, 8", len(g.Agents), g.ActiveCount, g.TotalSpawned)
	}
	t.Logf("%d consistent reads", checked)
}
