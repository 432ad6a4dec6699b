package claim_test

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
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/claim"
)

// The tests' dispatcher: a registry of agents, each holding a claim on a
// task, counted in active_count; a task document per agent. Its invariant:
// active_count = the number of registered agents = the number of running
// tasks.

type registry struct {
	Agents      []agent `json:"agents"`
	ActiveCount int     `json:"active_count"`
}

type agent struct {
	ID    string      `json:"id"`
	Task  string      `json:"task"`
	Owner claim.Owner `json:"owner"`
	// Beat is the owner's last heartbeat (Unix nanoseconds), for the
	// CONTROL that guesses liveness from time.
	Beat int64 `json:"beat,omitempty"`
}

// task is an agent's task; Reaped counts the releases by a reaper, which
// must never exceed 1.
type task struct {
	State  status.State `json:"status"`
	Reaped int          `json:"reaped,omitempty"`
}

type fleet struct {
	dir string
	reg *status.Store[registry]
}

func openFleet(dir string) *fleet {
	return &fleet{dir: dir, reg: status.NewStore[registry](filepath.Join(dir, "registry.json"))}
}

func newFleet(t *testing.T) *fleet {
	t.Helper()
	f := openFleet(t.TempDir())
	if _, err := f.reg.Create(context.Background(), registry{}); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fleet) task(id string) *status.Store[task] {
	return status.NewStore[task](filepath.Join(f.dir, "task-"+id+".json"))
}

// register registers agent id, owned by o, and starts its task (again,
// if it ran before): one transaction.
func (f *fleet) register(ctx context.Context, id string, o claim.Owner) error {
	tk := f.task(id)
	_, _, err := status.MutateAll2(ctx, f.reg, tk, func(r *registry, t *task) error {
		if t.State == status.Running {
			return fmt.Errorf("task %s is running", id)
		}
		r.Agents = append(r.Agents, agent{ID: id, Task: tk.Name(), Owner: o, Beat: time.Now().UnixNano()})
		r.ActiveCount++
		t.State = status.Running
		return nil
	})
	return err
}

// finish is what an agent does when its work is done.
func (f *fleet) finish(ctx context.Context, id string) error {
	_, err := status.MutateAll(ctx, []status.AnyStore{f.reg, f.task(id)}, func(tx *status.Tx) error {
		return f.unregister(tx, id, status.Completed)
	})
	return err
}

