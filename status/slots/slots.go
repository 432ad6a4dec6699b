package slots

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/claim"
)

// Refusals: an operation that returns one of them wrote nothing.
var (
	// ErrExists: a slot with the request's key (or ID) is active. Reserve
	// returns that slot with it.
	ErrExists = errors.New("slot already active")
	// ErrFull: max_concurrent slots are active.
	ErrFull = errors.New("registry full")
	// ErrTotal: max_total slots have been admitted.
	ErrTotal = errors.New("registry total reached")
	// ErrNoParent: the parent named holds no active slot.
	ErrNoParent = errors.New("parent holds no active slot")
	// ErrTooDeep: the slot would be deeper than max_depth.
	ErrTooDeep = errors.New("deeper than max_depth")
	// ErrReleased: no active slot has this ID (it was released, aborted or
	// reaped, or never reserved). A process that finds its slot released
	// must not do its work.
	ErrReleased = errors.New("slot released")
	// ErrAdopted: the slot's working process owns it already; it can be
	// neither adopted by another nor aborted.
	ErrAdopted = errors.New("slot adopted")
	// ErrHasChildren: active slots name this one as their parent.
	ErrHasChildren = errors.New("slot has active children")
	// ErrInvalid: the registry breaks the rules of docs/PROTOCOL.md (an ID
	// repeated, a parent missing...); an operator repairs it.
	ErrInvalid = errors.New("invalid registry")
)

// An Edit changes a slot's other documents in the transaction of the
// operation given it: Fn runs under the locks of the registry and Docs,
// after the operation's own change, and reads and changes Docs with
// [status.Store.In]. If Fn returns an error, nothing is written. Docs are
// Stores of the registry's backend; Fn follows the rules of
// [status.MutateAll]'s function (it may run more than once on etcd).
type Edit struct {
	Docs []status.AnyStore
	Fn   func(tx *status.Tx, s Slot) error
}

// Transition is the Edit that moves doc's status from one of from to to
// (see [status.Status.Transition]), as a task's status.json follows its
// slot: queued to running at Reserve, running to completed at Release.
func Transition(doc *status.Store[status.Status], to status.State, from ...status.State) Edit {
	return Edit{Docs: []status.AnyStore{doc}, Fn: func(tx *status.Tx, _ Slot) error {
		st, err := doc.In(tx)
		if err != nil {
			return err
		}
		return st.Transition(to, from...)
	}}
}

// A Request is what [Reserve] admits.
type Request struct {
	// ID names the new slot; "" makes a random one (16 hex digits). A slot
	// with this ID that is active already is returned with ErrExists.
	ID string
	// Key, if set, makes a retried spawn find its slot: a slot with this
	// key that is active already is returned with ErrExists.
	Key string
	// Parent, if set, is the ID of the active slot to spawn under.
	Parent string
	// Owner is the reserving process (claim.Self, or an etcd lease's
	// Owner); required.
	Owner claim.Owner
	// Resources name what the spawn creates, for Abort, Release and Reap
	// to return to their caller.
	Resources map[string]string
	// Members are the program's own members of the slot.
	Members status.Document
}

