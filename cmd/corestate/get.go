package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/agentstate/core/status"
)

func cmdGet(args []string, stdout io.Writer) error {
	fl := newFlags("get")
	asJSON := fl.Bool("json", false, "print a string field JSON-encoded")
	var maxSize int64
	maxSizeFlag(fl, &maxSize)
	pos, err := parseFlags(fl, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return fmt.Errorf("%w: get wants FILE [FIELD], got %d arguments", errUsage, len(pos))
	}
	doc, err := load(pos[0], maxSize)
	if err != nil {
		return err
	}
	if len(pos) == 1 {
		_, err = stdout.Write(doc.layout())
		return err
	}
	value, err := lookup(doc, pos[0], pos[1])
	if err != nil {
		return err
	}
	_, err = stdout.Write(append(formatValue(value, *asJSON), '\n'))
	return err
}

// load reads the document at path without the lock, as status.Load does.
// Unlike a Store, it reports a missing file instead of an empty document.
func load(path string, maxSize int64) (document, error) {
	doc, err := status.NewStore[document](path, status.WithMaxSize(maxSize)).Load(context.Background())
	if err != nil {
		return nil, err // *status.CorruptError or a path error: both name the path
	}
	if doc == nil {
		return nil, fmt.Errorf("get %s: %w", path, os.ErrNotExist)
	}
	return doc, nil
}

// lookup returns name's value, the zero value for a status.Status field the
// document omits (what a Go reader sees), or a not-found error.
func lookup(doc document, path, name string) (json.RawMessage, error) {
	if v, ok := doc[name]; ok {
		return v, nil
	}
	if f, ok := fieldByName[name]; ok {
		return f.zeroValue(), nil
	}
	return nil, fmt.Errorf("get %s: field %q: %w", path, name, errNotFound)
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