// unregister takes agent id out of the registry and moves its task from
// running to `to`, inside a transaction: the release both finish and the
// reaper use.
func (f *fleet) unregister(tx *status.Tx, id string, to status.State) error {
	r, err := f.reg.In(tx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(r.Agents, func(a agent) bool { return a.ID == id })
	if i < 0 {
		return fmt.Errorf("agent %s is not registered", id)
	}
	t, err := status.NewStore[task](r.Agents[i].Task).In(tx)
	if err != nil {
		return err
	}
	if t.State != status.Running {
		return fmt.Errorf("task of %s is %s, not running", id, t.State)
	}
	r.Agents = slices.Delete(r.Agents, i, i+1)
	r.ActiveCount--
	t.State = to
	if to == status.Failed {
		t.Reaped++
	}
	return nil
}

// claims lists the registry's claims: each agent, with its task.
func (f *fleet) claims(r *registry) []claim.Claim {
	cs := make([]claim.Claim, 0, len(r.Agents))
	for _, a := range r.Agents {
		cs = append(cs, claim.Claim{ID: a.ID, Owner: a.Owner, Docs: []status.AnyStore{status.NewStore[task](a.Task)}})
	}
	return cs
}

// reap is the reaper under test.
func (f *fleet) reap(ctx context.Context, opts ...claim.Option) (claim.Result, error) {
	return claim.Reap(ctx, f.reg, f.claims, func(tx *status.Tx, c claim.Claim) error {
		return f.unregister(tx, c.ID, status.Failed)
	}, opts...)
}

// snapshot is the fleet read under every lock at one moment.
type snapshot struct {
	reg   registry
	tasks map[string]task
}

func (f *fleet) snapshot(t *testing.T, ids []string) snapshot {
	t.Helper()
	docs := []status.AnyStore{f.reg}
	for _, id := range ids {
		docs = append(docs, f.task(id))
	}
	tx, err := status.LoadAll(context.Background(), docs...)
	if err != nil {
		t.Fatal(err)
	}
	r, err := f.reg.In(tx)
	if err != nil {
		t.Fatal(err)
	}
	s := snapshot{reg: *r, tasks: map[string]task{}}
	for _, id := range ids {
		tk, err := f.task(id).In(tx)
		if err != nil {
			t.Fatal(err)
		}
		s.tasks[id] = *tk
	}
	return s
}

// registered lists the registered agents' IDs, sorted.
func (s snapshot) registered() []string {
	var ids []string
	for _, a := range s.reg.Agents {
		ids = append(ids, a.ID)
	}
	slices.Sort(ids)
	return ids
}

// check returns the first violation of the invariant.
func (s snapshot) check() error {
	running := 0
	for id, t := range s.tasks {
		if t.Reaped > 1 {
			return fmt.Errorf("task %s was released %d times", id, t.Reaped)
		}
		if t.State == status.Running {
			running++
			if !slices.Contains(s.registered(), id) {
				return fmt.Errorf("task %s runs but its agent is not registered", id)
			}
		}
	}
	if s.reg.ActiveCount != len(s.reg.Agents) || s.reg.ActiveCount != running {
		return fmt.Errorf("active_count %d, %d agents registered, %d tasks running", s.reg.ActiveCount, len(s.reg.Agents), running)
	}
	return nil
}

// ids returns prefix0 ... prefix(n-1).
func ids(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i)
	}
	return out
}

// pidOnly is the liveness of the hand-written reconcilers this package
// replaces: a process with the recorded pid exists.
func pidOnly(_ context.Context, o claim.Owner) (claim.Liveness, error) {
	if err := syscall.Kill(o.PID, 0); errors.Is(err, syscall.ESRCH) {
		return claim.Dead, nil
	}
	return claim.Alive, nil
}

// A child is a helper process (see runHelper) that talks in lines.
type child struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	stdout io.Reader
	out    *bufio.Scanner
	stderr *bytes.Buffer
	waited bool
}

// startHelper starts the test binary as helper mode with the environment
// variables env (NAME=VALUE); argv, if given, runs the binary through a
// wrapper (unshare ...) whose last argument is the binary.
func startHelper(t *testing.T, mode string, env []string, argv ...string) *child {
	t.Helper()
	argv = append(argv, os.Args[0], "-test.run=^$")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), append(env, helperEnv+"="+mode)...)
	return startChild(t, cmd)
}

// startChild starts cmd as a child that talks in lines.
func startChild(t *testing.T, cmd *exec.Cmd) *child {
	t.Helper()
	c := &child{t: t, cmd: cmd, stderr: &bytes.Buffer{}}
	cmd.Stderr = c.stderr
	var err error
	if c.in, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if c.stdout, err = cmd.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	c.out = bufio.NewScanner(c.stdout)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !c.waited {
			cmd.Process.Kill()
			c.wait()
		}
	})
	return c
}

func (c *child) pid() int { return c.cmd.Process.Pid }

// line returns the child's next line of output.
func (c *child) line() string {
	c.t.Helper()
	if !c.out.Scan() {
		c.wait()
		c.t.Fatalf("helper %d ended without output (%v); stderr:\n%s", c.pid(), c.out.Err(), c.stderr)
	}
	return c.out.Text()
}

func (c *child) expect(want string) {
	c.t.Helper()
	if got := c.line(); got != want {
		c.t.Fatalf("helper %d said %q; want %q; stderr:\n%s", c.pid(), got, want, c.stderr)
	}
}

func (c *child) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatalf("helper %d: %v", c.pid(), err)
	}
}

// kill ends the child with SIGKILL and waits for it: from then on its pid
// names no process (until the kernel reuses it).
func (c *child) kill() {
	c.t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		c.t.Fatal(err)
	}
	c.wait()
}