// Reserve admits a slot under reg's policy and returns it: one
// transaction over reg and the edits' documents, which the edits change
// (a task moves from queued to running). The slot records r.Owner, the
// edits' documents (which must lie in reg's directory, or below it) and
// r.Resources.
//
// A slot with r's key or ID that is active already is returned with an
// error matching ErrExists, and nothing is written: a retried spawn gets
// its slot back and must not start a second process. Otherwise the refusals
// ErrNoParent, ErrTooDeep, ErrFull and ErrTotal, in this order, write
// nothing. docs/PROTOCOL.md gives the rules.
func Reserve(ctx context.Context, reg *status.Store[Registry], r Request, edits ...Edit) (Slot, error) {
	e := merge(edits)
	s := Slot{ID: r.ID, Key: r.Key, Parent: r.Parent, Owner: r.Owner, Resources: r.Resources, Members: r.Members}
	err := func() error {
		if s.ID == "" {
			s.ID = newID()
		}
		if err := checkName("id", s.ID); err != nil {
			return err
		}
		if s.Key != "" {
			if err := checkName("key", s.Key); err != nil {
				return err
			}
		}
		if s.Owner == (claim.Owner{}) {
			return errors.New("no owner")
		}
		for name := range s.Resources {
			if name == "" {
				return errors.New("a resource without a name")
			}
		}
		for name := range s.Members.All() {
			if isDeclared(name) {
				return fmt.Errorf("Members holds %q, a member Slot declares", name)
			}
		}
		for _, d := range e.Docs {
			if d == nil {
				return errors.New("a nil document")
			}
			name, err := docName(reg.Name(), d.Name())
			if err != nil {
				return err
			}
			s.Docs = append(s.Docs, name)
		}
		if len(s.Docs) > maxDocs {
			return fmt.Errorf("%d documents, limit %d", len(s.Docs), maxDocs)
		}
		return nil
	}()
	if err != nil {
		return Slot{}, fmt.Errorf("slots: reserve in %s: %w: %w", reg.Name(), os.ErrInvalid, err)
	}
	s.ReservedAt = now()
	return change(ctx, "reserve", reg, s.ID, e, func(g *Registry) (Slot, error) {
		for _, a := range g.Agents {
			if a.ID == s.ID || (s.Key != "" && a.Key == s.Key) {
				return a, fmt.Errorf("%w: %s (key %q)", ErrExists, a.ID, a.Key)
			}
		}
		s := s.clone() // each run starts from the request (etcd may run again)
		if s.Parent != "" {
			i := g.find(s.Parent)
			if i < 0 {
				return Slot{}, fmt.Errorf("%w: %s", ErrNoParent, s.Parent)
			}
			s.Depth = g.Agents[i].Depth + 1
		}
		if s.Depth > g.MaxDepth {
			return Slot{}, fmt.Errorf("%w: depth %d, max_depth %d", ErrTooDeep, s.Depth, g.MaxDepth)
		}
		if n := len(g.Agents); n >= g.MaxConcurrent {
			return Slot{}, fmt.Errorf("%w: %d active, max_concurrent %d", ErrFull, n, g.MaxConcurrent)
		}
		total := max(g.TotalSpawned, len(g.Agents))
		if g.MaxTotal > 0 && total >= g.MaxTotal {
			return Slot{}, fmt.Errorf("%w: %d admitted, max_total %d", ErrTotal, total, g.MaxTotal)
		}
		g.Agents = append(g.Agents, s)
		g.TotalSpawned = total + 1
		return s, nil
	})
}

// Adopt makes owner, the process that does the slot's work, the owner of
// slot id, in one transaction with the edits. It refuses with ErrReleased
// if the slot is gone, and then the process must not do the work; with
// ErrAdopted if another owner has taken the slot over (by Adopt or
// HandOver). Adopting a slot the caller owns already (handed over to it,
// or adopted before) writes nothing but the edits' changes. The package
// doc's Ownership says why the working process adopts before it works.
func Adopt(ctx context.Context, reg *status.Store[Registry], id string, owner claim.Owner, edits ...Edit) (Slot, error) {
	return takeOver(ctx, "adopt", reg, id, owner, merge(edits))
}

// HandOver makes to the owner of slot id, for a reserver that has started
// the working process (to = claim.Of(its pid), taken before the reserver
// waits for it). It follows Adopt's rules: ErrReleased if the slot is gone
// (stop the process), ErrAdopted if another owner took it over, nothing
// written if to owns it already.
func HandOver(ctx context.Context, reg *status.Store[Registry], id string, to claim.Owner) (Slot, error) {
	return takeOver(ctx, "hand over", reg, id, to, Edit{})
}

func takeOver(ctx context.Context, op string, reg *status.Store[Registry], id string, owner claim.Owner, e Edit) (Slot, error) {
	if owner == (claim.Owner{}) {
		return Slot{}, fmt.Errorf("slots: %s %s in %s: %w: no owner", op, id, reg.Name(), os.ErrInvalid)
	}
	at := now()
	return change(ctx, op, reg, id, e, func(g *Registry) (Slot, error) {
		i := g.find(id)
		if i < 0 {
			return Slot{}, ErrReleased
		}
		s := &g.Agents[i]
		switch {
		case s.AdoptedAt.IsZero():
			s.Owner, s.AdoptedAt = owner, at
		case s.Owner != owner:
			return *s, fmt.Errorf("%w by %s", ErrAdopted, s.Owner)
		}
		return *s, nil
	})
}

