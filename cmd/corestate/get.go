package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/agentstate/core/status"
)

func cmdGet(ctx context.Context, args []string, stdout io.Writer) error {
	fl := newFlags("get")
	asJSON := fl.Bool("json", false, "print a string field JSON-encoded")
	var maxSize int64
	maxSizeFlag(fl, &maxSize)
	var k kind
	kindFlag(fl, &k)
	pos, err := parseFlags(fl, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) < 1 {
		return fmt.Errorf("%w: get wants FILE [FIELD]..., got no arguments", errUsage)
	}
	// Without the lock, as status.Load reads; a missing file is not found.
	d, err := newStore(k, pos[0], status.WithMaxSize(maxSize)).load(ctx)
	if err != nil {
		return err // it names the path
	}
	if len(pos) == 1 {
		_, err = stdout.Write(layout(d))
		return err
	}
	// A field of status.Status that a status document omits gives the
	// value a Go reader sees. Every field is found before one is printed.
	var out []byte
	for _, name := range pos[1:] {
		value, _ := d.Get(name)
		if value == nil {
			return fmt.Errorf("get %s: field %q: %w", pos[0], name, errNotFound)
		}
		out = append(append(out, formatValue(value, *asJSON)...), '\n')
	}
	_, err = stdout.Write(out)
	return err
}

// formatValue prints a JSON string raw (what a shell script wants in $(...))
// unless asJSON; anything else as compact JSON.
func formatValue(v json.RawMessage, asJSON bool) []byte {
	v = compactJSON(v)
	if !asJSON && len(v) > 0 && v[0] == '"' {
		var s string
		if json.Unmarshal(v, &s) == nil {
			return []byte(s)
		}
	}
	return v
}
