// Package slotstest is the suite of package slots that every backend
// passes: a backend's tests call Run with a Harness that opens its
// documents and makes owners that can die.
//
//	func TestSlots(t *testing.T) {
//		slotstest.Run(t, slotstest.Harness{
//			Options: []status.Option{etcdstore.With(cli)},
//			NewOwner: func(t *testing.T) (claim.Owner, func()) { ... }, // a lease; Revoke ends it
//			Check: etcdstore.LeaseCheck(cli),
//		})
//	}
//
// The suite checks each operation's rules and refusals (nothing written),
// retried keys, the counts, invalid and corrupt registries, the ownership
// hand-off, Abort's resources, parents that outlive their children, Reap and
// List with owners that die, and a cap that holds under concurrent
// reservations (CONTROL: the same reservations as a Load and a Mutate,
// which the same checker catches over the cap). It does not check
// processes killed at random, which internal/proof/slots does.
package slotstest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/claim"
	"github.com/agentstate/core/status/slots"
)

// A Harness connects the suite to one backend.
type Harness struct {
	// Options are passed to every status.NewStore (the backend).
	Options []status.Option
	// WriteRaw and ReadRaw write and read a document's stored bytes behind
	// the Stores' back; nil: the file at the path.
	WriteRaw func(t *testing.T, path string, data []byte)
	ReadRaw  func(t *testing.T, path string) []byte
	// NewOwner returns an owner that Check calls alive, and a function
	// after which Check calls it dead (a process killed, a lease revoked).
	NewOwner func(t *testing.T) (claim.Owner, func())
	// Check judges NewOwner's owners (nil: claim.Local).
	Check claim.Check
}

// Run runs the suite as subtests of t.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if h.WriteRaw == nil {
		h.WriteRaw = func(t *testing.T, path string, data []byte) {
			t.Helper()
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if h.ReadRaw == nil {
		h.ReadRaw = func(t *testing.T, path string) []byte {
			t.Helper()
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, Harness)
	}{
		{"ReserveRefusals", testReserveRefusals},
		{"ReserveRetrySameKey", testReserveRetrySameKey},
		{"CountsHealed", testCountsHealed},
		{"InvalidRegistryRefused", testInvalidRegistryRefused},
		{"CorruptRegistryRefused", testCorruptRegistryRefused},
		{"ReserveBadRequest", testReserveBadRequest},
		{"AdoptAndHandOver", testAdoptAndHandOver},
		{"Abort", testAbort},
		{"EditErrorWritesNothing", testEditErrorWritesNothing},
		{"ParentOutlivesChildren", testParentOutlivesChildren},
		{"Reap", testReap},
		{"ReapEditError", testReapEditError},
		{"ReapDeadOwners", testReapDeadOwners},
		{"List", testList},
		{"ConcurrentCap", testConcurrentCap},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, h) })
	}
}

// owner returns a made-up owner; table decides liveness by pid, so these
// tests need no processes (internal/proof/slots has those).
func owner(pid int) claim.Owner { return claim.Owner{Host: "h", PID: pid} }

func table(dead ...int) slots.Option {
	return slots.WithCheck(func(_ context.Context, o claim.Owner) (claim.Liveness, error) {
		switch {
		case o.Host != "h":
			return claim.Unknown, nil
		case slices.Contains(dead, o.PID):
			return claim.Dead, nil
		}
		return claim.Alive, nil
	})
}

type fleet struct {
	t   *testing.T
	h   Harness
	dir string
	reg *status.Store[slots.Registry]
}

// newFleet writes the registry text doc (the policy, say) in a new
// directory.
func newFleet(t *testing.T, h Harness, doc string) *fleet {
	t.Helper()
	f := &fleet{t: t, h: h, dir: t.TempDir()}
	f.reg = status.NewStore[slots.Registry](filepath.Join(f.dir, "registry.json"), h.Options...)
	h.WriteRaw(t, f.reg.Name(), []byte(doc))
	return f
}

// store returns the Store of the status document at path.
func (f *fleet) store(path string) *status.Store[status.Status] {
	return status.NewStore[status.Status](path, f.h.Options...)
}

// task returns the Store of task name, created queued.
func (f *fleet) task(name string) *status.Store[status.Status] {
	f.t.Helper()
	if err := os.MkdirAll(filepath.Join(f.dir, name), 0o755); err != nil {
		f.t.Fatal(err)
	}
	s := f.store(filepath.Join(f.dir, name, "status.json"))
	if _, err := s.Create(context.Background(), status.Status{State: status.Queued}); err != nil && !errors.Is(err, os.ErrExist) {
		f.t.Fatal(err)
	}
	return s
}

