package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/claim"
)

const helpReap = `Usage: corestate reap [--timeout D] [--kind K] [--max-size N] [--member NAME] [--in ARRAY] [--count [FILE:]FIELD]... [--set FIELD=VALUE]... [--dead-host HOST]... FILE...

Releases the claims in each FILE whose owner has died, each once, in one
transaction with the documents that count it (claim.Reap, status.MutateAll),
so that counts come back to the truth after an owner was killed. An owner is
a JSON object that names a process (corestate owner prints one). It is dead
when this host shows that its process has ended (a later process with the
same pid does not count), or that its machine has restarted since; a
stopped or slow process is alive, and an owner on another host or in
another pid namespace is unknown and kept. The package doc of
github.com/agentstate/core/status/claim gives the owner's members and the
rules.

Without --in, FILE's top-level member NAME holds FILE's claim (absent or
null: none); releasing it removes NAME and applies the --set assignments to
FILE, as set does (status transitions included). With --in ARRAY, each
element of FILE's top-level array ARRAY that is an object with a member NAME
is a claim, and releasing it removes the element (to change each element's
documents in the same transaction, keep a registry of slots: corestate slot
reap). Each --count then
subtracts 1 per released claim from an integer FIELD: of FILE itself
(--count FIELD) or of another document (--count FILE:FIELD, split at the
last colon). Every FILE and counting document must exist (exit 2).

Prints one line per claim released or kept as unknown, tab-separated:

  released   FILE   CLAIM
  unknown    FILE   CLAIM

CLAIM is the owner (or, with --in, the element) as compact JSON; FILE is
quoted as sweep quotes it. Each FILE is reaped in a transaction of its own.
Reapers may run at once, next to programs that take and release claims
through the protocol: each claim is released once, and one that changes
while reap runs is left for the next run. Take a claim and count it, then
free the slots of dead agents:

  corestate tx registry.json --if 'active_count<max_concurrent' active_count+=1 \
            -- ws/status.json --if status=queued status=running owner="$(corestate owner $$)"
  corestate reap --count registry.json:active_count --set status=failed ws/*/status.json

Flags:
  --timeout D            wait at most D for the locks (default 30s; 0 = no limit)
  --max-size N           refuse a FILE larger than N bytes (default 16 MiB; 0 = no limit)
  --kind K               status or json: which rules every FILE and counting document
                         follows (default: status for a file named status.json)
  --member NAME          the member that holds the owner (default owner)
  --in ARRAY             the claims are the elements of this top-level array
  --count [FILE:]FIELD   subtract 1 per released claim (repeatable)
  --set FIELD=VALUE      apply to FILE when its claim is released (repeatable; not with --in)
  --dead-host HOST       call owners on HOST dead when nothing else decides: for a host
                         that is gone for good (repeatable; a process still running
                         there loses its claims)
`

const helpOwner = `Usage: corestate owner PID

Prints the owner of process PID of this host as compact JSON (claim.Of): its
host, machine and boot IDs, pid namespace and start time, which let corestate
reap (and programs in any language that follow the claim package doc) tell
when that process has ended, even after its pid is reused. A shell script
records its own, $$, in the claims it takes:

  corestate set ws/status.json status=running owner="$(corestate owner $$)" --if status=queued

A missing process exits 2. On systems other than Linux the owner holds host
and pid only, and reap keeps its claims (unknown).
`

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

func cmdOwner(args []string, stdout io.Writer) error {
	pos, err := parseFlags(newFlags("owner"), args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: owner wants PID, got %d arguments", errUsage, len(pos))
	}
	pid, err := strconv.Atoi(pos[0])
	if err != nil || pid <= 0 {
		return fmt.Errorf("%w: owner: PID must be a positive integer, got %q", errUsage, pos[0])
	}
	o, err := claim.Of(pid)
	if err != nil {
		return err
	}
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", b)
	return err
}

// A reaper is one run of reap: its flags, parsed.
type reaper struct {
	maxSize   int64
	kind      kind
	member    string
	in        string
	counts    []countRef
	sets      []string // FIELD=VALUE, parsed for each FILE's kind
	deadHosts []string
}

// A countRef is one --count: FIELD of the document at path ("" for the
// claim's own document).
type countRef struct{ path, field string }

