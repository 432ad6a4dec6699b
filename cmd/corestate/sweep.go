package main

import (
	"errors"
	"fmt"
	"io"
	"os"
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
		return fmt.Errorf("%w: sweep wants DIR, got %d arguments", errUsage, len(pos))
	}
	if *olderThan < 0 {
		return fmt.Errorf("%w: sweep: --older-than must not be negative", errUsage)
	}
	dir := pos[0]
	if fi, err := os.Stat(dir); err != nil {
		return fmt.Errorf("sweep: %w", err)
	} else if !fi.IsDir() {
		return fmt.Errorf("%w: sweep: %s is not a directory", errUsage, dir)
	}
	removed, err := fs.SweepTemp(dir, *olderThan)
	journals, jerr := txfile.Sweep(dir)
	removed, err = append(removed, journals...), errors.Join(err, jerr)
	// Print what was removed even when some removals failed: it happened.
	for _, name := range removed {
		if _, werr := fmt.Fprintln(stdout, quoteName(name)); werr != nil {
			return errors.Join(err, werr)
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", named("sweep", dir, err), err)
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
