package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/agentstate/core/status"
)

// A txDoc is one FILE of tx with its kind, guards and changes.
type txDoc struct {
	path   string
	kind   kind
	guards []guard
	sets   []assignment
	incrs  []txIncr
}

// A txIncr is one FIELD+=N or FIELD-=N of tx.
type txIncr struct {
	name string
	n    int64
}

func cmdTx(ctx context.Context, args []string, stdout io.Writer) error {
	var timeout time.Duration
	var maxSize int64
	var perm permFlag
	var k kind
	fl := newFlags("tx")
	fl.DurationVar(&timeout, "timeout", 30*time.Second, "wait at most this long for the locks (0: no limit)")
	maxSizeFlag(fl, &maxSize)
	permFlagVar(fl, &perm)
	kindFlag(fl, &k)
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(stdout, "tx")
			return err
		}
		return fmt.Errorf("%w: tx: %v", errUsage, err)
	}
	if timeout < 0 {
		return fmt.Errorf("%w: tx: --timeout must not be negative (0 waits without limit)", errUsage)
	}
	docs, err := parseTx(k, fl.Args())
	if err != nil {
		return err
	}
	ctx, cancel := withTimeout(ctx, timeout)
	defer cancel()
	stores, err := tx(ctx, docs, storeOptions(maxSize, perm))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("tx: locks not acquired within --timeout %v: %w", timeout, err)
		}
		if errors.Is(err, os.ErrInvalid) {
			return fmt.Errorf("%w: tx: %w", errUsage, err)
		}
		return fmt.Errorf("tx: %w", err)
	}
	for _, d := range stores {
		if _, err := stdout.Write(layout(d)); err != nil {
			return err
		}
	}
	return nil
}

// parseTx splits tx's arguments at "--" into documents: FILE, then any
// number of --kind KIND, --if GUARD (or --if=GUARD), FIELD=VALUE and
// FIELD+=N or FIELD-=N. k is the --kind given before the first FILE.
func parseTx(k kind, args []string) ([]txDoc, error) {
	var docs []txDoc
	for len(args) > 0 {
		group := args
		if i := indexOf(args, "--"); i >= 0 {
			group, args = args[:i], args[i+1:]
		} else {
			args = nil
		}
		if len(group) == 0 {
			return nil, fmt.Errorf("%w: tx: a document with no FILE (two -- in a row?)", errUsage)
		}
		d, err := parseTxDoc(k, group)
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%w: tx wants FILE [OP...] [-- FILE [OP...]]...", errUsage)
	}
	return docs, nil
}

func indexOf(args []string, s string) int {
	for i, a := range args {
		if a == s {
			return i
		}
	}
	return -1
}

func parseTxDoc(k kind, group []string) (txDoc, error) {
	d := txDoc{path: group[0]}
	if strings.HasPrefix(d.path, "-") {
		return d, fmt.Errorf("%w: tx: %q where a FILE was expected", errUsage, d.path)
	}
	// The kind first: it decides how the other OPs parse.
	var ops []string
	for i := 1; i < len(group); i++ {
		v, last, ok, err := option(d.path, group, i, "kind", "status or json")
		switch {
		case err != nil:
			return d, err
		case ok:
			if err := k.Set(v); err != nil {
				return d, fmt.Errorf("%w: tx %s: --kind: %v", errUsage, d.path, err)
			}
		default:
			ops = append(ops, group[i:last+1]...)
		}
		i = last
	}
	d.kind = k.of(d.path)
	seen := map[string]bool{}
	for i := 0; i < len(ops); i++ {
		arg := ops[i]
		g, last, ok, err := option(d.path, ops, i, "if", "a guard")
		switch {
		case err != nil:
		case ok:
			err = d.addGuard(g)
			i = last
		case strings.HasPrefix(arg, "-"):
			err = fmt.Errorf("%w: tx %s: unknown flag %s (flags of tx come before the first FILE)", errUsage, d.path, arg)
		default:
			var name string
			name, err = d.addChange(arg)
			if err == nil && seen[name] {
				err = fmt.Errorf("%w: tx %s: %s changed twice", errUsage, d.path, name)
			}
			seen[name] = true
		}
		if err != nil {
			return d, err
		}
	}
	return d, nil
}

// option reports whether args[i] is the OP --name (or -name), with its
// value in args[i+1] or after "=", and returns the value and the index of
// the OP's last argument (i when it is not the OP). want says what the
// value is, for the error of a --name without one.
func option(path string, args []string, i int, name, want string) (value string, last int, ok bool, err error) {
	arg := args[i]
	switch {
	case arg == "--"+name || arg == "-"+name:
		if i+1 == len(args) {
			return "", i, true, fmt.Errorf("%w: tx %s: --%s wants %s", errUsage, path, name, want)
		}
		return args[i+1], i + 1, true, nil
	case strings.HasPrefix(arg, "--"+name+"="), strings.HasPrefix(arg, "-"+name+"="):
		_, value, _ = strings.Cut(arg, "=")
		return value, i, true, nil
	}
	return "", i, false, nil
}

func (d *txDoc) addGuard(text string) error {
	g, err := parseGuard(d.kind, text)
	if err != nil {
		return fmt.Errorf("tx %s: %w", d.path, err)
	}
	d.guards = append(d.guards, g)
	return nil
}

// addChange adds FIELD=VALUE, FIELD+=N or FIELD-=N and returns FIELD.
func (d *txDoc) addChange(arg string) (string, error) {
	eq := strings.IndexByte(arg, '=')
	if eq > 0 && (arg[eq-1] == '+' || arg[eq-1] == '-') {
		name := arg[:eq-1]
		n, err := strconv.ParseInt(arg[eq+1:], 10, 64)
		if err != nil {
			return name, fmt.Errorf("%w: tx %s: %s wants an integer N", errUsage, d.path, arg)
		}
		if arg[eq-1] == '-' {
			if n == math.MinInt64 {
				return name, fmt.Errorf("%w %s: -%d overflows", errBadField, name, n)
			}
			n = -n
		}
		if err := checkNumberField(d.kind, name); err != nil {
			return name, fmt.Errorf("tx %s: %w", d.path, err)
		}
		d.incrs = append(d.incrs, txIncr{name, n})
		return name, nil
	}
	a, err := parseAssignment(d.kind, arg)
	if err != nil {
		return a.name, fmt.Errorf("tx %s: %w", d.path, err)
	}
	d.sets = append(d.sets, a)
	return a.name, nil
}

// tx applies every document's guards and changes in one status.MutateAll:
// all are written, or none. It returns the documents as committed.
func tx(ctx context.Context, docs []txDoc, opts []status.Option) ([]doc, error) {
	stores := make([]store, len(docs))
	list := make([]status.AnyStore, len(docs))
	for i, d := range docs {
		stores[i] = newStore(d.kind, d.path, opts...)
		list[i] = stores[i].AnyStore
	}
	t, err := status.MutateAll(ctx, list, func(t *status.Tx) error {
		for i, d := range docs {
			dc, err := stores[i].in(t)
			if err == nil {
				err = d.apply(dc)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", d.path, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]doc, len(docs))
	for i, s := range stores {
		if out[i], err = s.in(t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// apply checks d's guards on dc, the document d names as a transaction
// holds it, and makes d's changes.
func (d txDoc) apply(dc doc) error {
	return applyChange(dc, d.guards, func(dc doc) error {
		if err := setFields(d.kind, dc, d.sets, d.guards); err != nil {
			return err
		}
		for _, in := range d.incrs {
			if err := addInt(dc, in.name, in.n); err != nil {
				return err
			}
		}
		return nil
	})
}
