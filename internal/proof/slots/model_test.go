package slots_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/claim"
	"github.com/agentstate/core/status/slots"
)

// A model of a registry: docs/PROTOCOL.md's rules, written plainly.
type model struct {
	slots                       []mslot
	total                       int
	maxConc, maxTotal, maxDepth int
	dead                        map[int]bool
}

type mslot struct {
	ID, Key, Parent string
	Depth, Owner    int
	Adopted         bool
}

func (m *model) find(id string) int {
	return slices.IndexFunc(m.slots, func(s mslot) bool { return s.ID == id })
}

func (m *model) hasChildren(id string) bool {
	return slices.ContainsFunc(m.slots, func(s mslot) bool { return s.Parent == id })
}

// reserve returns the refusal the rules give, or nil after admitting.
func (m *model) reserve(id, key, parent string, owner int) error {
	for _, s := range m.slots {
		if s.ID == id || (key != "" && s.Key == key) {
			return slots.ErrExists
		}
	}
	depth := 0
	if parent != "" {
		i := m.find(parent)
		if i < 0 {
			return slots.ErrNoParent
		}
		depth = m.slots[i].Depth + 1
	}
	switch {
	case depth > m.maxDepth:
		return slots.ErrTooDeep
	case len(m.slots) >= m.maxConc:
		return slots.ErrFull
	case m.maxTotal > 0 && m.total >= m.maxTotal:
		return slots.ErrTotal
	}
	m.slots = append(m.slots, mslot{ID: id, Key: key, Parent: parent, Depth: depth, Owner: owner})
	m.total++
	return nil
}

func (m *model) takeOver(id string, owner int) error {
	i := m.find(id)
	switch {
	case i < 0:
		return slots.ErrReleased
	case !m.slots[i].Adopted:
		m.slots[i].Owner, m.slots[i].Adopted = owner, true
	case m.slots[i].Owner != owner:
		return slots.ErrAdopted
	}
	return nil
}

func (m *model) remove(id string, unadopted bool) error {
	i := m.find(id)
	switch {
	case i < 0:
		return slots.ErrReleased
	case unadopted && m.slots[i].Adopted:
		return slots.ErrAdopted
	case m.hasChildren(id):
		return slots.ErrHasChildren
	}
	m.slots = slices.Delete(m.slots, i, i+1)
	return nil
}

// reap releases dead owners' slots without children until none is left,
// and returns their IDs.
func (m *model) reap() []string {
	var out []string
	for {
		i := slices.IndexFunc(m.slots, func(s mslot) bool { return m.dead[s.Owner] && !m.hasChildren(s.ID) })
		if i < 0 {
			slices.Sort(out)
			return out
		}
		out = append(out, m.slots[i].ID)
		m.slots = slices.Delete(m.slots, i, i+1)
	}
}

func ownerOf(pid int) claim.Owner { return claim.Owner{Host: "model", PID: pid} }

// sentinels are the errors compared with the model's.
var sentinels = []error{slots.ErrExists, slots.ErrFull, slots.ErrTotal, slots.ErrNoParent, slots.ErrTooDeep,
	slots.ErrReleased, slots.ErrAdopted, slots.ErrHasChildren}

func sentinel(err error) error {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return s
		}
	}
	return err
}

