package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"time"

	"github.com/agentstate/core/status"
)

// errUnchanged makes Mutate write nothing when set would not change the
// document (the Store would otherwise rewrite a file whose layout differs).
var errUnchanged = errors.New("unchanged")

func cmdSet(ctx context.Context, args []string, stdout io.Writer) error {
	fl := newFlags("set")
	timeout := fl.Duration("timeout", 30*time.Second, "wait at most this long for the lock (0: no limit)")
	pos, err := parseFlags(fl, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		return fmt.Errorf("%w: set wants FILE FIELD=VALUE..., got %d arguments", errUsage, len(pos))
	}
	path := pos[0]
	var as []assignment
	for _, arg := range pos[1:] {
		a, err := parseAssignment(arg)
		if err != nil {
			return fmt.Errorf("set %s: %w", path, err)
		}
		as = append(as, a)
	}
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	doc, err := set(ctx, path, as, time.Now)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("set %s: lock not acquired within --timeout %v: %w", path, *timeout, err)
		}
		return fmt.Errorf("set %s: %w", path, err)
	}
	_, err = stdout.Write(doc.indent())
	return err
}

// set applies as to the document at path in one Mutate and returns the
// document as committed (or as found, when as changes nothing).
func set(ctx context.Context, path string, as []assignment, now func() time.Time) (document, error) {
	var found document
	doc, err := status.NewStore[document](path).Mutate(ctx, func(d *document) error {
		found = maps.Clone(*d)
		if *d == nil {
			*d = document{} // no file yet
		}
		for _, a := range as {
			if a.value == nil {
				delete(*d, a.name)
			} else {
				(*d)[a.name] = a.value
			}
		}
		if d.equal(found) {
			return errUnchanged
		}
		if !assigns(as, "updated_at") {
			// What status.Mutate does on every change.
			(*d)["updated_at"], _ = json.Marshal(now().UTC()) // a time always encodes
		}
		return nil
	})
	if errors.Is(err, errUnchanged) {
		if found == nil {
			found = document{}
		}
		return found, nil
	}
	return doc, err
}

func assigns(as []assignment, name string) bool {
	for _, a := range as {
		if a.name == name {
			return true
		}
	}
	return false
}
