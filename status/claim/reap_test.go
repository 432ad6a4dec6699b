package claim_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/claim"
)

// A list of claims in one document, with a count; liveness comes from a
// table, so these tests need no processes (internal/proof/claim has those).
type list struct {
	Claims []entry `json:"claims"`
	Count  int     `json:"count"`
}

type entry struct {
	ID    string      `json:"id"`
	Owner claim.Owner `json:"owner"`
}

func owner(pid int) claim.Owner { return claim.Owner{Host: "h", PID: pid} }

// table decides by pid: in dead, dead; else alive.
func table(dead ...int) claim.Option {
	return claim.WithCheck(func(_ context.Context, o claim.Owner) (claim.Liveness, error) {
		if slices.Contains(dead, o.PID) {
			return claim.Dead, nil
		}
		return claim.Alive, nil
	})
}

func newList(t *testing.T, entries ...entry) *status.Store[list] {
	t.Helper()
	s := status.NewStore[list](filepath.Join(t.TempDir(), "list.json"))
	if _, err := s.Create(context.Background(), list{Claims: entries, Count: len(entries)}); err != nil {
		t.Fatal(err)
	}
	return s
}

func claimsOf(l *list) []claim.Claim {
	var cs []claim.Claim
	for _, e := range l.Claims {
		cs = append(cs, claim.Claim{ID: e.ID, Owner: e.Owner})
	}
	return cs
}

func releaseFrom(s *status.Store[list]) func(*status.Tx, claim.Claim) error {
	return func(tx *status.Tx, c claim.Claim) error {
		l, err := s.In(tx)
		if err != nil {
			return err
		}
		l.Claims = slices.DeleteFunc(l.Claims, func(e entry) bool { return e.ID == c.ID })
		l.Count--
		return nil
	}
}

func load(t *testing.T, s *status.Store[list]) list {
	t.Helper()
	l, err := s.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestReapReleasesDeadOnly(t *testing.T) {
	s := newList(t, entry{"a", owner(1)}, entry{"b", owner(2)}, entry{"c", owner(1)}, entry{"d", claim.Owner{}})
	res, err := claim.Reap(context.Background(), s, claimsOf, releaseFrom(s), table(1))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range res.Released {
		ids = append(ids, c.ID)
	}
	if !slices.Equal(ids, []string{"a", "c"}) || len(res.Unknown) != 0 {
		t.Errorf("released %v, unknown %v", ids, res.Unknown)
	}
	if l := load(t, s); l.Count != 2 || len(l.Claims) != 2 {
		t.Errorf("after: %+v", l)
	}
	// Without WithCheck, Local decides: owners with no process identity
	// are unknown.
	res, err = claim.Reap(context.Background(), s, claimsOf, releaseFrom(s))
	if err != nil || len(res.Released) != 0 || len(res.Unknown) != 2 {
		t.Errorf("with Local: released %v, unknown %v, %v", res.Released, res.Unknown, err)
	}
}

// Misuse and failures: an error, and nothing written.
func TestReapRefuses(t *testing.T) {
	ctx := context.Background()
	errCheck := errors.New("etcd unreachable")
	for _, tc := range []struct {
		name    string
		entries []entry
		release func(s *status.Store[list]) func(*status.Tx, claim.Claim) error
		opt     claim.Option
		want    error
	}{
		{"an empty ID", []entry{{"", owner(1)}}, releaseFrom, table(1), os.ErrInvalid},
		{"two claims with one ID", []entry{{"a", owner(1)}, {"a", owner(2)}}, releaseFrom, table(1), os.ErrInvalid},
		{"a release that keeps the claim", []entry{{"a", owner(1)}}, func(s *status.Store[list]) func(*status.Tx, claim.Claim) error {
			return func(tx *status.Tx, c claim.Claim) error {
				l, err := s.In(tx)
				l.Count--
				return err
			}
		}, table(1), nil},
		{"a failing release", []entry{{"a", owner(1)}, {"b", owner(1)}}, func(s *status.Store[list]) func(*status.Tx, claim.Claim) error {
			return func(tx *status.Tx, c claim.Claim) error {
				if c.ID == "b" {
					return errCheck
				}
				return releaseFrom(s)(tx, c)
			}
		}, table(1), errCheck},
		{"a failing check", []entry{{"a", owner(1)}}, releaseFrom, claim.WithCheck(func(context.Context, claim.Owner) (claim.Liveness, error) {
			return claim.Unknown, errCheck
		}), errCheck},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newList(t, tc.entries...)
			before := load(t, s)
			res, err := claim.Reap(ctx, s, claimsOf, tc.release(s), tc.opt)
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) || len(res.Released) != 0 {
				t.Fatalf("released %v, error %v; want an error matching %v", res.Released, err, tc.want)
			}
			if !strings.Contains(err.Error(), s.Name()) {
				t.Errorf("error %q does not name the document", err)
			}
			if after := load(t, s); after.Count != before.Count || len(after.Claims) != len(before.Claims) {
				t.Errorf("changed %+v to %+v", before, after)
			}
		})
	}
	s := newList(t)
	for _, args := range []struct {
		ctx     context.Context
		doc     *status.Store[list]
		claims  func(*list) []claim.Claim
		release func(*status.Tx, claim.Claim) error
	}{
		{nil, s, claimsOf, releaseFrom(s)},
		{ctx, nil, claimsOf, releaseFrom(s)},
		{ctx, s, nil, releaseFrom(s)},
		{ctx, s, claimsOf, nil},
	} {
		if _, err := claim.Reap(args.ctx, args.doc, args.claims, args.release); !errors.Is(err, os.ErrInvalid) {
			t.Errorf("nil argument: %v", err)
		}
	}
	if _, err := claim.Of(0); !errors.Is(err, os.ErrInvalid) {
		t.Errorf("Of(0): %v", err)
	}
}

func TestLivenessString(t *testing.T) {
	for l, want := range map[claim.Liveness]string{claim.Unknown: "unknown", claim.Alive: "alive", claim.Dead: "dead", 7: "Liveness(7)"} {
		if got := l.String(); got != want {
			t.Errorf("%d: %q", l, got)
		}
	}
	for o, want := range map[claim.Owner]string{
		{}:                                 "no owner",
		{Host: "b7", PID: 42}:              "pid 42 on b7",
		{Lease: "1f", Host: "b7", PID: 42}: "etcd lease 1f pid 42 on b7",
	} {
		if got := o.String(); got != want {
			t.Errorf("%+v: %q; want %q", o, got, want)
		}
	}
}
