package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentstate/core/status"
)

func cmdSet(ctx context.Context, args []string, stdout io.Writer) error {
	wf, pos, err := parseWriteFlags("set", args, stdout)
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		return fmt.Errorf("%w: set wants FILE FIELD=VALUE..., got %d arguments", errUsage, len(pos))
	}
	path := pos[0]
	k := wf.kind.of(path)
	var as []assignment
	for _, arg := range pos[1:] {
		a, err := parseAssignment(k, arg)
		if err != nil {
			return fmt.Errorf("set %s: %w", path, err)
		}
		as = append(as, a)
	}
	guards, err := wf.ifs.parse(k)
	if err != nil {
		return fmt.Errorf("set %s: %w", path, err)
	}
	ctx, cancel := withTimeout(ctx, wf.timeout)
	defer cancel()
	d, err := set(ctx, wf.store(path), as, guards)
	if err != nil {
		return lockError("set", path, wf.timeout, err)
	}
	_, err = stdout.Write(layout(d))
	return err
}

// writeFlags are the flags of the commands that change a document under
// its lock: set and incr.
type writeFlags struct {
	timeout time.Duration
	ifs     guardFlags
	maxSize int64
	perm    permFlag
	kind    kind
}

// store returns the store of the document at path.
func (wf writeFlags) store(path string) store {
	return newStore(wf.kind, path, storeOptions(wf.maxSize, wf.perm)...)
}

// maxSizeFlag defines --max-size: status.WithMaxSize for a command.
func maxSizeFlag(fl *flag.FlagSet, n *int64) {
	fl.Int64Var(n, "max-size", status.DefaultMaxSize, "refuse a FILE larger than this many bytes (0: no limit)")
}

// kindFlag defines --kind: which rules a document follows (see kind).
func kindFlag(fl *flag.FlagSet, k *kind) {
	fl.Var(k, "kind", "status or json (default: status for a file named status.json, json for any other)")
}

// permFlagVar defines --perm: the permission bits of a created FILE.
func permFlagVar(fl *flag.FlagSet, p *permFlag) {
	fl.Var(p, "perm", "permission bits of a FILE that is created, in octal (default 0644, minus umask)")
}

// parseWriteFlags parses the flags of set or incr and returns the
// positional arguments. A negative --timeout is refused: only 0 means
// "no limit", and a script whose budget went below zero must not wait
// forever.
func parseWriteFlags(cmd string, args []string, out io.Writer) (writeFlags, []string, error) {
	var wf writeFlags
	fl := newFlags(cmd)
	fl.DurationVar(&wf.timeout, "timeout", 30*time.Second, "wait at most this long for the lock (0: no limit)")
	fl.Var(&wf.ifs, "if", "change only if FIELD=VALUE[,VALUE...] holds (repeatable)")
	maxSizeFlag(fl, &wf.maxSize)
	permFlagVar(fl, &wf.perm)
	kindFlag(fl, &wf.kind)
	pos, err := parseFlags(fl, args, out)
	if err == nil && wf.timeout < 0 {
		err = fmt.Errorf("%w: %s: --timeout must not be negative (0 waits without limit)", errUsage, cmd)
	}
	return wf, pos, err
}

// withTimeout bounds the wait for the lock; 0 means no bound.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d > 0 {
		return context.WithTimeout(ctx, d)
	}
	return ctx, func() {}
}

// lockError wraps an error of a command that took the lock.
func lockError(cmd, path string, timeout time.Duration, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: lock not acquired within --timeout %v: %w", named(cmd, path, err), timeout, err)
	}
	return fmt.Errorf("%s: %w", named(cmd, path, err), err)
}

// named is "cmd path", or just cmd when err already names path (the
// library's errors name the file they are about), so that the message
// names it once.
func named(cmd, path string, err error) string {
	if strings.Contains(err.Error(), path) {
		return cmd
	}
	return cmd + " " + path
}

// set applies as to the document in one Mutate, if the guards hold and
// the status transition (if any) is allowed, and returns the document as
// committed (or as found, when as changes nothing).
func set(ctx context.Context, st store, as []assignment, guards []guard) (doc, error) {
	return st.mutate(ctx, func(d doc) error {
		return applyChange(d, guards, func(d doc) error {
			return setFields(st.kind, d, as, guards)
		})
	})
}

// setFields applies the assignments to d, after the status transition
// rule of a status document (see checkTransition).
func setFields(k kind, d doc, as []assignment, guards []guard) error {
	if k.isStatus() {
		if err := checkTransition(d, as, guards); err != nil {
			return err
		}
	}
	for _, a := range as {
		if a.value == nil {
			d.Delete(a.name)
		} else if err := d.Set(a.name, a.value); err != nil {
			return fmt.Errorf("%w: %v", errBadField, err) // parseAssignment checked it
		}
	}
	return nil
}

// applyChange is one document's part of set, incr and tx, run under its
// lock: it checks the guards, then applies change. If a guard fails or
// change returns an error, nothing is written; the Store of a status
// document stamps updated_at if anything changed, and no Store writes
// anything if nothing did.
func applyChange(d doc, guards []guard, change func(doc) error) error {
	if err := checkGuards(d, guards); err != nil {
		return err
	}
	return change(d)
}

// checkTransition applies the status package's transition rule when as
// changes the status of a status document: a final state (completed,
// failed, merged, rejected) is left only by a caller whose --if names it.
func checkTransition(d doc, as []assignment, guards []guard) error {
	var to status.State
	for _, a := range as {
		if a.name == "status" {
			json.Unmarshal(a.value, &to) // parseAssignment admits only states
		}
	}
	if to == "" {
		return nil
	}
	var cur status.State
	if d.Decode("status", &cur) != nil {
		return nil // StatusDocument admits only strings
	}
	if cur == to {
		return nil // not a transition: re-stating the state is allowed
	}
	from, guarded := guardedStates(guards)
	st := status.Status{State: cur}
	if err := st.Transition(to, from...); err != nil {
		if !guarded {
			return fmt.Errorf("%w; to override, guard it: --if status=%s", err, cur)
		}
		return err
	}
	return nil
}
