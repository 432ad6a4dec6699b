package slots_test

import (
	"bufio"
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
	"time"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/claim"
	"github.com/agentstate/core/status/slots"
)

// The Go fleet member: a dispatcher and an agent, the test binary run with
// helperEnv set. doc.go gives the line protocol they follow.

func runHelper(mode string) error {
	// A hang fails the test that waits for this process; nothing is timed.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	switch mode {
	case "dispatcher":
		return dispatcher(ctx)
	case "agent":
		return agent(ctx)
	}
	return fmt.Errorf("unknown helper %q", mode)
}

// fleetEnv is what a member reads from its environment.
type fleetEnv struct {
	reg   *status.Store[slots.Registry]
	mode  string
	agent agentCmd
}

// agentCmd is FLEET_AGENT: the agent program a dispatcher starts.
type agentCmd struct {
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
}

func readEnv() (fleetEnv, error) {
	e := fleetEnv{reg: status.NewStore[slots.Registry](os.Getenv("FLEET_REG")), mode: os.Getenv("FLEET_MODE")}
	if a := os.Getenv("FLEET_AGENT"); a != "" {
		if err := json.Unmarshal([]byte(a), &e.agent); err != nil {
			return e, fmt.Errorf("FLEET_AGENT: %w", err)
		}
	}
	return e, nil
}

func (e fleetEnv) task(name string) *status.Store[status.Status] {
	return status.NewStore[status.Status](filepath.Join(filepath.Dir(e.reg.Name()), name, "status.json"))
}

// failTask is the reap's edit: the task of a released slot fails.
func (e fleetEnv) failTask(s slots.Slot) (slots.Edit, error) {
	if len(s.Docs) == 0 {
		return slots.Edit{}, nil
	}
	p, err := slots.DocPath(e.reg, s.Docs[0])
	if err != nil {
		return slots.Edit{}, err
	}
	return slots.Transition(status.NewStore[status.Status](p), status.Failed, status.Running), nil
}

// dispatcher answers spawn commands until stdin ends.
func dispatcher(ctx context.Context) error {
	e, err := readEnv()
	if err != nil {
		return err
	}
	me, err := claim.Self()
	if err != nil {
		return err
	}
	reports, barrier := os.NewFile(3, "reports"), os.NewFile(4, "barrier")
	in := bufio.NewScanner(os.Stdin)
	var children sync.WaitGroup
	defer children.Wait()
	for in.Scan() {
		f := strings.Fields(in.Text())
		switch {
		case len(f) == 1 && f[0] == "stop":
			barrier.Close()
			fmt.Println("stopped")
			io.Copy(io.Discard, os.Stdin)
			return nil
		case len(f) == 4 && f[0] == "spawn":
			answer, err := e.spawn(ctx, me, f[1], f[2], strings.Split(f[3], ","), reports, barrier, &children)
			if err != nil {
				answer = "error " + strings.ReplaceAll(err.Error(), "\n", " ")
			}
			fmt.Println(answer)
			if strings.HasPrefix(answer, "paused ") {
				io.Copy(io.Discard, os.Stdin) // until killed
				return nil
			}
		default:
			return fmt.Errorf("dispatcher: bad command %q", in.Text())
		}
	}
	return in.Err()
}

