package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/claim"
	"github.com/agentstate/core/status/slots"
)

const helpSlot = `Usage: corestate slot COMMAND [FLAG]... REG ...

  corestate slot reserve  [FLAG]... [--id ID] [--key KEY] [--parent ID] [--owner PID] [--resource NAME=VALUE]... [--member NAME=VALUE]... REG [-- DOC [OP]...]...
  corestate slot adopt    [FLAG]... [--owner PID] REG ID [OP]... [-- CMD [ARG]...]
  corestate slot handover [FLAG]... REG ID PID
  corestate slot release  [FLAG]... REG ID [OP]...
  corestate slot abort    [FLAG]... REG ID [OP]...
  corestate slot reap     [FLAG]... [--dead-host HOST]... REG [OP]...
  corestate slot list     [--json] [--max-size N] [--dead-host HOST]... REG

Admits work under caps with the registry of slots REG (package
github.com/agentstate/core/status/slots; its format and the rules of each
command are in docs/PROTOCOL.md, Registries of slots). Each command is one
transaction over REG and the slot's other documents: all of its changes are
written, or none. A dispatcher script reserves a slot, starts the agent and
hands the slot over to it (or the agent adopts it); the agent releases it
when it is done; a failed start aborts it; reap frees the slots of dead
owners:

  slot=$(corestate slot reserve --key fix-42 --owner $$ --resource log=$log fleet/registry.json \
         -- fleet/fix-42/status.json --if status=queued status=running) || exit
  id=$(printf '%s\n' "$slot" | jq -r .id)
  corestate slot adopt fleet/registry.json "$id" -- ./agent.sh "$id" &   # adopts, then becomes the agent
  corestate slot reap fleet/registry.json --if status=running status=failed | cut -f2 | jq -r .resources.log

reserve admits a slot if REG's policy allows (max_concurrent: 0 or absent
admits nothing; max_total: 0 or absent is no cap; max_depth: 0 or absent
admits roots only), records its owner, the DOCs (paths relative to REG's
directory; a DOC outside it is a usage error) and the resources, and applies
each DOC's OPs, as tx does. A slot with the same --key (or --id) that is
active already is printed and nothing is written: exit 10, so that a retried
spawn does not start a second agent. A refusal (full, total reached, no such
parent, too deep) exits 8.

adopt makes the process that works the slot's owner: the parent of corestate,
or --owner PID. With -- CMD, corestate adopts the slot for itself and then
replaces itself with CMD (exec(2), which keeps the pid and the start time),
so that the owner recorded is the process that runs CMD, from before CMD
runs; CMD's own later adopt finds itself the owner. handover records PID
(corestate owner PID) as the owner, for a dispatcher that started the agent.
After either, another adopt or handover exits 8. adopt and handover exit 2
when the slot is gone: the agent must not work.

release ends the slot (its agent is done); abort ends a slot that no agent
adopted (a failed start; exit 8 once adopted). Both print the slot, whose
resources the caller removes; both exit 8 while slots name it as parent.
reap releases every slot whose owner is dead (corestate reap's rules; a
parent waits for its children), applying the OPs to each one's DOCs (a DOC
whose guards do not hold is left as it is, and the slot is released), and
prints one line per slot released or kept as unknown:

  released   SLOT
  unknown    SLOT

OPs of release, abort, adopt and reap apply to every DOC the slot recorded,
as tx applies them (--if GUARD, FIELD=VALUE, FIELD+=N, FIELD-=N); each DOC's
kind follows its name. list prints one line per slot, tab-separated:

  ID   KEY   LIVENESS   AGE   OWNER

KEY is - when the slot has none, AGE is seconds since the reserve (0 if
the slot records none), OWNER as corestate prints owners in words (quoted
if it holds control characters). --json prints one JSON object per line
instead: {"slot": SLOT, "liveness": "alive", "age": 42.5}. SLOT is always the
slot as REG holds it, in compact JSON on one line. No command removes a file
a slot names: reap and abort print them for the caller to remove.

Exit codes: as for the other commands; 2 no such slot, 3 REG corrupt or
breaking the slot rules, 8 refused (nothing written), 10 reserve found the
slot active already (printed).

Flags (before REG):
  --timeout D            wait at most D for the locks (default 30s; 0 = no limit)
  --max-size N           refuse a document larger than N bytes (default 16 MiB; 0 = no limit)
  --owner PID            the owner (reserve: the dispatcher; adopt: the agent); default:
                         the process that runs corestate (in a subshell, give --owner $$)
  --resource NAME=VALUE  a resource of the slot (reserve; repeatable)
  --member NAME=VALUE    a member of the slot, VALUE as set reads it (reserve; repeatable)
  --dead-host HOST       call owners on HOST dead, as corestate reap does (repeatable)
`

