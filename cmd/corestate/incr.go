package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
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
	k := wf.kind.of(path)
	if err := checkNumberField(k, name); err != nil {
		return fmt.Errorf("incr %s: %w", path, err)
	}
	guards, err := wf.ifs.parse(k)
	if err != nil {
		return fmt.Errorf("incr %s: %w", path, err)
	}
	ctx, cancel := withTimeout(ctx, wf.timeout)
	defer cancel()
	d, err := incr(ctx, wf.store(path), name, n, guards)
	if err != nil {
		return lockError("incr", path, wf.timeout, err)
	}
	_, err = stdout.Write(layout(d))
	return err
}

// incr adds n to the integer field name of the document in one Mutate, if
// the guards hold, and returns the document as committed.
func incr(ctx context.Context, st store, name string, n int64, guards []guard) (doc, error) {
	return st.mutate(ctx, func(d doc) error {
		return applyChange(d, guards, func(d doc) error { return addInt(d, name, n) })
	})
}

// addInt adds n to the integer field name of d; an absent (or null) field
// counts as 0. A sum that does not fit int64, or the Go type of a
// status.Status field, is refused.
func addInt(d doc, name string, n int64) error {
	var cur int64
	if raw, present := d.Get(name); present && string(compactJSON(raw)) != "null" {
		var err error
		if cur, err = strconv.ParseInt(string(compactJSON(raw)), 10, 64); err != nil {
			return fmt.Errorf("%w %s: current value %s is not an integer", errBadField, name, compactJSON(raw))
		}
	}
	if (n > 0 && cur > math.MaxInt64-n) || (n < 0 && cur < math.MinInt64-n) {
		return fmt.Errorf("%w %s: %d%+d overflows", errBadField, name, cur, n)
	}
	if err := d.Set(name, strconv.AppendInt(nil, cur+n, 10)); err != nil {
		return fmt.Errorf("%w %s: %d%+d overflows: %v", errBadField, name, cur, n, err)
	}
	return nil
}