func (e fleetEnv) spawn(ctx context.Context, me claim.Owner, task, parent string, flags []string, reports, barrier *os.File, children *sync.WaitGroup) (string, error) {
	if parent == "-" {
		parent = ""
	}
	// A prompt file of this attempt's own, removed unless a slot records it.
	f, err := os.CreateTemp(filepath.Join(filepath.Dir(e.reg.Name()), task), "prompt-*.md")
	if err != nil {
		return "", err
	}
	prompt := f.Name()
	f.Close()
	admitted := false
	defer func() {
		if !admitted {
			os.Remove(prompt)
		}
	}()
	req := slots.Request{Key: task, Parent: parent, Owner: me, Resources: map[string]string{"prompt": prompt}}
	var s slots.Slot
	for try := 0; ; try++ {
		if e.mode == "bare" {
			s, err = e.bareReserve(ctx, req)
		} else {
			s, err = slots.Reserve(ctx, e.reg, req, slots.Transition(e.task(task), status.Running, status.Queued))
		}
		if !errors.Is(err, slots.ErrFull) || try == 20 {
			break
		}
		// At the cap: free the slots of dead owners, then back off a little
		// before trying again (a dispatcher's policy; nothing waits on it).
		if e.mode == "bare" {
			err = e.bareReap(ctx)
		} else {
			_, err = slots.Reap(ctx, e.reg, e.failTask)
		}
		if err != nil {
			return "", err
		}
		time.Sleep(time.Duration(1+try) * time.Millisecond)
	}
	switch {
	case errors.Is(err, slots.ErrExists):
		return "exists " + s.ID, nil
	case errors.Is(err, slots.ErrFull):
		return "refused full", nil
	case errors.Is(err, slots.ErrTotal):
		return "refused total", nil
	case errors.Is(err, slots.ErrNoParent):
		return "refused noparent", nil
	case errors.Is(err, slots.ErrTooDeep):
		return "refused toodeep", nil
	case errors.Is(err, status.ErrConflict):
		return "conflict", nil // the task left queued: its slot came and went
	case err != nil:
		return "", err
	}
	admitted = true
	if slices.Contains(flags, "pause-before-start") {
		return "paused " + s.ID, nil
	}
	argv := slices.Clone(e.agent.Argv)
	if slices.Contains(flags, "fail") {
		argv[0] = filepath.Join(os.TempDir(), "no-such-agent")
	}
	plan := "short"
	if slices.Contains(flags, "long") {
		plan = "long"
	}
	cmd := exec.Command(argv[0], append(argv[1:], s.ID, e.task(task).Name(), plan)...)
	cmd.Env = append(os.Environ(), e.agent.Env...)
	cmd.ExtraFiles = []*os.File{reports, barrier}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		s, err := slots.Abort(ctx, e.reg, s.ID, slots.Transition(e.task(task), status.Blocked, status.Running))
		if err != nil {
			return "", err
		}
		// This dispatcher created the prompt file; the slot says where.
		if err := os.Remove(s.Resources["prompt"]); err != nil {
			return "", err
		}
		return "aborted " + s.ID + " " + s.Resources["prompt"], nil
	}
	to, err := claim.Of(cmd.Process.Pid) // before Wait reaps it: the agent, or its zombie
	children.Go(func() { cmd.Wait() })
	if err != nil {
		return "", err
	}
	if slices.Contains(flags, "pause-before-handover") {
		return "paused " + s.ID, nil
	}
	if e.mode == "handover" {
		if _, err := slots.HandOver(ctx, e.reg, s.ID, to); errors.Is(err, slots.ErrReleased) {
			cmd.Process.Kill()
			return "lost " + s.ID, nil
		} else if err != nil && !errors.Is(err, slots.ErrAdopted) {
			return "", err
		}
	}
	return fmt.Sprintf("ok %s %d", s.ID, cmd.Process.Pid), nil
}

// agent is a worker: it adopts its slot before it works.
func agent(ctx context.Context) error {
	e, err := readEnv()
	if err != nil {
		return err
	}
	args := flagArgs()
	if len(args) != 3 {
		return fmt.Errorf("agent wants SLOT TASK PLAN, got %q", args)
	}
	id, taskPath, plan := args[0], args[1], args[2]
	reports, barrier := os.NewFile(3, "reports"), os.NewFile(4, "barrier")
	report := func(format string, a ...any) {
		fmt.Fprintf(reports, format+"\n", a...) // one write, shorter than PIPE_BUF
	}
	me, err := claim.Self()
	if err != nil {
		report("error %s %v", id, err)
		return err
	}
	report("started %s %d %d", id, me.PID, me.Start)
	task := status.NewStore[status.Status](taskPath)
	if e.mode == "handover" {
		if _, err := slots.Adopt(ctx, e.reg, id, me); errors.Is(err, slots.ErrReleased) {
			report("refused %s", id)
			return nil // the slot is gone: do not work
		} else if err != nil {
			report("error %s %v", id, err)
			return err
		}
		report("adopted %s", id)
	}
	if plan == "short" {
		var err error
		if e.mode == "bare" {
			err = e.bareRelease(ctx, id, task)
		} else {
			_, err = slots.Release(ctx, e.reg, id, slots.Transition(task, status.Completed, status.Running))
		}
		switch {
		case errors.Is(err, slots.ErrHasChildren):
			report("long %s", id)
			plan = "long"
		case err != nil:
			report("error %s %v", id, err)
			return err
		default:
			report("released %s", id)
		}
	}
	barrier.Close()
	if plan == "long" {
		<-ctx.Done() // until killed
	}
	return nil
}