// slotFlags are the flags of the slot commands.
type slotFlags struct {
	timeout   time.Duration
	maxSize   int64
	id, key   string
	parent    string
	owner     int
	json      bool
	resources listFlag
	members   listFlag
	deadHosts listFlag
}

func cmdSlot(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: slot wants a command: reserve, adopt, handover, release, abort, reap or list", errUsage)
	}
	sub, args := args[0], args[1:]
	if sub == "-h" || sub == "-help" || sub == "--help" {
		printHelp(stdout, "slot")
		return flag.ErrHelp
	}
	var f slotFlags
	fl := newFlags("slot " + sub)
	fl.DurationVar(&f.timeout, "timeout", 30*time.Second, "wait at most this long for the locks (0: no limit)")
	maxSizeFlag(fl, &f.maxSize)
	switch sub {
	case "reserve":
		fl.StringVar(&f.id, "id", "", "the slot's ID (default: 16 random hex digits)")
		fl.StringVar(&f.key, "key", "", "the slot's uniqueness key")
		fl.StringVar(&f.parent, "parent", "", "the ID of the parent slot")
		fl.Var(&f.resources, "resource", "NAME=VALUE: a resource of the slot (repeatable)")
		fl.Var(&f.members, "member", "NAME=VALUE: a member of the slot (repeatable)")
		fallthrough
	case "adopt":
		fl.IntVar(&f.owner, "owner", 0, "the owner's pid (default: the process that runs corestate)")
	case "reap", "list":
		fl.Var(&f.deadHosts, "dead-host", "call owners on this host dead (repeatable)")
		fl.BoolVar(&f.json, "json", false, "list: JSON lines")
	case "handover", "release", "abort":
	default:
		return fmt.Errorf("%w: slot: unknown command %q", errUsage, sub)
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(stdout, "slot")
			return err
		}
		return fmt.Errorf("%w: slot %s: %v", errUsage, sub, err)
	}
	switch {
	case f.timeout < 0:
		return fmt.Errorf("%w: slot %s: --timeout must not be negative (0 waits without limit)", errUsage, sub)
	case f.json && sub != "list":
		return fmt.Errorf("%w: slot %s: --json is list's", errUsage, sub)
	case f.owner < 0:
		return fmt.Errorf("%w: slot %s: --owner must be a pid", errUsage, sub)
	}
	pos := fl.Args()
	if len(pos) == 0 || strings.HasPrefix(pos[0], "-") {
		return fmt.Errorf("%w: slot %s wants REG", errUsage, sub)
	}
	reg := status.NewStore[slots.Registry](pos[0], status.WithMaxSize(f.maxSize))
	if sub == "list" {
		return f.list(ctx, reg, pos[1:], stdout)
	}
	ctx, cancel := withTimeout(ctx, f.timeout)
	defer cancel()
	var err error
	switch sub {
	case "reserve":
		err = f.reserve(ctx, reg, pos[1:], stdout)
	case "reap":
		err = f.reap(ctx, reg, pos[1:], stdout)
	default:
		err = f.onSlot(ctx, sub, reg, pos[1:], stdout)
	}
	if err == nil || errors.Is(err, errUsage) {
		return err
	}
	return slotError(sub, reg.Name(), f.timeout, err)
}