func (f *fleet) bytes() []byte {
	f.t.Helper()
	return f.h.ReadRaw(f.t, f.reg.Name())
}

func (f *fleet) load() slots.Registry {
	f.t.Helper()
	r, err := f.reg.Load(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func (f *fleet) reserve(r slots.Request, edits ...slots.Edit) (slots.Slot, error) {
	if r.Owner == (claim.Owner{}) {
		r.Owner = owner(1)
	}
	return slots.Reserve(context.Background(), f.reg, r, edits...)
}

func (f *fleet) mustReserve(r slots.Request, edits ...slots.Edit) slots.Slot {
	f.t.Helper()
	s, err := f.reserve(r, edits...)
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

func state(t *testing.T, task *status.Store[status.Status]) status.State {
	t.Helper()
	s, err := task.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s.State
}

func ids(ss []slots.Slot) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.ID)
	}
	return out
}

// checkCounts requires the counts to be the slots'.
func checkCounts(t *testing.T, r slots.Registry, spawned int) {
	t.Helper()
	if r.ActiveCount != len(r.Agents) || r.TotalSpawned != spawned {
		t.Errorf("active_count %d, total_spawned %d with %d slots; want %d, %d", r.ActiveCount, r.TotalSpawned, len(r.Agents), len(r.Agents), spawned)
	}
}

// Each refusal of Reserve matches its sentinel and writes nothing: neither
// the registry nor the edit's document.
func testReserveRefusals(t *testing.T, h Harness) {
	for _, tc := range []struct {
		name   string
		policy string
		req    slots.Request
		want   error
	}{
		{"full", `{"max_concurrent": 1, "agents": [{"id": "a", "depth": 0, "owner": {"host": "h", "pid": 1}}]}`, slots.Request{ID: "b"}, slots.ErrFull},
		{"no policy", `{}`, slots.Request{ID: "b"}, slots.ErrFull},
		{"total", `{"max_concurrent": 5, "max_total": 3, "total_spawned": 3}`, slots.Request{ID: "b"}, slots.ErrTotal},
		{"total below the slots", `{"max_concurrent": 5, "max_total": 1, "total_spawned": 0, "agents": [{"id": "a", "depth": 0}]}`, slots.Request{ID: "b"}, slots.ErrTotal},
		{"no parent", `{"max_concurrent": 5, "max_depth": 3}`, slots.Request{ID: "b", Parent: "gone"}, slots.ErrNoParent},
		{"too deep", `{"max_concurrent": 5, "max_depth": 0, "agents": [{"id": "a", "depth": 0}]}`, slots.Request{ID: "b", Parent: "a"}, slots.ErrTooDeep},
		{"key held", `{"max_concurrent": 5, "agents": [{"id": "a", "key": "k", "depth": 0}]}`, slots.Request{ID: "b", Key: "k"}, slots.ErrExists},
		{"id held", `{"max_concurrent": 5, "agents": [{"id": "a", "depth": 0}]}`, slots.Request{ID: "a"}, slots.ErrExists},
		// Checked in the order docs/PROTOCOL.md gives: the key before the cap.
		{"key held when full", `{"max_concurrent": 1, "agents": [{"id": "a", "key": "k", "depth": 0}]}`, slots.Request{Key: "k"}, slots.ErrExists},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFleet(t, h, tc.policy)
			task := f.task("t")
			before, taskBefore := f.bytes(), f.h.ReadRaw(t, task.Name())
			_, err := f.reserve(tc.req, slots.Transition(task, status.Running, status.Queued))
			if !errors.Is(err, tc.want) {
				t.Fatalf("Reserve: %v; want %v", err, tc.want)
			}
			if got := f.bytes(); !bytes.Equal(got, before) {
				t.Errorf("the registry changed:\n%s\nwas:\n%s", got, before)
			}
			if got := f.h.ReadRaw(t, task.Name()); !bytes.Equal(got, taskBefore) {
				t.Errorf("the task changed:\n%s", got)
			}
		})
	}
}

