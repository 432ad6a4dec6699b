// Package jsontext finds the strings in a JSON text that decoders read
// differently: bytes that are not UTF-8, and \u escapes of lone UTF-16
// surrogates. encoding/json decodes both as U+FFFD (so decoding and
// encoding again changes them), Python refuses the first and keeps the
// second, jq replaces both. A program that must not change bytes it did not
// mean to change refuses them instead.
package jsontext

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// An Error reports the first such string content and its byte offset.
type Error struct {
	Offset int    // in the text checked
	What   string // "invalid UTF-8" or "lone surrogate \udxxx"
}

// Error describes the content; the caller places it (the offset is
// relative to what it checked).
func (e *Error) Error() string {
	return e.What + " in a string (Go reads it as U+FFFD, other languages differently)"
}

// CheckStrings returns an *Error for the first byte of data that is not
// valid UTF-8 or the first \u escape of a lone surrogate, or nil. data is
// JSON that a decoder has already accepted: every backslash is inside a
// string and starts an escape.
func CheckStrings(data []byte) error {
	if !utf8.Valid(data) {
		for i := 0; i < len(data); {
			r, n := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && n <= 1 {
				return &Error{Offset: i, What: "invalid UTF-8"}
			}
			i += n
		}
	}
	for i := 0; ; {
		j := bytes.IndexByte(data[i:], '\\')
		if j < 0 || i+j+1 >= len(data) {
			return nil
		}
		i += j
		if data[i+1] != 'u' {
			i += 2
			continue
		}
		r, ok := hex4(data, i+2)
		switch {
		case !ok || r < 0xd800 || r > 0xdfff:
			i += 2
		case r <= 0xdbff && i+12 <= len(data) && data[i+6] == '\\' && data[i+7] == 'u':
			if lo, ok := hex4(data, i+8); ok && lo >= 0xdc00 && lo <= 0xdfff {
				i += 12 // a surrogate pair: one character
				continue
			}
			fallthrough
		default:
			return &Error{Offset: i, What: fmt.Sprintf(`lone surrogate \u%04x`, r)}
		}
	}
}

func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