// close closes the child's input, which ends it, and waits for it.
func (c *child) close() error {
	c.in.Close()
	return c.wait()
}

func (c *child) wait() error {
	if c.waited {
		return nil
	}
	c.waited = true
	c.in.Close()
	io.Copy(io.Discard, c.stdout) // all read before Wait closes the pipe
	return c.cmd.Wait()
}

// runHelper is the child side. Modes:
//
//	wait     print "ready", then wait for the end of input
//	self     print claim.Self() as JSON, then wait for the end of input
//	owner    register the agents CLAIM_IDS (comma-separated) of the fleet in
//	         CLAIM_DIR with claim.Self(), print "ready"; on "finish" finish
//	         them and print "finished"; end with the input
//	reaper   wait for "go", then reap the fleet in CLAIM_DIR from
//	         CLAIM_GOROUTINES goroutines, each until a pass releases
//	         nothing; print "released ID" per claim, then "done"
//	stall    reap the fleet, but in the release of the second claim print
//	         "releasing" and wait for the end of input
//	twosteps the CONTROL reconciler: find a dead agent (pid-only), take it
//	         out of the registry with one Mutate, print "between", wait
//	         for a line, then fail its task with a second Mutate
func runHelper(mode string) int {
	if err := helper(mode); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func helper(mode string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a hang fails; nothing is timed
	defer cancel()
	in := bufio.NewScanner(os.Stdin)
	f := openFleet(os.Getenv("CLAIM_DIR"))
	switch mode {
	case "wait":
		fmt.Println("ready")
	case "self":
		me, err := claim.Self()
		if err != nil {
			return err
		}
		b, _ := json.Marshal(me)
		fmt.Println(string(b))
	case "owner":
		me, err := claim.Self()
		if err != nil {
			return err
		}
		agents := strings.Split(os.Getenv("CLAIM_IDS"), ",")
		for _, id := range agents {
			if err := f.register(ctx, id, me); err != nil {
				return err
			}
		}
		fmt.Println("ready")
		for in.Scan() {
			if in.Text() == "finish" {
				for _, id := range agents {
					if err := f.finish(ctx, id); err != nil {
						return err
					}
				}
				fmt.Println("finished")
			}
		}
		return nil
	case "reaper":
		if !in.Scan() || in.Text() != "go" {
			return errors.New("no go")
		}
		n, _ := strconv.Atoi(os.Getenv("CLAIM_GOROUTINES"))
		var mu sync.Mutex
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for range n {
			wg.Go(func() {
				for {
					res, err := f.reap(ctx)
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					for _, c := range res.Released {
						fmt.Println("released", c.ID)
					}
					mu.Unlock()
					if len(res.Released) == 0 {
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			return err
		}
		fmt.Println("done")
	case "stall":
		n := 0
		_, err := claim.Reap(ctx, f.reg, f.claims, func(tx *status.Tx, c claim.Claim) error {
			if n++; n == 2 {
				fmt.Println("releasing")
				io.Copy(io.Discard, os.Stdin)
			}
			return f.unregister(tx, c.ID, status.Failed)
		})
		return err
	case "twosteps":
		r, err := f.reg.Load(ctx)
		if err != nil {
			return err
		}
		for _, a := range r.Agents {
			if l, _ := pidOnly(ctx, a.Owner); l != claim.Dead {
				continue
			}
			if _, err := f.reg.Mutate(ctx, func(r *registry) error {
				r.Agents = slices.DeleteFunc(r.Agents, func(b agent) bool { return b.ID == a.ID })
				r.ActiveCount--
				return nil
			}); err != nil {
				return err
			}
			fmt.Println("between")
			in.Scan()
			_, err := status.NewStore[task](a.Task).Mutate(ctx, func(t *task) error {
				t.State = status.Failed
				t.Reaped++
				return nil
			})
			return err
		}
		return errors.New("no dead agent")
	default:
		return fmt.Errorf("unknown helper %q", mode)
	}
	for in.Scan() {
	}
	return nil
}