// Release ends slot id, the normal end of its work, in one transaction
// with the edits (its task moves from running to completed). It returns
// the slot as it was, with the Resources it recorded. ErrReleased: the
// slot is gone (reaped, or released before); ErrHasChildren: slots
// spawned under it are still active.
func Release(ctx context.Context, reg *status.Store[Registry], id string, edits ...Edit) (Slot, error) {
	return remove(ctx, "release", reg, id, false, merge(edits))
}

// Abort ends slot id after a failed spawn, as Release does, and returns
// it with the Resources the spawn recorded, for the caller to remove. It
// also refuses with ErrAdopted once the working process owns the slot: that
// spawn did not fail, and its slot ends with Release.
func Abort(ctx context.Context, reg *status.Store[Registry], id string, edits ...Edit) (Slot, error) {
	return remove(ctx, "abort", reg, id, true, merge(edits))
}

func remove(ctx context.Context, op string, reg *status.Store[Registry], id string, unadopted bool, e Edit) (Slot, error) {
	return change(ctx, op, reg, id, e, func(g *Registry) (Slot, error) {
		i := g.find(id)
		if i < 0 {
			return Slot{}, ErrReleased
		}
		s := g.Agents[i]
		switch {
		case unadopted && !s.AdoptedAt.IsZero():
			return s, fmt.Errorf("%w by %s", ErrAdopted, s.Owner)
		case g.hasChildren(id):
			return s, ErrHasChildren
		}
		g.Agents = slices.Delete(g.Agents, i, i+1)
		return s, nil
	})
}

// change runs op on reg in one transaction with e's documents: it checks
// the registry, applies op and then e, and writes the counts.
func change(ctx context.Context, op string, reg *status.Store[Registry], id string, e Edit, fn func(*Registry) (Slot, error)) (Slot, error) {
	var out Slot
	apply := func(g *Registry) error {
		if err := g.check(); err != nil {
			return err
		}
		s, err := fn(g)
		out = s
		if err != nil {
			return err
		}
		g.settle()
		return nil
	}
	var err error
	if e.Fn == nil && len(e.Docs) == 0 {
		_, err = reg.Mutate(ctx, apply)
	} else {
		_, err = status.MutateAll(ctx, append([]status.AnyStore{reg}, e.Docs...), func(tx *status.Tx) error {
			r, err := reg.In(tx)
			if err != nil {
				return err
			}
			if err := apply(r); err != nil {
				return err
			}
			if e.Fn == nil {
				return nil
			}
			return e.Fn(tx, out)
		})
	}
	if err == nil {
		return out.clone(), nil
	}
	// The slot goes with a commit whose durability is unknown, and with the
	// refusals that name an existing slot.
	for _, keep := range []error{fs.ErrDurabilityUnknown, ErrExists, ErrAdopted, ErrHasChildren} {
		if errors.Is(err, keep) {
			return out.clone(), fmt.Errorf("slots: %s %s in %s: %w", op, id, reg.Name(), err)
		}
	}
	return Slot{}, fmt.Errorf("slots: %s %s in %s: %w", op, id, reg.Name(), err)
}

