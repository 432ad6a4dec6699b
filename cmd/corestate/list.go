package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/txfile"
)

func cmdList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fl := newFlags("list")
	var df docFlags
	df.register(fl)
	var where guardFlags
	fl.Var(&where, "where", "list only the documents where FIELD is one of the VALUEs (repeatable)")
	fieldList := fl.String("fields", "", "print these top-level fields, comma-separated")
	asJSON := fl.Bool("json", false, "print string fields JSON-encoded (quoted) too")
	pos, err := parseFlags(fl, args, stdout)
	if err != nil {
		return err
	}
	var fields []string
	if *fieldList != "" {
		fields = strings.Split(*fieldList, ",")
		if slices.Contains(fields, "") {
			return fmt.Errorf("%w: list: --fields %q names an empty field", errUsage, *fieldList)
		}
	}
	// The guards of each kind, parsed when a document of that kind comes;
	// once for JSON documents first, so that a malformed one is a usage
	// error even in a tree without documents.
	guards := map[kind][]guard{}
	guardsOf := func(k kind) ([]guard, error) {
		if gs, ok := guards[k]; ok {
			return gs, nil
		}
		gs, err := where.parseAs(k, "--where")
		guards[k] = gs
		return gs, err
	}
	if _, err := guardsOf(kindJSON); err != nil {
		return fmt.Errorf("list: %w", err)
	}
	t, err := df.openTree("list", pos)
	if err != nil {
		return err
	}
	maxSize, k := df.maxSize, df.kind
	var failed []error // a document that cannot be read is reported, and the walk goes on
	fail := func(err error) {
		failed = append(failed, err)
		fmt.Fprintln(stderr, "corestate: "+escapeControls(err.Error()))
	}
	werr := t.walk(func(path string, d iofs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		switch {
		case err != nil:
			fail(fmt.Errorf("list: %w", err))
			return nil
		case d.IsDir() && hidden(d):
			return filepath.SkipDir
		case d.IsDir() || !isDocumentName(d.Name(), df.name):
			return nil
		}
		dk := k.of(path)
		gs, err := guardsOf(dk)
		if err != nil {
			return err
		}
		doc, err := newStore(k, path, status.WithMaxSize(maxSize)).load(ctx)
		switch {
		case errors.Is(err, os.ErrNotExist): // removed since the walk saw it
			return nil
		case err != nil:
			fail(err)
			return nil
		}
		if err := checkGuards(doc, gs); errors.Is(err, status.ErrConflict) {
			return nil
		} else if err != nil {
			fail(fmt.Errorf("%s: %w", t.show(path), err))
			return nil
		}
		line := quoteName(t.show(path))
		for _, f := range fields {
			line += "\t" + listValue(doc, f, *asJSON)
		}
		_, err = fmt.Fprintln(stdout, line)
		return err
	})
	if werr != nil {
		return werr // stdout failed, ctx ended, or a --where does not fit a status document
	}
	if len(failed) > 0 {
		return fmt.Errorf("list %s: %d documents or directories could not be read or checked (each reported above)%w", t.root, len(failed), reported{failed[0]})
	}
	return nil
}

// reported wraps an error already printed: it adds nothing to the message,
// and gives the exit code its own.
type reported struct{ error }

func (reported) Error() string   { return "" }
func (r reported) Unwrap() error { return r.error }

// isDocumentName reports whether a file named base is a document that
// list shows: named like pattern, and none of the files that sit beside
// documents (lock, temp and transaction files, quarantined copies).
func isDocumentName(base, pattern string) bool {
	if fs.IsTemp(base) || strings.HasSuffix(base, status.LockSuffix) || txfile.Is(base) || strings.Contains(base, status.QuarantineSuffix) {
		return false
	}
	match, _ := filepath.Match(pattern, base)
	return match
}

// listValue is a field of d as list prints it: as get prints it (a string
// raw, anything else as compact JSON; null for a missing field), except
// that a string that would break the line (a tab, a control character,
// bytes that are not UTF-8) or that starts with a double quote prints as
// JSON, quoted, as --json prints every string.
func listValue(d doc, name string, asJSON bool) string {
	v, _ := d.Get(name)
	if v == nil {
		return "null"
	}
	out := string(formatValue(v, asJSON))
	if !asJSON && len(v) > 0 && compactJSON(v)[0] == '"' && !plain(out) {
		return string(compactJSON(v))
	}
	return out
}

// plain reports whether s prints raw on one line without ambiguity.
func plain(s string) bool {
	return utf8.ValidString(s) && !strings.HasPrefix(s, `"`) && strings.IndexFunc(s, unicode.IsControl) < 0
}
