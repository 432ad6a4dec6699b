package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentstate/core/internal/jsontext"
)

// checkKey is checkString for a key of a section, which it shows quoted:
// the path of the error ends at the section.
func checkKey(k string) *valueError {
	if err := checkString(k); err != nil {
		err.msg = "key " + strconv.Quote(k) + ": " + err.msg
		return err
	}
	return nil
}

// checkString refuses a string, loaded from a file or the environment,
// that another program would not read back as it is: bytes that are not
// UTF-8 (encoding/json turns them into U+FFFD, so Save would write other
// text, and Python refuses the whole file) and NUL, which environment
// variables, file names and C strings cannot hold. It names what it found;
// the caller places it.
func checkString(s string) *valueError {
	if !utf8.ValidString(s) {
		return &valueError{msg: "string holds invalid UTF-8"}
	}
	if strings.IndexByte(s, 0) >= 0 {
		return &valueError{msg: "string holds a NUL character"}
	}
	return nil
}

// checkJSONStrings refuses, in JSON text that encoding/json has accepted,
// the strings it would have changed on the way: invalid UTF-8 and \u
// escapes of lone surrogates, which it reads as U+FFFD. The error names
// the place in the document (a key, or the value at a key).
func checkJSONStrings(data []byte) *valueError {
	err := jsontext.CheckStrings(data)
	var je *jsontext.Error
	if !errors.As(err, &je) {
		return nil
	}
	segs, key := jsonPathAt(data, int64(je.Offset))
	what := "string"
	if key {
		what = "a key"
	}
	return &valueError{msg: what + " holds " + je.What + " (encoding/json would read it as U+FFFD)", segs: segs}
}

// jsonPathAt returns the path segments, innermost first (as a
// *valueError holds them), of the value of the JSON text data that spans
// offset, or of the object whose key spans it (then key is true). data is
// valid JSON.
func jsonPathAt(data []byte, offset int64) (segs []string, key bool) {
	type frame struct {
		object bool
		key    string // object: the current member's key
		index  int    // array: the current element's index
		keyed  bool   // object: a key was read, its value is next
	}
	var stack []frame
	path := func() []string {
		var segs []string
		for i := len(stack) - 1; i >= 0; i-- {
			f := stack[i]
			switch {
			case f.object && f.keyed:
				segs = append(segs, "."+f.key)
			case !f.object:
				segs = append(segs, "["+strconv.Itoa(f.index)+"]")
			}
		}
		return segs
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		top := len(stack) - 1
		// A string token at an object's key position is a key.
		isKey := top >= 0 && stack[top].object && !stack[top].keyed && tok != json.Delim('}')
		if dec.InputOffset() > offset {
			return path(), isKey
		}
		if isKey {
			stack[top].key, stack[top].keyed = tok.(string), true
			continue
		}
		// A value (or the end of a container) completes the parent's
		// member or element.
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{object: true})
			continue
		case json.Delim('['):
			stack = append(stack, frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if top = len(stack) - 1; top >= 0 {
			if stack[top].object {
				stack[top].keyed = false
			} else {
				stack[top].index++
			}
		}
	}
}
