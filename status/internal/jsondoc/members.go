package jsondoc

import (
	"encoding/json"
	"errors"
)

// members calls fn with the name and the exact value bytes of each member of
// the JSON object data, in order, and stops at the first error fn returns
// (as an *atError with its offset in data, see placed). It exists because
// finding the members a struct does not declare with a second full
// [json.Unmarshal] (into a map) doubled the cost of decoding; data has already
// been validated by json.Unmarshal, so a plain scan suffices. It still
// checks its bounds and reports malformed input instead of panicking.
func members(data []byte, fn func(name string, value []byte) error) error {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return errNotObject
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return nil
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return errNotObject
		}
		at := i
		end, err := skipString(data, i)
		if err != nil {
			return err
		}
		name, err := unquote(data[i:end])
		if err != nil {
			return placed(err, at, at)
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return errNotObject
		}
		start := skipSpace(data, i+1)
		end, err = skipValue(data, start)
		if err != nil {
			return err
		}
		if err := fn(name, data[start:end:end]); err != nil {
			return placed(err, at, start)
		}
		var done bool
		if i, done, err = next(data, end, '}'); err != nil || done {
			return err
		}
	}
}

var errNotObject = errors.New("malformed JSON object")

// elements calls fn with the exact bytes of each element of the JSON array
// data, in order, and stops at the first error fn returns (as an *atError
// with its offset in data, see placed). Like members, it expects JSON that
// encoding/json has validated, and reports malformed input.
func elements(data []byte, fn func(value []byte) error) error {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return errNotObject
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return nil
	}
	for {
		end, err := skipValue(data, i)
		if err != nil {
			return err
		}
		if err := fn(data[i:end:end]); err != nil {
			return placed(err, i, i)
		}
		var done bool
		if i, done, err = next(data, end, ']'); err != nil || done {
			return err
		}
	}
}

// next reads the separator after an item that ends at i: it returns the
// start of the next item, or done when the container ends with close.
func next(data []byte, i int, close byte) (start int, done bool, err error) {
	i = skipSpace(data, i)
	switch {
	case i >= len(data):
	case data[i] == ',':
		return skipSpace(data, i+1), false, nil
	case data[i] == close:
		return 0, true, nil
	}
	return 0, false, errNotObject
}

// An atError places an error at a byte offset of a JSON text.
type atError struct {
	Offset int64
	Err    error
}

// placed gives err, returned by the callback for the member whose name
// starts at offset key and value at offset value, its offset in the whole
// text: an *atError from inside the value is relative to the value.
func placed(err error, key, value int) error {
	if in, ok := err.(*atError); ok {
		in.Offset += int64(value)
		return in
	}
	return &atError{Offset: int64(key), Err: err}
}

func (e *atError) Error() string { return e.Err.Error() }
func (e *atError) Unwrap() error { return e.Err }

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index just past the string starting at data[i].
func skipString(data []byte, i int) (int, error) {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, errNotObject
}

// skipValue returns the index just past the value starting at data[i].
func skipValue(data []byte, i int) (int, error) {
	if i >= len(data) {
		return 0, errNotObject
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end, err := skipString(data, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errNotObject
	}
	j := i
	for j < len(data) {
		switch data[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j, nil
		}
		j++
	}
	return j, nil
}

// unquote decodes a JSON string token; the common case has no escapes. A
// name that decoding would change (invalid UTF-8, a lone surrogate) is an
// error: it is written back decoded, even for a field the type does not declare.
func unquote(tok []byte) (string, error) {
	plain := true
	for _, c := range tok[1 : len(tok)-1] {
		if c == '\\' || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		return string(tok[1 : len(tok)-1]), nil
	}
	if err := strictStrings(tok); err != nil {
		return "", err
	}
	var s string
	err := json.Unmarshal(tok, &s)
	return s, err
}