// slotError maps the package's refusals to the exit codes (see exitCode).
func slotError(sub, path string, timeout time.Duration, err error) error {
	switch {
	case errors.Is(err, slots.ErrExists):
		return &existsError{err}
	case errors.Is(err, slots.ErrReleased):
		return fmt.Errorf("%w: %w", errNotFound, err)
	case errors.Is(err, slots.ErrInvalid):
		return fmt.Errorf("%w: %w", errCorruptRegistry, err)
	case errors.Is(err, os.ErrInvalid) && !errors.Is(err, errBadField):
		return fmt.Errorf("%w: slot %s: %w", errUsage, sub, err)
	case slices.ContainsFunc([]error{slots.ErrFull, slots.ErrTotal, slots.ErrNoParent, slots.ErrTooDeep, slots.ErrAdopted, slots.ErrHasChildren},
		func(e error) bool { return errors.Is(err, e) }):
		return &refusedError{err}
	}
	return lockError("slot "+sub, path, timeout, err)
}

// errCorruptRegistry maps a registry that breaks the slot rules to exit 3.
var errCorruptRegistry = fmt.Errorf("%w", status.ErrCorrupt)

// An existsError is reserve's ErrExists: exit 10.
type existsError struct{ error }

func (e *existsError) Unwrap() error { return e.error }

// A refusedError is a refusal of the slot rules: exit 8.
type refusedError struct{ error }

func (e *refusedError) Unwrap() error { return e.error }

func (e *refusedError) Is(target error) bool { return target == status.ErrConflict }

// owner returns the owner --owner names, or the parent process's.
func (f *slotFlags) ownerOf() (claim.Owner, error) {
	pid := f.owner
	if pid == 0 {
		pid = os.Getppid()
	}
	o, err := claim.Of(pid)
	if err != nil {
		return o, fmt.Errorf("%w: %w", errNotFound, err)
	}
	return o, nil
}

func (f *slotFlags) reserve(ctx context.Context, reg *status.Store[slots.Registry], args []string, stdout io.Writer) error {
	if len(args) > 0 && args[0] != "--" {
		return fmt.Errorf("%w: slot reserve: %q after REG; documents follow --", errUsage, args[0])
	}
	var docs []txDoc
	if len(args) > 0 {
		var err error
		if docs, err = parseTx(kindByName, args[1:]); err != nil {
			return err
		}
	}
	req := slots.Request{ID: f.id, Key: f.key, Parent: f.parent, Resources: map[string]string{}}
	for _, r := range f.resources {
		name, value, ok := strings.Cut(r, "=")
		if !ok || name == "" {
			return fmt.Errorf("%w: slot reserve: --resource wants NAME=VALUE, got %q", errUsage, r)
		}
		req.Resources[name] = value
	}
	for _, m := range f.members {
		a, err := parseAssignment(kindJSON, m)
		if err != nil {
			return fmt.Errorf("slot reserve: --member: %w", err)
		}
		if err := req.Members.Set(a.name, a.value); err != nil || a.value == nil {
			return fmt.Errorf("%w: slot reserve: --member %s", errBadField, m)
		}
	}
	var err error
	if req.Owner, err = f.ownerOf(); err != nil {
		return err
	}
	s, err := slots.Reserve(ctx, reg, req, txEdit(docs, f.maxSize, false))
	if err != nil && !errors.Is(err, slots.ErrExists) {
		return err
	}
	if werr := printSlot(stdout, "", s); werr != nil {
		return werr
	}
	return err
}