// A retried spawn with the same key gets the first one's slot back and
// writes nothing; the task moved once.
func testReserveRetrySameKey(t *testing.T, h Harness) {
	f := newFleet(t, h, `{"max_concurrent": 3}`)
	task := f.task("fix-42")
	req := slots.Request{Key: "acme/fix-42", Resources: map[string]string{"prompt": "/tmp/p"}}
	first := f.mustReserve(req, slots.Transition(task, status.Running, status.Queued))
	before := f.bytes()
	again, err := f.reserve(req, slots.Transition(task, status.Running, status.Queued))
	if !errors.Is(err, slots.ErrExists) {
		t.Fatalf("second Reserve: %v; want ErrExists", err)
	}
	if again.ID != first.ID || again.Key != first.Key {
		t.Errorf("second Reserve returned %+v; want the first slot %+v", again, first)
	}
	if !bytes.Equal(f.bytes(), before) {
		t.Error("the second Reserve wrote the registry")
	}
	r := f.load()
	checkCounts(t, r, 1)
	if len(r.Agents) != 1 || state(t, task) != status.Running {
		t.Errorf("%d slots, task %s; want 1, running", len(r.Agents), state(t, task))
	}
}

// Every operation writes the counts from the slots: a hand-edited count is
// healed, and total_spawned is at least the number of slots.
func testCountsHealed(t *testing.T, h Harness) {
	f := newFleet(t, h, `{"max_concurrent": 3, "active_count": 3, "total_spawned": 0,
		"agents": [{"id": "a", "depth": 0, "owner": {"host": "h", "pid": 1}}]}`)
	// The count says full; the slots do not.
	f.mustReserve(slots.Request{ID: "b"})
	checkCounts(t, f.load(), 2)
	// An operation that changes no slot heals too.
	h.WriteRaw(t, f.reg.Name(), bytes.Replace(f.bytes(), []byte(`"active_count": 2`), []byte(`"active_count": 9`), 1))
	if _, err := slots.Adopt(context.Background(), f.reg, "b", owner(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := slots.Adopt(context.Background(), f.reg, "b", owner(1)); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, f.load(), 2)
}

// A registry that decodes but breaks the rules is refused by every
// operation, which writes nothing.
func testInvalidRegistryRefused(t *testing.T, h Harness) {
	for _, tc := range []struct{ name, doc string }{
		{"repeated id", `{"max_concurrent": 5, "agents": [{"id": "a", "depth": 0}, {"id": "a", "depth": 0}]}`},
		{"no id", `{"max_concurrent": 5, "agents": [{"depth": 0}]}`},
		{"control character in id", `{"max_concurrent": 5, "agents": [{"id": "a\nb", "depth": 0}]}`},
		{"repeated key", `{"max_concurrent": 5, "agents": [{"id": "a", "key": "k", "depth": 0}, {"id": "b", "key": "k", "depth": 0}]}`},
		{"missing parent", `{"max_concurrent": 5, "agents": [{"id": "a", "parent": "p", "depth": 1}]}`},
		{"own parent", `{"max_concurrent": 5, "agents": [{"id": "a", "parent": "a", "depth": 1}]}`},
		{"wrong depth", `{"max_concurrent": 5, "agents": [{"id": "a", "depth": 1}]}`},
		{"parent cycle", `{"max_concurrent": 5, "agents": [{"id": "a", "parent": "b", "depth": 1}, {"id": "b", "parent": "a", "depth": 1}]}`},
		{"negative cap", `{"max_concurrent": -1}`},
		{"absolute doc", `{"max_concurrent": 5, "agents": [{"id": "a", "depth": 0, "docs": ["/etc/passwd"]}]}`},
		{"doc outside", `{"max_concurrent": 5, "agents": [{"id": "a", "depth": 0, "docs": ["x/../../y"]}]}`},
		{"unnamed resource", `{"max_concurrent": 5, "agents": [{"id": "a", "depth": 0, "resources": {"": "/x"}}]}`},
		{"more documents than a transaction takes", `{"max_concurrent": 5, "agents": [{"id": "a", "depth": 0, "docs": [` + manyDocs(1024) + `]}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFleet(t, h, tc.doc)
			ctx := context.Background()
			for _, op := range []func() error{
				func() error { _, err := f.reserve(slots.Request{ID: "new"}); return err },
				func() error { _, err := slots.Adopt(ctx, f.reg, "a", owner(1)); return err },
				func() error { _, err := slots.HandOver(ctx, f.reg, "a", owner(1)); return err },
				func() error { _, err := slots.Release(ctx, f.reg, "a"); return err },
				func() error { _, err := slots.Abort(ctx, f.reg, "a"); return err },
				func() error { _, err := slots.Reap(ctx, f.reg, nil, table(1)); return err },
				func() error { _, err := slots.List(ctx, f.reg, table(1)); return err },
			} {
				if err := op(); !errors.Is(err, slots.ErrInvalid) {
					t.Errorf("%v; want ErrInvalid", err)
				}
			}
			if got := string(f.bytes()); got != tc.doc {
				t.Errorf("the registry changed:\n%s", got)
			}
		})
	}
}

// manyDocs is n distinct document paths, as JSON strings joined by commas.
func manyDocs(n int) string {
	docs := make([]string, n)
	for i := range docs {
		docs[i] = fmt.Sprintf("%q", fmt.Sprintf("d%d/status.json", i))
	}
	return strings.Join(docs, ", ")
}

// Members of the wrong type make the registry corrupt: refused, unchanged.
func testCorruptRegistryRefused(t *testing.T, h Harness) {
	for _, doc := range []string{
		`{"max_concurrent": "3"}`,
		`{"max_concurrent": 3, "agents": [{"id": 7, "depth": 0}]}`,
		`{"max_concurrent": 3, "agents": ["a"]}`,
		`{"max_concurrent": 3, "agents": [{"id": "a", "id": "b", "depth": 0}]}`,
		`{"max_concurrent": 3, "agents": [{"id": "a\ud800", "depth": 0}]}`,
		`{"max_concurrent": 3, "agents": [{"id": "a", "ID": "b", "depth": 0}]}`,
		`{"max_concurrent": 3, "agents": [{"id": "a", "depth": 0, "x": 1, "x": 2}]}`,
		`{"max_concurrent": 3, "agents": [{"id": "a", "depth": 1.5}]}`,
		`{"max_concurrent": 3, "agents": [{"id": "a", "depth": 0, "owner": "pid 1"}]}`,
		`{"max_concurrent": 3, "agents": [{"id": "a", "depth": 0, "resources": {"log": 3}}]}`,
	} {
		f := newFleet(t, h, doc)
		if _, err := f.reserve(slots.Request{}); !errors.Is(err, status.ErrCorrupt) {
			t.Errorf("%s: %v; want ErrCorrupt", doc, err)
		}
		if got := string(f.bytes()); got != doc {
			t.Errorf("the registry changed:\n%s", got)
		}
	}
}

// Reserve takes no document from outside the registry's directory, and
// checks its request.
func testReserveBadRequest(t *testing.T, h Harness) {
	f := newFleet(t, h, `{"max_concurrent": 3}`)
	outside := f.store(filepath.Join(t.TempDir(), "status.json"))
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"document outside": func() error {
			_, err := f.reserve(slots.Request{}, slots.Transition(outside, status.Running, status.Queued))
			return err
		},
		"no owner": func() error {
			_, err := slots.Reserve(ctx, f.reg, slots.Request{})
			return err
		},
		"bad key": func() error { _, err := f.reserve(slots.Request{Key: "a\tb"}); return err },
		"declared member": func() error {
			var m status.Document
			m.Encode("id", "x")
			_, err := f.reserve(slots.Request{Members: m})
			return err
		},
	} {
		if err := call(); !errors.Is(err, os.ErrInvalid) {
			t.Errorf("%s: %v; want os.ErrInvalid", name, err)
		}
	}
	if _, err := outside.LoadExisting(ctx); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the document outside was written: %v", err)
	}
	if got := string(f.bytes()); got != `{"max_concurrent": 3}` {
		t.Errorf("the registry changed:\n%s", got)
	}
}

// Ownership changes once, from the reserver to the worker, by Adopt or
// HandOver; docs/PROTOCOL.md gives the table.
func testAdoptAndHandOver(t *testing.T, h Harness) {
	ctx := context.Background()
	reserver, worker, other := owner(1), owner(2), owner(3)
	for _, tc := range []struct {
		name  string
		steps func(f *fleet, id string) error
		want  error
		owner claim.Owner
	}{
		{"adopt", func(f *fleet, id string) error {
			_, err := slots.Adopt(ctx, f.reg, id, worker)
			return err
		}, nil, worker},
		{"hand over, then the worker confirms", func(f *fleet, id string) error {
			if _, err := slots.HandOver(ctx, f.reg, id, worker); err != nil {
				return err
			}
			_, err := slots.Adopt(ctx, f.reg, id, worker)
			return err
		}, nil, worker},
		{"adopt, then the reserver hands over to the same", func(f *fleet, id string) error {
			if _, err := slots.Adopt(ctx, f.reg, id, worker); err != nil {
				return err
			}
			_, err := slots.HandOver(ctx, f.reg, id, worker)
			return err
		}, nil, worker},
		{"a second adopter", func(f *fleet, id string) error {
			if _, err := slots.Adopt(ctx, f.reg, id, worker); err != nil {
				return err
			}
			_, err := slots.Adopt(ctx, f.reg, id, other)
			return err
		}, slots.ErrAdopted, worker},
		{"handed to another", func(f *fleet, id string) error {
			if _, err := slots.HandOver(ctx, f.reg, id, other); err != nil {
				return err
			}
			_, err := slots.Adopt(ctx, f.reg, id, worker)
			return err
		}, slots.ErrAdopted, other},
		{"released first", func(f *fleet, id string) error {
			if _, err := slots.Release(ctx, f.reg, id); err != nil {
				return err
			}
			_, err := slots.Adopt(ctx, f.reg, id, worker)
			return err
		}, slots.ErrReleased, claim.Owner{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFleet(t, h, `{"max_concurrent": 3}`)
			s := f.mustReserve(slots.Request{Owner: reserver})
			before := f.load()
			err := tc.steps(f, s.ID)
			if !errors.Is(err, tc.want) {
				t.Fatalf("%v; want %v", err, tc.want)
			}
			r := f.load()
			if tc.want == slots.ErrReleased {
				if len(r.Agents) != 0 {
					t.Errorf("slots %v after the release", ids(r.Agents))
				}
				return
			}
			if got := r.Agents[0]; got.Owner != tc.owner || got.AdoptedAt.IsZero() {
				t.Errorf("owner %s adopted at %v; want %s, adopted", got.Owner, got.AdoptedAt, tc.owner)
			}
			if before.Agents[0].AdoptedAt != (time.Time{}) {
				t.Error("a reserved slot has an adopted_at")
			}
		})
	}
}

// Abort returns what the spawn recorded and puts the task back; once the
// worker owns the slot, Abort refuses and writes nothing.
func testAbort(t *testing.T, h Harness) {
	ctx := context.Background()
	f := newFleet(t, h, `{"max_concurrent": 3}`)
	task := f.task("t")
	res := map[string]string{"prompt": "/tmp/prompt-t", "log_dir": "/var/log/t", "session": "tmux:t"}
	s := f.mustReserve(slots.Request{Resources: res}, slots.Transition(task, status.Running, status.Queued))
	got, err := slots.Abort(ctx, f.reg, s.ID, slots.Transition(task, status.Queued, status.Running))
	if err != nil {
		t.Fatal(err)
	}
	if !equalMaps(got.Resources, res) {
		t.Errorf("Abort returned resources %v; want %v", got.Resources, res)
	}
	if r := f.load(); len(r.Agents) != 0 || state(t, task) != status.Queued {
		t.Errorf("after Abort: slots %v, task %s; want none, queued", ids(r.Agents), state(t, task))
	}
	checkCounts(t, f.load(), 1)

	s = f.mustReserve(slots.Request{Resources: res}, slots.Transition(task, status.Running, status.Queued))
	if _, err := slots.Adopt(ctx, f.reg, s.ID, owner(2)); err != nil {
		t.Fatal(err)
	}
	before, taskBefore := f.bytes(), f.h.ReadRaw(t, task.Name())
	if _, err := slots.Abort(ctx, f.reg, s.ID, slots.Transition(task, status.Queued, status.Running)); !errors.Is(err, slots.ErrAdopted) {
		t.Fatalf("Abort of an adopted slot: %v; want ErrAdopted", err)
	}
	if !bytes.Equal(f.bytes(), before) || !bytes.Equal(f.h.ReadRaw(t, task.Name()), taskBefore) {
		t.Error("a refused Abort wrote")
	}
	got, err = slots.Release(ctx, f.reg, s.ID, slots.Transition(task, status.Completed, status.Running))
	if err != nil || !equalMaps(got.Resources, res) {
		t.Fatalf("Release: %v, resources %v", err, got.Resources)
	}
	if _, err := slots.Release(ctx, f.reg, s.ID); !errors.Is(err, slots.ErrReleased) {
		t.Errorf("second Release: %v; want ErrReleased", err)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// A failing edit writes nothing at all.
func testEditErrorWritesNothing(t *testing.T, h Harness) {
	f := newFleet(t, h, `{"max_concurrent": 3}`)
	task := f.task("t")
	if _, err := task.Mutate(context.Background(), status.Transition(status.Completed, status.Queued)); err != nil {
		t.Fatal(err)
	}
	before := f.bytes()
	if _, err := f.reserve(slots.Request{}, slots.Transition(task, status.Running, status.Queued)); !errors.Is(err, status.ErrConflict) {
		t.Fatalf("%v; want the edit's conflict", err)
	}
	if !bytes.Equal(f.bytes(), before) {
		t.Error("the registry changed")
	}
}

// A parent stays while its children do: Release and Abort refuse, Reap
// keeps a dead parent with a live child and releases a dead parent after
// its dead children, in one call.
func testParentOutlivesChildren(t *testing.T, h Harness) {
	ctx := context.Background()
	f := newFleet(t, h, `{"max_concurrent": 9, "max_depth": 2}`)
	p := f.mustReserve(slots.Request{ID: "p", Owner: owner(10)})
	f.mustReserve(slots.Request{ID: "c1", Parent: "p", Owner: owner(11)})
	f.mustReserve(slots.Request{ID: "g1", Parent: "c1", Owner: owner(12)})
	f.mustReserve(slots.Request{ID: "c2", Parent: "p", Owner: owner(13)})
	for _, op := range []func() error{
		func() error { _, err := slots.Release(ctx, f.reg, p.ID); return err },
		func() error { _, err := slots.Abort(ctx, f.reg, p.ID); return err },
	} {
		if err := op(); !errors.Is(err, slots.ErrHasChildren) {
			t.Errorf("%v; want ErrHasChildren", err)
		}
	}
	// p, c1 and g1 dead; c2 alive: g1 and c1 go, p stays for c2.
	res, err := slots.Reap(ctx, f.reg, nil, table(10, 11, 12))
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(res.Released); !slices.Equal(got, []string{"g1", "c1"}) {
		t.Errorf("released %v; want [g1 c1]", got)
	}
	if got := ids(f.load().Agents); !slices.Equal(got, []string{"p", "c2"}) {
		t.Errorf("left %v; want [p c2]", got)
	}
	// c2 dies too: both go, the child first.
	res, err = slots.Reap(ctx, f.reg, nil, table(10, 13))
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(res.Released); !slices.Equal(got, []string{"c2", "p"}) {
		t.Errorf("released %v; want [c2 p]", got)
	}
	checkCounts(t, f.load(), 4)
}

// Reap changes the documents of each released slot in the same
// transaction, returns their resources, keeps unknown owners, and releases
// a slot whose task already left running.
func testReap(t *testing.T, h Harness) {
	ctx := context.Background()
	f := newFleet(t, h, `{"max_concurrent": 9}`)
	tasks := map[string]*status.Store[status.Status]{}
	for i, name := range []string{"a", "b", "c", "d"} {
		tasks[name] = f.task(name)
		f.mustReserve(slots.Request{ID: name, Owner: owner(i + 1), Resources: map[string]string{"log": "/log/" + name}},
			slots.Transition(tasks[name], status.Running, status.Queued))
	}
	far := claim.Owner{Host: "elsewhere", PID: 1}
	if _, err := slots.Adopt(ctx, f.reg, "d", far); err != nil {
		t.Fatal(err)
	}
	// c's task completed, but its owner died before it released the slot.
	if _, err := tasks["c"].Mutate(ctx, status.Transition(status.Completed, status.Running)); err != nil {
		t.Fatal(err)
	}
	edit := func(s slots.Slot) (slots.Edit, error) {
		p, err := slots.DocPath(f.reg, s.Docs[0])
		if err != nil {
			return slots.Edit{}, err
		}
		return slots.Transition(f.store(p), status.Failed, status.Running), nil
	}
	res, err := slots.Reap(ctx, f.reg, edit, table(1, 3))
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(res.Released); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("released %v; want [a c]", got)
	}
	if got := ids(res.Unknown); !slices.Equal(got, []string{"d"}) {
		t.Errorf("unknown %v; want [d]", got)
	}
	for _, s := range res.Released {
		if s.Resources["log"] != "/log/"+s.ID {
			t.Errorf("%s came back with resources %v", s.ID, s.Resources)
		}
	}
	for name, want := range map[string]status.State{"a": status.Failed, "b": status.Running, "c": status.Completed, "d": status.Running} {
		if got := state(t, tasks[name]); got != want {
			t.Errorf("task %s is %s; want %s", name, got, want)
		}
	}
	checkCounts(t, f.load(), 4)
	// Again: nothing left to release, nothing written.
	before := f.bytes()
	if res, err := slots.Reap(ctx, f.reg, edit, table(1, 3)); err != nil || len(res.Released) != 0 {
		t.Errorf("second Reap: %v, released %v", err, ids(res.Released))
	}
	if !bytes.Equal(f.bytes(), before) {
		t.Error("a Reap that released nothing wrote")
	}
}

// An edit function that refuses a slot's documents fails the Reap, which
// then writes nothing.
func testReapEditError(t *testing.T, h Harness) {
	f := newFleet(t, h, `{"max_concurrent": 9, "agents": [{"id": "a", "depth": 0, "owner": {"host": "h", "pid": 1}}]}`)
	before := f.bytes()
	refuse := errors.New("not mine")
	_, err := slots.Reap(context.Background(), f.reg, func(slots.Slot) (slots.Edit, error) { return slots.Edit{}, refuse }, table(1))
	if !errors.Is(err, refuse) {
		t.Fatalf("%v; want the edit's error", err)
	}
	if !bytes.Equal(f.bytes(), before) {
		t.Error("the registry changed")
	}
}

// List gives each slot's owner liveness and age.
func testList(t *testing.T, h Harness) {
	old := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339Nano)
	f := newFleet(t, h, `{"max_concurrent": 9, "agents": [{"id": "old", "depth": 0, "owner": {"host": "h", "pid": 1}, "reserved_at": "`+old+`"}]}`)
	f.mustReserve(slots.Request{ID: "new", Owner: owner(2), Key: "k"})
	f.mustReserve(slots.Request{ID: "far", Owner: claim.Owner{Host: "x", PID: 3}})
	ls, err := slots.List(context.Background(), f.reg, table(2))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range ls {
		got = append(got, l.Slot.ID+" "+l.Liveness.String())
	}
	if want := []string{"old alive", "new dead", "far unknown"}; !slices.Equal(got, want) {
		t.Errorf("List: %v; want %v", got, want)
	}
	if ls[0].Age < time.Hour || ls[1].Age >= time.Hour {
		t.Errorf("ages %v, %v", ls[0].Age, ls[1].Age)
	}
}

// Owners that die: Reap releases exactly the slots of the owners the
// harness ended, with their tasks, and keeps the others'; the slot of a
// reserver that ended before the hand-over is released too; an agent whose
// slot was reaped before it adopted it is refused.
func testReapDeadOwners(t *testing.T, h Harness) {
	if h.NewOwner == nil {
		t.Skip("the harness makes no owners")
	}
	ctx := context.Background()
	f := newFleet(t, h, `{"max_concurrent": 9}`)
	dispatcher, killDispatcher := h.NewOwner(t)
	agent, killAgent := h.NewOwner(t)
	live, _ := h.NewOwner(t)
	tasks := map[string]*status.Store[status.Status]{}
	for _, name := range []string{"handed", "adopted", "unhanded", "live"} {
		tasks[name] = f.task(name)
		f.mustReserve(slots.Request{ID: name, Owner: dispatcher, Resources: map[string]string{"log": name}},
			slots.Transition(tasks[name], status.Running, status.Queued))
	}
	if _, err := slots.HandOver(ctx, f.reg, "handed", agent); err != nil {
		t.Fatal(err)
	}
	if _, err := slots.Adopt(ctx, f.reg, "adopted", live); err != nil {
		t.Fatal(err)
	}
	if _, err := slots.HandOver(ctx, f.reg, "live", live); err != nil {
		t.Fatal(err)
	}
	opt := slots.WithCheck(h.Check)
	if res, err := slots.Reap(ctx, f.reg, f.failTask, opt); err != nil || len(res.Released) != 0 {
		t.Fatalf("Reap with every owner alive: released %v, %v", ids(res.Released), err)
	}
	killAgent()      // the agent of "handed" dies while its dispatcher lives
	killDispatcher() // and the dispatcher dies before handing "unhanded" over
	res, err := slots.Reap(ctx, f.reg, f.failTask, opt)
	if err != nil {
		t.Fatal(err)
	}
	got := ids(res.Released)
	slices.Sort(got)
	if want := []string{"handed", "unhanded"}; !slices.Equal(got, want) {
		t.Errorf("released %v; want %v", got, want)
	}
	for name, want := range map[string]status.State{"handed": status.Failed, "unhanded": status.Failed, "adopted": status.Running, "live": status.Running} {
		if got := state(t, tasks[name]); got != want {
			t.Errorf("task %s is %s, want %s", name, got, want)
		}
	}
	// The agent of "unhanded" starts only now: it must not work.
	late, _ := h.NewOwner(t)
	if _, err := slots.Adopt(ctx, f.reg, "unhanded", late); !errors.Is(err, slots.ErrReleased) {
		t.Errorf("Adopt of a reaped slot: %v; want ErrReleased", err)
	}
	checkCounts(t, f.load(), 4)
	ls, err := slots.List(ctx, f.reg, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		if l.Liveness != claim.Alive {
			t.Errorf("slot %s left with its owner %s", l.Slot.ID, l.Liveness)
		}
	}
}

// failTask is a reaper's edit: the task of the slot, by the path it
// recorded, moves from running to failed.
func (f *fleet) failTask(s slots.Slot) (slots.Edit, error) {
	p, err := slots.DocPath(f.reg, s.Docs[0])
	if err != nil {
		return slots.Edit{}, err
	}
	return slots.Transition(f.store(p), status.Failed, status.Running), nil
}

// Reservers in goroutines race for a cap of 3 while others release and a
// checker reads the registry and the tasks together (LoadAll): never more
// than 3 slots, counts always the slots', a task running exactly while a
// slot names it. CONTROL: the same reservations as a Load, then a Mutate
// that writes what was decided from the Load, caught by the same checker.
func testConcurrentCap(t *testing.T, h Harness) {
	const workers, rounds, limit = 6, 8, 3
	run := func(t *testing.T, reserve func(f *fleet, task *status.Store[status.Status], name string) (bool, error)) (violations []string) {
		f := newFleet(t, h, fmt.Sprintf(`{"max_concurrent": %d}`, limit))
		var tasks []*status.Store[status.Status]
		for i := range workers * rounds {
			tasks = append(tasks, f.task(fmt.Sprintf("t%02d", i)))
		}
		ctx := context.Background()
		check := func() error {
			docs := []status.AnyStore{f.reg}
			for _, tk := range tasks {
				docs = append(docs, tk)
			}
			tx, err := status.LoadAll(ctx, docs...)
			if err != nil {
				return err
			}
			g, err := f.reg.In(tx)
			if err != nil {
				return err
			}
			if len(g.Agents) > limit || g.ActiveCount != len(g.Agents) {
				return fmt.Errorf("%d slots, active_count %d, cap %d", len(g.Agents), g.ActiveCount, limit)
			}
			for i, tk := range tasks {
				name := fmt.Sprintf("t%02d/status.json", i)
				held := slices.ContainsFunc(g.Agents, func(s slots.Slot) bool { return slices.Contains(s.Docs, name) })
				st, err := tk.In(tx)
				if err != nil {
					return err
				}
				if running := st.State == status.Running; held != running {
					return fmt.Errorf("%s: running %v, held %v", name, running, held)
				}
			}
			return nil
		}
		var mu sync.Mutex
		stop := make(chan struct{})
		var checker sync.WaitGroup
		checker.Go(func() {
			for {
				if err := check(); err != nil {
					mu.Lock()
					violations = append(violations, err.Error())
					mu.Unlock()
				}
				select {
				case <-stop:
					return
				default:
				}
			}
		})
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for r := range rounds {
					i := w*rounds + r
					name := fmt.Sprintf("t%02d", i)
					fail := func(err error) {
						mu.Lock()
						violations = append(violations, err.Error())
						mu.Unlock()
					}
					for {
						ok, err := reserve(f, tasks[i], name)
						if err != nil {
							fail(err)
							return
						}
						if ok {
							break
						}
					}
					// A slot lost to a stale write is gone (the CONTROL).
					if _, err := slots.Release(ctx, f.reg, name, slots.Transition(tasks[i], status.Completed, status.Running)); err != nil {
						fail(err)
						return
					}
				}
			})
		}
		wg.Wait()
		close(stop)
		checker.Wait()
		if err := check(); err != nil {
			violations = append(violations, "at the end: "+err.Error())
		}
		return violations
	}
	ctx := context.Background()
	violations := run(t, func(f *fleet, task *status.Store[status.Status], name string) (bool, error) {
		_, err := slots.Reserve(ctx, f.reg, slots.Request{ID: name, Owner: owner(1)}, slots.Transition(task, status.Running, status.Queued))
		if errors.Is(err, slots.ErrFull) {
			return false, nil
		}
		return err == nil, err
	})
	if len(violations) > 0 {
		t.Errorf("%d violations; first: %s", len(violations), violations[0])
	}
	// CONTROL: decide from a Load, write in a Mutate: the cap is checked
	// on a copy that may be stale when the write comes.
	for attempt := 1; ; attempt++ {
		violations := run(t, func(f *fleet, task *status.Store[status.Status], name string) (bool, error) {
			g, err := f.reg.Load(ctx)
			if err != nil || len(g.Agents) >= limit {
				return false, err
			}
			_, _, err = status.MutateAll2(ctx, f.reg, task, func(r *slots.Registry, t *status.Status) error {
				r.Agents = append(g.Agents, slots.Slot{ID: name, Owner: owner(1), Docs: []string{name + "/status.json"}})
				r.ActiveCount = len(r.Agents)
				r.TotalSpawned = max(r.TotalSpawned, len(r.Agents))
				return t.Transition(status.Running, status.Queued)
			})
			return err == nil, err
		})
		if len(violations) > 0 {
			t.Logf("CONTROL caught (attempt %d): %d violations; first: %s", attempt, len(violations), violations[0])
			return
		}
		if attempt == 3 {
			t.Fatal("CONTROL: deciding from a Load was not caught in 3 runs: the checker does not see the race")
		}
	}
}
