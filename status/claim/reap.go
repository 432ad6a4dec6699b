package claim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status"
)

// A Claim is one claim that the claims function of [Reap] finds in its
// document.
type Claim struct {
	// ID names the claim in its document (an agent's ID, a task's name):
	// not empty, unique in the document, and the same while the claim is
	// held.
	ID string
	// Owner is the claim's holder.
	Owner Owner
	// Docs are the other documents that releasing the claim changes (the
	// status file of its task, a registry that counts it), if any: Stores
	// of the same backend as the document.
	Docs []status.AnyStore
}

// A Result is what one [Reap] found.
type Result struct {
	// Released are the claims released, in the order the claims function
	// listed them.
	Released []Claim
	// Unknown are the claims kept because their owner's liveness is
	// unknown here (another host, another pid namespace).
	Unknown []Claim
}

// An Option configures [Reap].
type Option func(*options)

type options struct{ check Check }

// WithCheck makes [Reap] decide liveness with check instead of [Local]: a
// policy for other hosts, or etcdstore.LeaseCheck for owners that are
// etcd leases.
func WithCheck(check Check) Option {
	return func(o *options) {
		if check != nil {
			o.check = check
		}
	}
}

// Reap releases the claims held in doc whose owners are dead, each exactly
// once and atomically with the documents that count it.
//
// claims lists the claims a version of the document holds; release
// releases one inside a [status.MutateAll] transaction over doc and the
// claim's Docs: it changes doc (so that claims no longer lists it) and
// those documents (a count decremented, a task marked failed), reading
// them with [status.Store.In]. Both must have no effect other than on the
// documents, and may run more than once on a backend that retries (etcd).
//
// Reap reads doc without a lock and decides each owner's liveness (with
// [Local] unless [WithCheck] says otherwise). If some are [Dead], one
// MutateAll over doc and those claims' Docs lists the claims again, decides
// again under the locks, and releases each claim found there whose owner
// is still dead; a claim released meanwhile by another reaper is no longer
// listed, so it is not released twice. The transaction fails, writing
// nothing, if release returns an error or a released claim is still
// listed afterwards. See Reaping in the package doc for what is guaranteed.
//
// On error the Result lists no released claim, except with an error
// matching [fs.ErrDurabilityUnknown]: then the transaction is committed.
func Reap[T any](ctx context.Context, doc *status.Store[T], claims func(*T) []Claim, release func(*status.Tx, Claim) error, opts ...Option) (Result, error) {
	if ctx == nil || doc == nil || claims == nil || release == nil {
		return Result{}, fmt.Errorf("claim: reap: %w: nil context, document or function", os.ErrInvalid)
	}
	o := options{check: Local}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	cur, err := doc.Load(ctx)
	if err != nil {
		return Result{}, err
	}
	found := claims(&cur)
	if err := checkIDs(found); err != nil {
		return Result{}, fmt.Errorf("claim: reap %s: %w", doc.Name(), err)
	}
	var res Result
	var dead []Claim
	live := liveness{check: o.check}
	for _, c := range found {
		l, err := live.of(ctx, c.Owner)
		if err != nil {
			return Result{}, fmt.Errorf("claim: reap %s: %w", doc.Name(), err)
		}
		switch l {
		case Dead:
			dead = append(dead, c)
		case Unknown:
			res.Unknown = append(res.Unknown, c)
		}
	}
	if len(dead) == 0 {
		return res, nil
	}

	docs := []status.AnyStore{doc}
	inTx := map[string]bool{doc.Name(): true}
	candidate := map[string]bool{}
	for _, c := range dead {
		candidate[c.ID] = true
		for _, d := range c.Docs {
			if d != nil && !inTx[d.Name()] {
				inTx[d.Name()] = true
				docs = append(docs, d)
			}
		}
	}
	var released []Claim
	_, err = status.MutateAll(ctx, docs, func(tx *status.Tx) error {
		released = nil
		live := liveness{check: o.check} // decided again, under the locks
		t, err := doc.In(tx)
		if err != nil {
			return err
		}
		held := claims(t)
		if err := checkIDs(held); err != nil {
			return fmt.Errorf("claim: reap %s: %w", doc.Name(), err)
		}
		for _, c := range held {
			// A claim that was not a candidate, or that now needs a
			// document outside this transaction (released and taken
			// again meanwhile), waits for the next Reap.
			if !candidate[c.ID] || slices.ContainsFunc(c.Docs, func(d status.AnyStore) bool { return d == nil || !inTx[d.Name()] }) {
				continue
			}
			l, err := live.of(ctx, c.Owner)
			if err != nil {
				return fmt.Errorf("claim: reap %s: %w", doc.Name(), err)
			}
			if l != Dead {
				continue
			}
			if err := release(tx, c); err != nil {
				return fmt.Errorf("claim: reap %s: release %s: %w", doc.Name(), c.ID, err)
			}
			released = append(released, c)
		}
		for _, c := range claims(t) {
			if slices.ContainsFunc(released, func(r Claim) bool { return r.ID == c.ID }) {
				return fmt.Errorf("claim: reap %s: release of %s left it in the document (the next reaper would release it again)", doc.Name(), c.ID)
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrDurabilityUnknown) {
		return res, err
	}
	res.Released = released
	return res, err
}

// checkIDs requires the claims' IDs to be set and unique: a Reap matches
// the claims it found without a lock to those under the locks by ID.
func checkIDs(cs []Claim) error {
	seen := make(map[string]bool, len(cs))
	for _, c := range cs {
		if c.ID == "" {
			return fmt.Errorf("%w: a claim without an ID (owner %s)", os.ErrInvalid, c.Owner)
		}
		if seen[c.ID] {
			return fmt.Errorf("%w: two claims with the ID %q", os.ErrInvalid, c.ID)
		}
		seen[c.ID] = true
	}
	return nil
}

// liveness asks check once per owner.
type liveness struct {
	check Check
	seen  map[Owner]Liveness
}

func (l *liveness) of(ctx context.Context, o Owner) (Liveness, error) {
	if v, ok := l.seen[o]; ok {
		return v, nil
	}
	v, err := l.check(ctx, o)
	if err != nil {
		return Unknown, fmt.Errorf("liveness of %s: %w", o, err)
	}
	if l.seen == nil {
		l.seen = map[Owner]Liveness{}
	}
	l.seen[o] = v
	return v, nil
}