// onSlot runs adopt, handover, release or abort: REG ID, then the
// command's arguments.
func (f *slotFlags) onSlot(ctx context.Context, sub string, reg *status.Store[slots.Registry], args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: slot %s wants REG ID", errUsage, sub)
	}
	id, args := args[0], args[1:]
	var cmd []string
	if i := indexOf(args, "--"); i >= 0 {
		if sub != "adopt" {
			return fmt.Errorf("%w: slot %s: -- is adopt's, before a command", errUsage, sub)
		}
		args, cmd = args[:i], args[i+1:]
		if len(cmd) == 0 {
			return fmt.Errorf("%w: slot adopt: no command after --", errUsage)
		}
		if f.owner != 0 {
			return fmt.Errorf("%w: slot adopt: --owner with a command: the command is the owner", errUsage)
		}
	}
	if sub == "handover" {
		if len(args) != 1 {
			return fmt.Errorf("%w: slot handover wants REG ID PID", errUsage)
		}
		pid, err := strconv.Atoi(args[0])
		if err != nil || pid <= 0 {
			return fmt.Errorf("%w: slot handover: PID must be a positive integer, got %q", errUsage, args[0])
		}
		to, err := claim.Of(pid)
		if err != nil {
			return fmt.Errorf("%w: %w", errNotFound, err)
		}
		s, err := slots.HandOver(ctx, reg, id, to)
		if err != nil {
			return err
		}
		return printSlot(stdout, "", s)
	}
	ops, err := parseOps(args)
	if err != nil {
		return err
	}
	edit, err := recordedEdit(ctx, reg, id, ops, f.maxSize)
	if err != nil {
		return err
	}
	var s slots.Slot
	switch sub {
	case "adopt":
		if cmd != nil {
			return adoptExec(ctx, reg, id, edit, cmd)
		}
		o, err := f.ownerOf()
		if err != nil {
			return err
		}
		s, err = slots.Adopt(ctx, reg, id, o, edit)
		if err != nil {
			return err
		}
	case "release":
		if s, err = slots.Release(ctx, reg, id, edit); err != nil {
			return err
		}
	case "abort":
		if s, err = slots.Abort(ctx, reg, id, edit); err != nil {
			return err
		}
	}
	return printSlot(stdout, "", s)
}

// adoptExec adopts slot id for this process and replaces it with cmd,
// which keeps the pid and the start time the owner records.
func adoptExec(ctx context.Context, reg *status.Store[slots.Registry], id string, edit slots.Edit, cmd []string) error {
	path, err := exec.LookPath(cmd[0])
	if err != nil {
		return fmt.Errorf("%w: slot adopt: %w", errNotFound, err)
	}
	me, err := claim.Self()
	if err != nil {
		return err
	}
	if _, err := slots.Adopt(ctx, reg, id, me, edit); err != nil {
		return err
	}
	// Should exec fail, this process ends owning the slot, and a reaper
	// frees it.
	if err := syscall.Exec(path, cmd, os.Environ()); err != nil {
		return fmt.Errorf("slot adopt: exec %s: %w", cmd[0], err)
	}
	return nil
}

func (f *slotFlags) reap(ctx context.Context, reg *status.Store[slots.Registry], args []string, stdout io.Writer) error {
	ops, err := parseOps(args)
	if err != nil {
		return err
	}
	res, err := slots.Reap(ctx, reg, func(s slots.Slot) (slots.Edit, error) {
		docs, err := slotDocs(reg, s, ops)
		if err != nil {
			return slots.Edit{}, err
		}
		return txEdit(docs, f.maxSize, true), nil
	}, slots.WithCheck(f.check))
	for _, l := range []struct {
		what string
		ss   []slots.Slot
	}{{"released", res.Released}, {"unknown", res.Unknown}} {
		for _, s := range l.ss {
			if werr := printSlot(stdout, l.what+"\t", s); werr != nil {
				return werr
			}
		}
	}
	return err
}