// flagArgs returns the arguments after the test binary's own flags.
func flagArgs() []string {
	args := os.Args[1:]
	for len(args) > 0 && strings.HasPrefix(args[0], "-test.") {
		args = args[1:]
	}
	return args
}

// The CONTROL's operations: the registry read, changed and written back
// without its lock (fs.WriteAtomic: never torn, but racing), the task
// changed in a call of its own.

func (e fleetEnv) bareReserve(ctx context.Context, r slots.Request) (slots.Slot, error) {
	g, err := e.reg.Load(ctx)
	if err != nil {
		return slots.Slot{}, err
	}
	for _, a := range g.Agents {
		if a.Key == r.Key {
			return a, slots.ErrExists
		}
	}
	s := slots.Slot{ID: r.Key + "-" + strconv.Itoa(os.Getpid()), Key: r.Key, Parent: r.Parent, Owner: r.Owner, Resources: r.Resources,
		ReservedAt: time.Now().UTC(), Docs: []string{r.Key + "/status.json"}}
	if r.Parent != "" {
		i := slices.IndexFunc(g.Agents, func(a slots.Slot) bool { return a.ID == r.Parent })
		if i < 0 {
			return s, slots.ErrNoParent
		}
		s.Depth = g.Agents[i].Depth + 1
	}
	switch {
	case s.Depth > g.MaxDepth:
		return s, slots.ErrTooDeep
	case len(g.Agents) >= g.MaxConcurrent:
		return s, slots.ErrFull
	}
	if _, err := e.task(r.Key).Mutate(ctx, status.Transition(status.Running, status.Queued)); err != nil {
		return s, err
	}
	g.Agents = append(g.Agents, s)
	g.ActiveCount++
	g.TotalSpawned++
	return s, e.bareWrite(g)
}

func (e fleetEnv) bareRelease(ctx context.Context, id string, task *status.Store[status.Status]) error {
	g, err := e.reg.Load(ctx)
	if err != nil {
		return err
	}
	g.Agents = slices.DeleteFunc(g.Agents, func(a slots.Slot) bool { return a.ID == id })
	g.ActiveCount--
	if err := e.bareWrite(g); err != nil {
		return err
	}
	_, err = task.Mutate(ctx, status.Transition(status.Completed, status.Running))
	return err
}

func (e fleetEnv) bareReap(ctx context.Context) error {
	g, err := e.reg.Load(ctx)
	if err != nil {
		return err
	}
	var dead []slots.Slot
	g.Agents = slices.DeleteFunc(g.Agents, func(a slots.Slot) bool {
		l, _ := claim.Local(ctx, a.Owner)
		if l == claim.Dead {
			dead = append(dead, a)
			g.ActiveCount--
		}
		return l == claim.Dead
	})
	if err := e.bareWrite(g); err != nil {
		return err
	}
	for _, a := range dead {
		e.task(a.Key).Mutate(ctx, status.Transition(status.Failed, status.Running))
	}
	return nil
}

func (e fleetEnv) bareWrite(g slots.Registry) error {
	b, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		return err
	}
	return fs.WriteAtomic(e.reg.Name(), append(b, '\n'), 0o644)
}
