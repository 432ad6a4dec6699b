package main

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// errorLine is the one line of stderr that reports err: each name in args
// (the command's arguments, which name its files) that quoteName would
// quote is quoted wherever the message shows it, as sweep and fsck print
// names, so that "a\nb.json" is not shown as two lines or as "a b.json".
// A name shows with what follows it up to the next ':' or blank (the
// lock file "a\nb.json.lock") inside the quotes, and its absolute form
// too. Any control character left (in a name the arguments do not give)
// is escaped as in a Go string.
func errorLine(err error, args []string) string {
	msg := err.Error()
	var names []string
	for _, a := range args {
		if quoteName(a) == a {
			continue
		}
		names = append(names, a)
		if abs, err := filepath.Abs(a); err == nil {
			names = append(names, abs)
		}
	}
	if len(names) > 0 {
		// The longest first: an absolute path before the relative one it ends with.
		slices.SortFunc(names, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
		msg = quoteIn(msg, names)
	}
	return escapeControls(msg)
}

// quoteIn quotes each occurrence of a name in msg, with the rest of its
// word (see errorLine).
func quoteIn(msg string, names []string) string {
	var b strings.Builder
	for i := 0; i < len(msg); {
		j := slices.IndexFunc(names, func(n string) bool { return strings.HasPrefix(msg[i:], n) })
		if j < 0 {
			b.WriteByte(msg[i])
			i++
			continue
		}
		end := i + len(names[j])
		for end < len(msg) && !strings.ContainsRune(": \t", rune(msg[end])) {
			end++
		}
		b.WriteString(strconv.Quote(msg[i:end]))
		i = end
	}
	return b.String()
}

// escapeControls writes each control character of s, and each byte that
// is not UTF-8, as a Go escape (\n, \x1b, \xff), so that s stays one line
// and says what it holds.
func escapeControls(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, unicode.IsControl) < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unicode.IsControl(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