func (f *slotFlags) list(ctx context.Context, reg *status.Store[slots.Registry], args []string, stdout io.Writer) error {
	if len(args) > 0 {
		return fmt.Errorf("%w: slot list wants REG only", errUsage)
	}
	ls, err := slots.List(ctx, reg, slots.WithCheck(f.check))
	if err != nil {
		return slotError("list", reg.Name(), 0, err)
	}
	for _, l := range ls {
		b, err := json.Marshal(l.Slot)
		if err != nil {
			return err
		}
		age := max(l.Age.Seconds(), 0)
		if f.json {
			_, err = fmt.Fprintf(stdout, `{"slot":%s,"liveness":%q,"age":%s}`+"\n", b, l.Liveness, strconv.FormatFloat(age, 'f', -1, 64))
		} else {
			key := l.Slot.Key
			if key == "" {
				key = "-"
			}
			owner := l.Slot.Owner.String()
			if strings.ContainsFunc(owner, unicode.IsControl) { // written by hand: a line of its own, or an escape sequence
				owner = strconv.Quote(owner)
			}
			_, err = fmt.Fprintf(stdout, "%s\t%s\t%s\t%d\t%s\n", l.Slot.ID, key, l.Liveness, int64(age), owner)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// check is claim.Local with --dead-host, as corestate reap judges owners.
func (f *slotFlags) check(ctx context.Context, o claim.Owner) (claim.Liveness, error) {
	return (&reaper{deadHosts: f.deadHosts}).check(ctx, o)
}

func printSlot(w io.Writer, prefix string, s slots.Slot) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s%s\n", prefix, b)
	return err
}

// parseOps checks OPs as tx parses them, for a document of either kind;
// they are parsed again for each document the slot records.
func parseOps(ops []string) ([]string, error) {
	for _, probe := range []string{"slot.json", status.StatusFile} {
		if _, err := parseTxDoc(kindByName, append([]string{probe}, ops...)); err != nil {
			return nil, err
		}
	}
	return ops, nil
}

// recordedEdit is the Edit of ops on the documents slot id records; a slot
// that is gone has none (the operation then reports it gone).
func recordedEdit(ctx context.Context, reg *status.Store[slots.Registry], id string, ops []string, maxSize int64) (slots.Edit, error) {
	if len(ops) == 0 {
		return slots.Edit{}, nil
	}
	g, err := reg.Load(ctx)
	if err != nil {
		return slots.Edit{}, err
	}
	i := slices.IndexFunc(g.Agents, func(s slots.Slot) bool { return s.ID == id })
	if i < 0 {
		return slots.Edit{}, nil
	}
	docs, err := slotDocs(reg, g.Agents[i], ops)
	if err != nil {
		return slots.Edit{}, err
	}
	return txEdit(docs, maxSize, false), nil
}

// slotDocs returns the documents slot s records, each with ops.
func slotDocs(reg *status.Store[slots.Registry], s slots.Slot, ops []string) ([]txDoc, error) {
	var docs []txDoc
	for _, name := range s.Docs {
		path, err := slots.DocPath(reg, name)
		if err != nil {
			return nil, err
		}
		d, err := parseTxDoc(kindByName, append([]string{path}, ops...))
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	return docs, nil
}

// txEdit is the Edit that applies each document's guards and changes, as
// tx does. With skipConflicts (reap), a document whose guards or
// transition rule do not hold is left as it is (they are checked before
// anything of it changes) and the others still change.
func txEdit(docs []txDoc, maxSize int64, skipConflicts bool) slots.Edit {
	if len(docs) == 0 {
		return slots.Edit{}
	}
	stores := make([]store, len(docs))
	e := slots.Edit{}
	for i, d := range docs {
		stores[i] = newStore(d.kind, d.path, status.WithMaxSize(maxSize))
		e.Docs = append(e.Docs, stores[i].AnyStore)
	}
	e.Fn = func(t *status.Tx, _ slots.Slot) error {
		for i, d := range docs {
			dc, err := stores[i].in(t)
			if err == nil {
				err = d.apply(dc)
			}
			if skipConflicts && errors.Is(err, status.ErrConflict) {
				continue
			}
			if err != nil {
				return fmt.Errorf("%s: %w", d.path, err)
			}
		}
		return nil
	}
	return e
}
