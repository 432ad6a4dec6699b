package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/agentstate/core/status"
)

func cmdIncr(ctx context.Context, args []string, stdout io.Writer) error {
	wf, pos, err := parseWriteFlags("incr", args, stdout)
	if err != nil {
		return err
	}
	if len(pos) < 2 || len(pos) > 3 {
		return fmt.Errorf("%w: incr wants FILE FIELD [N], got %d arguments", errUsage, len(pos))
	}
	path, name := pos[0], pos[1]
	n := int64(1)
	if len(pos) == 3 {
		if n, err = strconv.ParseInt(pos[2], 10, 64); err != nil {
			return fmt.Errorf("%w: incr: N must be an integer, got %q (a negative N goes after --)", errUsage, pos[2])
		}
	}
	if err := checkIntField(name); err != nil {
		return fmt.Errorf("incr %s: %w", path, err)
	}
	guards, err := wf.ifs.parse()
	if err != nil {
		return fmt.Errorf("incr %s: %w", path, err)
	}
	ctx, cancel := withTimeout(ctx, wf.timeout)
	defer cancel()
	doc, err := incr(ctx, wf.store(path), name, n, guards, time.Now)
	if err != nil {
		return lockError("incr", path, wf.timeout, err)
	}
	_, err = stdout.Write(doc.layout())
	return err
}

// checkIntField refuses, before the lock is taken, a field that cannot hold
// an integer: a status.Status field of another type, or a name that would
// collide with one.
func checkIntField(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty field name", errBadField)
	}
	if !utf8.ValidString(name) { // see parseAssignment
		return fmt.Errorf("%w: %q: not valid UTF-8", errBadField, name)
	}
	f, known := fieldByName[name]
	if !known {
		return checkUnknownName(name)
	}
	if k := f.typ.Kind(); k < reflect.Int || k > reflect.Int64 {
		return fmt.Errorf("%w %s: not an integer field (it holds %s)", errBadField, name, typeName(f.typ))
	}
	return nil
}

// incr adds n to the integer field name of the document at path in one
// Mutate, if the guards hold, and returns the document as committed. An
// absent (or null) field counts as 0.
func incr(ctx context.Context, store *status.Store[document], name string, n int64, guards []guard, now func() time.Time) (document, error) {
	return commit(ctx, store, guards, now, func(d document) error {
		return addInt(d, name, n)
	}, false)
}

// addInt adds n to the integer field name of d; an absent (or null) field
// counts as 0.
func addInt(d document, name string, n int64) error {
	var cur int64
	if raw, ok := d[name]; ok && string(compactJSON(raw)) != "null" {
		var err error
		if cur, err = strconv.ParseInt(string(compactJSON(raw)), 10, 64); err != nil {
			return fmt.Errorf("%w %s: current value %s is not an integer", errBadField, name, compactJSON(raw))
		}
	}
	if (n > 0 && cur > math.MaxInt64-n) || (n < 0 && cur < math.MinInt64-n) || overflows(name, cur+n) {
		return fmt.Errorf("%w %s: %d%+d overflows", errBadField, name, cur, n)
	}
	d[name] = strconv.AppendInt(nil, cur+n, 10)
	return nil
}

// overflows reports whether v does not fit the Go type of a status.Status
// field (int is 32 bits on some platforms).
func overflows(name string, v int64) bool {
	f, known := fieldByName[name]
	return known && reflect.New(f.typ).Elem().OverflowInt(v)
}