// TestModel runs random operations on a registry and on the model, and
// requires the same outcome of each (the refusal, or nothing) and the same
// registry after each: slots, owners, adoption, depths, counts.
func TestModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		ctx := context.Background()
		m := &model{
			maxConc:  rapid.IntRange(0, 4).Draw(rt, "max_concurrent"),
			maxTotal: rapid.IntRange(0, 8).Draw(rt, "max_total"),
			maxDepth: rapid.IntRange(0, 2).Draw(rt, "max_depth"),
			dead:     map[int]bool{},
		}
		reg := status.NewStore[slots.Registry](filepath.Join(t.TempDir(), "registry.json"))
		if _, err := reg.Create(ctx, slots.Registry{MaxConcurrent: m.maxConc, MaxTotal: m.maxTotal, MaxDepth: m.maxDepth}); err != nil {
			rt.Fatal(err)
		}
		check := slots.WithCheck(func(_ context.Context, o claim.Owner) (claim.Liveness, error) {
			if m.dead[o.PID] {
				return claim.Dead, nil
			}
			return claim.Alive, nil
		})
		next := 0
		anID := func(rt *rapid.T) string {
			ids := []string{"gone"}
			for _, s := range m.slots {
				ids = append(ids, s.ID)
			}
			return rapid.SampledFrom(ids).Draw(rt, "id")
		}
		owner := func(rt *rapid.T) int { return rapid.IntRange(1, 5).Draw(rt, "owner") }
		same := func(rt *rapid.T, op string, got, want error) {
			if sentinel(got) != want {
				rt.Fatalf("%s: %v; the model says %v", op, got, want)
			}
		}
		rt.Repeat(map[string]func(*rapid.T){
			"reserve": func(rt *rapid.T) {
				id := fmt.Sprintf("s%d", next)
				if rapid.IntRange(0, 9).Draw(rt, "reuse id") == 0 {
					id = anID(rt)
				} else {
					next++
				}
				key := rapid.SampledFrom([]string{"", "k0", "k1", "k2"}).Draw(rt, "key")
				parent := ""
				if rapid.Bool().Draw(rt, "child") {
					parent = anID(rt)
				}
				o := owner(rt)
				want := m.reserve(id, key, parent, o)
				_, err := slots.Reserve(ctx, reg, slots.Request{ID: id, Key: key, Parent: parent, Owner: ownerOf(o)})
				same(rt, "reserve", err, want)
			},
			"adopt": func(rt *rapid.T) {
				id, o := anID(rt), owner(rt)
				want := m.takeOver(id, o)
				_, err := slots.Adopt(ctx, reg, id, ownerOf(o))
				same(rt, "adopt", err, want)
			},
			"hand over": func(rt *rapid.T) {
				id, o := anID(rt), owner(rt)
				want := m.takeOver(id, o)
				_, err := slots.HandOver(ctx, reg, id, ownerOf(o))
				same(rt, "hand over", err, want)
			},
			"release": func(rt *rapid.T) {
				id := anID(rt)
				want := m.remove(id, false)
				_, err := slots.Release(ctx, reg, id)
				same(rt, "release", err, want)
			},
			"abort": func(rt *rapid.T) {
				id := anID(rt)
				want := m.remove(id, true)
				_, err := slots.Abort(ctx, reg, id)
				same(rt, "abort", err, want)
			},
			"kill": func(rt *rapid.T) {
				m.dead[owner(rt)] = true
			},
			"reap": func(rt *rapid.T) {
				want := m.reap()
				res, err := slots.Reap(ctx, reg, nil, check)
				if err != nil {
					rt.Fatal(err)
				}
				var got []string
				for _, s := range res.Released {
					got = append(got, s.ID)
				}
				slices.Sort(got)
				if !slices.Equal(got, want) {
					rt.Fatalf("reap released %v; the model %v", got, want)
				}
			},
			"": func(rt *rapid.T) {
				g, err := reg.Load(ctx)
				if err != nil {
					rt.Fatal(err)
				}
				var got []mslot
				for _, s := range g.Agents {
					got = append(got, mslot{ID: s.ID, Key: s.Key, Parent: s.Parent, Depth: s.Depth, Owner: s.Owner.PID, Adopted: !s.AdoptedAt.IsZero()})
				}
				if diff := cmp.Diff(m.slots, got, cmpopts.EquateEmpty()); diff != "" {
					rt.Fatalf("registry differs from the model (-model +registry):\n%s", diff)
				}
				if g.ActiveCount != len(m.slots) || (len(m.slots) > 0 || m.total > 0) && g.TotalSpawned != m.total {
					rt.Fatalf("active_count %d, total_spawned %d; the model %d, %d", g.ActiveCount, g.TotalSpawned, len(m.slots), m.total)
				}
			},
		})
	})
}
