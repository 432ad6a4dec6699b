package main

import (
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status/txfile"
)

func cmdSweep(args []string, stdout io.Writer) error {
	fl := newFlags("sweep")
	olderThan := fl.Duration("older-than", time.Hour, "remove temp files older than this")
	pos, err := parseFlags(fl, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: sweep wants ROOT, got %d arguments", errUsage, len(pos))
	}
	if *olderThan < 0 {
		return fmt.Errorf("%w: sweep: --older-than must not be negative", errUsage)
	}
	t, err := openTree("sweep", pos[0])
	if err != nil {
		return err
	}
	// Every directory fsck walks: ROOT and those under it, not the hidden
	// ones. A directory that cannot be read or swept is reported at the
	// end; the others are swept all the same.
	var errs []error
	sweep := func(dir string) error {
		removed, err := fs.SweepTemp(dir, *olderThan)
		journals, jerr := txfile.Sweep(dir)
		errs = append(errs, err, jerr)
		// Print what was removed even when some removals failed: it happened.
		for _, name := range append(removed, journals...) {
			if _, werr := fmt.Fprintln(stdout, quoteName(t.show(name))); werr != nil {
				return werr
			}
		}
		return nil
	}
	if err := sweep(t.dir); err != nil {
		return err
	}
	werr := t.walk(func(path string, d iofs.DirEntry, err error) error {
		switch {
		case err != nil:
			errs = append(errs, err)
			return nil
		case !d.IsDir():
			return nil
		case hidden(d):
			return filepath.SkipDir
		}
		return sweep(path)
	})
	if werr != nil {
		return werr // stdout failed
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s: %w", named("sweep", t.root, err), err)
	}
	return nil
}

// quoteName keeps one removed path on one line: a name with a control
// character (a newline...), a byte that is not UTF-8, or a leading double
// quote is printed Go-quoted ("a\nb"), so that a line starting with a
// double quote is always a quoted name. Other names print as they are.
func quoteName(name string) string {
	if !utf8.ValidString(name) || strings.HasPrefix(name, `"`) || strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return strconv.Quote(name)
	}
	return name
}