func cmdReap(ctx context.Context, args []string, stdout io.Writer) error {
	var r reaper
	var timeout time.Duration
	var counts, sets, deadHosts listFlag
	fl := newFlags("reap")
	fl.DurationVar(&timeout, "timeout", 30*time.Second, "wait at most this long for the locks (0: no limit)")
	maxSizeFlag(fl, &r.maxSize)
	kindFlag(fl, &r.kind)
	fl.StringVar(&r.member, "member", "owner", "the member that holds the owner")
	fl.StringVar(&r.in, "in", "", "the claims are the elements of this top-level array")
	fl.Var(&counts, "count", "subtract 1 per released claim from [FILE:]FIELD (repeatable)")
	fl.Var(&sets, "set", "apply FIELD=VALUE to FILE when its claim is released (repeatable)")
	fl.Var(&deadHosts, "dead-host", "call owners on this host dead when nothing else decides (repeatable)")
	pos, err := parseFlags(fl, args, stdout)
	if err != nil {
		return err
	}
	switch {
	case len(pos) == 0:
		return fmt.Errorf("%w: reap wants FILE...", errUsage)
	case timeout < 0:
		return fmt.Errorf("%w: reap: --timeout must not be negative (0 waits without limit)", errUsage)
	case r.member == "":
		return fmt.Errorf("%w: reap: --member must not be empty", errUsage)
	case r.in != "" && len(sets) > 0:
		return fmt.Errorf("%w: reap: --set applies to a FILE's own claim, not to the elements of --in", errUsage)
	}
	r.sets = sets
	for _, path := range pos {
		if _, err := r.assignments(path); err != nil {
			return err
		}
	}
	for _, c := range counts {
		ref := countRef{field: c}
		if i := strings.LastIndexByte(c, ':'); i >= 0 {
			ref = countRef{path: c[:i], field: c[i+1:]}
		}
		if ref.field == "" || (ref.path == "" && strings.Contains(c, ":")) {
			return fmt.Errorf("%w: reap: --count wants [FILE:]FIELD, got %q", errUsage, c)
		}
		r.counts = append(r.counts, ref)
	}
	r.deadHosts = deadHosts
	for _, path := range pos {
		for _, ref := range r.counts {
			if ref.path == "" {
				ref.path = path
			}
			if err := checkNumberField(r.kind.of(ref.path), ref.field); err != nil {
				return fmt.Errorf("reap: --count: %w", err)
			}
		}
	}
	for _, path := range append(slices.Clone(pos), countPaths(r.counts)...) {
		if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("reap: %s: %w", path, errNotFound)
		}
	}
	ctx, cancel := withTimeout(ctx, timeout)
	defer cancel()
	for _, path := range pos {
		res, err := r.reap(ctx, path)
		if err != nil {
			if errors.Is(err, os.ErrInvalid) && !errors.Is(err, errBadField) {
				return fmt.Errorf("%w: reap: %w", errUsage, err)
			}
			return lockError("reap", path, timeout, err)
		}
		for _, l := range []struct {
			what string
			cs   []claim.Claim
		}{{"released", res.Released}, {"unknown", res.Unknown}} {
			for _, c := range l.cs {
				if _, err := fmt.Fprintf(stdout, "%s\t%s\t%s\n", l.what, quoteName(path), c.ID); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func countPaths(cs []countRef) []string {
	var out []string
	for _, c := range cs {
		if c.path != "" {
			out = append(out, c.path)
		}
	}
	return out
}

// assignments parses --set for the FILE at path, by its kind.
func (r *reaper) assignments(path string) ([]assignment, error) {
	var as []assignment
	for _, text := range r.sets {
		a, err := parseAssignment(r.kind.of(path), text)
		if err != nil {
			return nil, fmt.Errorf("reap: --set: %w", err)
		}
		as = append(as, a)
	}
	return as, nil
}

// reap runs claim.Reap on the document at path, typed by its kind. A
// claim's ID is its owner (or, with --in, its element) as compact JSON.
func (r *reaper) reap(ctx context.Context, path string) (claim.Result, error) {
	if r.kind.of(path).isStatus() {
		return reapAs[status.StatusDocument](ctx, r, path)
	}
	return reapAs[status.Document](ctx, r, path)
}

func reapAs[D any, P interface {
	*D
	doc
}](ctx context.Context, r *reaper, path string) (claim.Result, error) {
	k := r.kind.of(path)
	sets, err := r.assignments(path)
	if err != nil {
		return claim.Result{}, err
	}
	own := status.NewStore[D](path, status.WithMaxSize(r.maxSize))
	// The counting documents, each once; the claim's own stands for "".
	in := map[string]func(*status.Tx) (doc, error){"": func(tx *status.Tx) (doc, error) {
		d, err := own.In(tx)
		return P(d), err
	}}
	var others []status.AnyStore
	for _, c := range r.counts {
		if _, ok := in[c.path]; !ok {
			s := newStore(r.kind, c.path, status.WithMaxSize(r.maxSize))
			in[c.path] = s.in
			others = append(others, s.AnyStore)
		}
	}
	// Refuse a malformed claim before changing anything; one that turns
	// malformed meanwhile is not listed (claims has no error to return).
	cur, err := own.Load(ctx)
	if err != nil {
		return claim.Result{}, err
	}
	if _, err := r.claims(P(&cur), others); err != nil {
		return claim.Result{}, fmt.Errorf("%s: %w", path, err)
	}
	return claim.Reap(ctx, own, func(d *D) []claim.Claim {
		cs, _ := r.claims(P(d), others)
		return cs
	}, func(tx *status.Tx, c claim.Claim) error {
		d, err := in[""](tx)
		if err != nil {
			return err
		}
		if r.in == "" {
			d.Delete(r.member)
			if err := setFields(k, d, sets, nil); err != nil {
				return err
			}
		} else if err := removeElement(d, r.in, c.ID); err != nil {
			return err
		}
		for _, ref := range r.counts {
			dc, err := in[ref.path](tx)
			if err != nil {
				return err
			}
			if err := addInt(dc, ref.field, -1); err != nil {
				name := path
				if ref.path != "" {
					name = ref.path
				}
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		return nil
	}, claim.WithCheck(r.check))
}

// check is claim.Local, with the --dead-host policy for what it cannot
// decide.
func (r *reaper) check(ctx context.Context, o claim.Owner) (claim.Liveness, error) {
	l, err := claim.Local(ctx, o)
	if err == nil && l == claim.Unknown && o.Host != "" && slices.Contains(r.deadHosts, o.Host) {
		return claim.Dead, nil
	}
	return l, err
}

// claims lists the claims of d; others are the documents their release
// changes besides d.
func (r *reaper) claims(d doc, others []status.AnyStore) ([]claim.Claim, error) {
	if r.in == "" {
		c, ok, err := r.claim(d.Get(r.member))
		if err != nil || !ok {
			return nil, err
		}
		return []claim.Claim{{ID: c.id, Owner: c.owner, Docs: others}}, nil
	}
	elems, err := elements(d, r.in)
	if err != nil {
		return nil, err
	}
	var cs []claim.Claim
	for _, e := range elems {
		var obj map[string]json.RawMessage
		if json.Unmarshal(e, &obj) != nil {
			continue // not an object: not a claim
		}
		raw, present := obj[r.member]
		c, ok, err := r.claim(raw, present)
		if err != nil {
			return nil, fmt.Errorf("an element of %s: %w", r.in, err)
		}
		if !ok {
			continue
		}
		id := string(compactJSON(e))
		if slices.ContainsFunc(cs, func(c claim.Claim) bool { return c.ID == id }) {
			return nil, fmt.Errorf("%w %s: two identical claims %s (remove one with set)", errBadField, r.in, id)
		}
		cs = append(cs, claim.Claim{ID: id, Owner: c.owner, Docs: others})
	}
	return cs, nil
}

type found struct {
	id    string
	owner claim.Owner
}

// claim decodes the owner in raw: none if absent or null.
func (r *reaper) claim(raw json.RawMessage, present bool) (found, bool, error) {
	if !present || string(compactJSON(raw)) == "null" {
		return found{}, false, nil
	}
	var o claim.Owner
	if err := json.Unmarshal(raw, &o); err != nil || !bytes.HasPrefix(compactJSON(raw), []byte("{")) {
		return found{}, false, fmt.Errorf("%w %s: %s is not an owner (a JSON object; see corestate owner)", errBadField, r.member, compactJSON(raw))
	}
	return found{id: string(compactJSON(raw)), owner: o}, true, nil
}

// elements returns the elements of the top-level array name of d, as
// their bytes (none if it is absent or null).
func elements(d doc, name string) ([]json.RawMessage, error) {
	raw, ok := d.Get(name)
	if !ok || string(compactJSON(raw)) == "null" {
		return nil, nil
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, fmt.Errorf("%w %s: not an array", errBadField, name)
	}
	return elems, nil
}

// removeElement removes from the array name of d the element whose
// compact JSON is id, keeping the others' bytes.
func removeElement(d doc, name, id string) error {
	elems, err := elements(d, name)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(elems, func(e json.RawMessage) bool { return string(compactJSON(e)) == id })
	if i < 0 {
		return fmt.Errorf("%s: no element %s", name, id)
	}
	arr := []byte("[")
	for j, e := range slices.Delete(elems, i, i+1) {
		if j > 0 {
			arr = append(arr, ',')
		}
		arr = append(arr, e...)
	}
	return d.Set(name, append(arr, ']'))
}