// merge makes one Edit of several: their documents, each once, and their
// functions in order.
func merge(edits []Edit) Edit {
	switch len(edits) {
	case 0:
		return Edit{}
	case 1:
		return edits[0]
	}
	var m Edit
	for _, e := range edits {
		for _, d := range e.Docs {
			if !slices.ContainsFunc(m.Docs, func(o status.AnyStore) bool { return o == d }) {
				m.Docs = append(m.Docs, d)
			}
		}
	}
	m.Fn = func(tx *status.Tx, s Slot) error {
		for _, e := range edits {
			if e.Fn != nil {
				if err := e.Fn(tx, s); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return m
}

// An Option configures [Reap] and [List].
type Option func(*options)

type options struct{ check claim.Check }

// WithCheck decides owners' liveness with check instead of claim.Local:
// etcdstore.LeaseCheck for owners that are etcd leases, or a policy for
// other hosts (see claim.Check).
func WithCheck(check claim.Check) Option {
	return func(o *options) {
		if check != nil {
			o.check = check
		}
	}
}

func collect(opts []Option) options {
	o := options{check: claim.Local}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

// Reaped is what [Reap] did.
type Reaped struct {
	// Released are the slots released, as they were, with the Resources
	// their spawn recorded: the caller's to remove.
	Released []Slot
	// Unknown are slots kept because their owner's liveness cannot be
	// told from here (another host, another pid namespace).
	Unknown []Slot
}

// Reap releases every slot of reg whose owner is dead, each exactly once
// however many reapers run, in one transaction per pass with the documents
// edit names for it, which it changes (a task moves from running to
// failed). It follows claim.Reap, whose Reaping section gives what is
// guaranteed: owners are judged by claim.Local unless WithCheck says
// otherwise, first without a lock, then again under the locks of the
// registry and of the dead slots' documents. A slot that is the parent of
// active slots is kept while they are; a later pass of the same call
// releases it once its children are gone, so Reap returns with no dead
// parent left whose children were dead too. Each pass takes time linear in
// the number of slots, and Reap returns when ctx is done.
//
// edit returns a slot's Edit (nil: the registry alone changes); Reap calls
// it for each slot it finds dead, before the locks and again under them.
// An Edit whose Fn returns an error matching status.ErrConflict, without
// having changed anything, leaves its documents as they are and the slot is
// released all the same (the task already left running); any other error,
// from edit or Fn, fails the pass, writing nothing. Build a slot's Stores
// from its Docs with DocPath, or from what your program trusts; never from
// paths you did not check (see Security in the package doc). The released
// slots' Resources are returned, not removed.
func Reap(ctx context.Context, reg *status.Store[Registry], edit func(Slot) (Edit, error), opts ...Option) (Reaped, error) {
	if ctx == nil || reg == nil {
		return Reaped{}, fmt.Errorf("slots: reap: %w: nil context or registry", os.ErrInvalid)
	}
	o := collect(opts)
	var all Reaped
	for {
		res, more, err := reapPass(ctx, reg, edit, o.check)
		all.Released = append(all.Released, res.Released...)
		all.Unknown = res.Unknown
		if err != nil {
			return all, fmt.Errorf("slots: reap %s: %w", reg.Name(), err)
		}
		if !more {
			return all, nil
		}
	}
}

// reapPass releases the slots without children whose owners are dead.
// more reports that it released a child, whose parent may now be released
// too.
func reapPass(ctx context.Context, reg *status.Store[Registry], edit func(Slot) (Edit, error), check claim.Check) (res Reaped, more bool, err error) {
	g, err := reg.Load(ctx)
	if err != nil {
		return Reaped{}, false, err
	}
	if err := g.check(); err != nil {
		return Reaped{}, false, err
	}
	live := liveness{check: check}
	dead := map[string]bool{}
	docs := []status.AnyStore{reg}
	inTx := map[string]bool{reg.Name(): true}
	parents := g.parents()
	for _, s := range g.Agents {
		if parents[s.ID] {
			continue
		}
		switch l, err := live.of(ctx, s.Owner); {
		case err != nil:
			return Reaped{}, false, err
		case l == claim.Unknown:
			res.Unknown = append(res.Unknown, s.clone())
		case l == claim.Dead:
			dead[s.ID] = true
			e, err := editOf(edit, s)
			if err != nil {
				return res, false, err
			}
			for _, d := range e.Docs {
				if !inTx[d.Name()] {
					inTx[d.Name()] = true
					docs = append(docs, d)
				}
			}
		}
	}
	if len(dead) == 0 {
		return res, false, nil
	}
	var released []Slot
	_, err = status.MutateAll(ctx, docs, func(tx *status.Tx) error {
		released = nil
		g, err := reg.In(tx)
		if err != nil {
			return err
		}
		if err := g.check(); err != nil {
			return err
		}
		live := liveness{check: check} // decided again, under the locks
		parents := g.parents()
		var edits []Edit
		kept := make([]Slot, 0, len(g.Agents))
		for _, s := range g.Agents {
			if !dead[s.ID] || parents[s.ID] {
				kept = append(kept, s)
				continue
			}
			l, err := live.of(ctx, s.Owner)
			if err != nil {
				return err
			}
			e, err := editOf(edit, s)
			if err != nil {
				return err
			}
			// A slot alive again (reserved anew with this ID), or whose
			// documents are not all locked here, waits for the next Reap.
			if l != claim.Dead || slices.ContainsFunc(e.Docs, func(d status.AnyStore) bool { return !inTx[d.Name()] }) {
				kept = append(kept, s)
				continue
			}
			released = append(released, s.clone())
			edits = append(edits, e)
		}
		g.Agents = kept
		g.settle()
		for i, e := range edits {
			if e.Fn == nil {
				continue
			}
			if err := e.Fn(tx, released[i]); err != nil && !errors.Is(err, status.ErrConflict) {
				return fmt.Errorf("release %s: %w", released[i].ID, err)
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrDurabilityUnknown) {
		return res, false, err
	}
	for _, s := range released {
		more = more || s.Parent != ""
	}
	res.Released = released
	return res, more, err
}

// editOf returns edit's Edit for s, checked.
func editOf(edit func(Slot) (Edit, error), s Slot) (Edit, error) {
	if edit == nil {
		return Edit{}, nil
	}
	e, err := edit(s.clone())
	if err != nil {
		return Edit{}, fmt.Errorf("edit of %s: %w", s.ID, err)
	}
	if slices.Contains(e.Docs, nil) {
		return Edit{}, fmt.Errorf("edit of %s: %w: a nil document", s.ID, os.ErrInvalid)
	}
	return e, nil
}

// liveness asks check once per owner, and checks ctx before each question:
// a registry may hold many slots.
type liveness struct {
	check claim.Check
	seen  map[claim.Owner]claim.Liveness
}

func (l *liveness) of(ctx context.Context, o claim.Owner) (claim.Liveness, error) {
	if v, ok := l.seen[o]; ok {
		return v, nil
	}
	if err := ctx.Err(); err != nil {
		return claim.Unknown, err
	}
	v, err := l.check(ctx, o)
	if err != nil {
		return claim.Unknown, fmt.Errorf("liveness of %s: %w", o, err)
	}
	if l.seen == nil {
		l.seen = map[claim.Owner]claim.Liveness{}
	}
	l.seen[o] = v
	return v, nil
}

// Listed is one slot of [List], for an ops view.
type Listed struct {
	Slot Slot
	// Liveness is its owner's, as the check tells it now.
	Liveness claim.Liveness
	// Age is the time since it was reserved; 0 for a slot without a
	// reserved_at (written by another program), as Python's list says.
	Age time.Duration
}

// List returns reg's slots, oldest first, each with its owner's liveness
// (claim.Local unless WithCheck says otherwise) and its age. It reads
// without a lock: the slots are one version of the registry, which may be
// replaced a moment later.
func List(ctx context.Context, reg *status.Store[Registry], opts ...Option) ([]Listed, error) {
	o := collect(opts)
	g, err := reg.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("slots: list: %w", err)
	}
	if err := g.check(); err != nil {
		return nil, fmt.Errorf("slots: list %s: %w", reg.Name(), err)
	}
	t := time.Now()
	live := liveness{check: o.check}
	out := make([]Listed, 0, len(g.Agents))
	for _, s := range g.Agents {
		l, err := live.of(ctx, s.Owner)
		if err != nil {
			return nil, fmt.Errorf("slots: list %s: %w", reg.Name(), err)
		}
		var age time.Duration
		if !s.ReservedAt.IsZero() {
			age = t.Sub(s.ReservedAt)
		}
		out = append(out, Listed{Slot: s, Liveness: l, Age: age})
	}
	return out, nil
}

// now is the time recorded in slots: UTC, in microseconds, which every
// language's clock and time type can hold.
func now() time.Time {
	if s := testSeams(); s != nil && s.now != nil {
		return s.now()
	}
	return time.Now().UTC().Truncate(time.Microsecond)
}

// seams are the switches of the tests. They exist only in builds with the
// crashhooks tag (make test sets it): testSeams returns nil in other
// builds, where every use compiles to nothing.
type seams struct {
	now func() time.Time // the time recorded in slots
}

// newID returns 16 random lowercase hex digits.
func newID() string {
	var b [8]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}
