package jsontext

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestCheckStrings(t *testing.T) {
	for _, tc := range []struct {
		in  string
		off int // -1: accepted
	}{
		{`{"a":"plain","b":"é","c":"\u00e9"}`, -1},
		{`"\\u d800"`, -1},        // an escaped backslash, then text
		{`"\\\ud83d\ude00"`, -1},  // backslash, then a pair
		{`"\ud83d\ude00"`, -1},    // a surrogate pair is one character
		{`"\uD83D\uDE00"`, -1},    // upper-case hex
		{`"x\ud800"`, 2},          // high surrogate at the end
		{`"x\ud800y"`, 2},         // high surrogate, then text
		{`"\ud800\u0041"`, 1},     // high surrogate, then not a low one
		{`"\udc00"`, 1},           // low surrogate alone
		{`["ok","\udfff"]`, 7},    // in an array
		{"{\"a\":\"b\xffc\"}", 7}, // invalid UTF-8 in a value
		{"{\"\xc3\":1}", 2},       // truncated sequence in a key
		{"\"\xed\xa0\x80\"", 1},   // a surrogate encoded as UTF-8
	} {
		err := CheckStrings([]byte(tc.in))
		var e *Error
		switch {
		case tc.off < 0 && err != nil:
			t.Errorf("%q: %v, want accepted", tc.in, err)
		case tc.off >= 0 && (!errors.As(err, &e) || e.Offset != tc.off):
			t.Errorf("%q: %v, want an *Error at byte %d", tc.in, err, tc.off)
		}
	}
}

// FuzzCheckStrings: whatever encoding/json accepts, CheckStrings accepts
// exactly when decoding into strings and encoding again keeps the text's
// meaning for every reader: the decoded strings are valid UTF-8 and equal
// to a strict decode.
func FuzzCheckStrings(f *testing.F) {
	for _, s := range []string{`"a"`, `"\ud800"`, `"\ud83d\ude00"`, "\"\xff\"", `{"k":["\\u"]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		err := CheckStrings(data)
		if err != nil && !errors.As(err, new(*Error)) {
			t.Fatalf("error of an unexpected type: %v", err)
		}
		if err == nil && changesOnDecode(data) {
			t.Fatalf("CheckStrings accepted %q, which encoding/json changes", data)
		}
	})
}

// changesOnDecode reports whether decoding data yields a U+FFFD that the
// text does not spell out (as the character itself or as \ufffd).
func changesOnDecode(data []byte) bool {
	var v any
	if json.Unmarshal(data, &v) != nil {
		return false
	}
	return countFFFD(v) > spelledFFFD(data)
}

func countFFFD(v any) int {
	n := 0
	switch v := v.(type) {
	case string:
		for _, r := range v {
			if r == '\ufffd' {
				n++
			}
		}
	case []any:
		for _, e := range v {
			n += countFFFD(e)
		}
	case map[string]any:
		for k, e := range v {
			n += countFFFD(k) + countFFFD(e)
		}
	}
	return n
}

func spelledFFFD(data []byte) int {
	n := 0
	s := string(data)
	for i := 0; i < len(s); i++ {
		switch {
		case len(s)-i >= 3 && s[i:i+3] == "\ufffd":
			n++
			i += 2
		case len(s)-i >= 6 && s[i] == '\\' && strings.EqualFold(s[i+1:i+6], "ufffd"):
			n++
			i += 5
		case s[i] == '\\':
			i++
		}
	}
	return n
}
