package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
)

// Load replaces the whole content of c with the JSON object read from r, in
// one published change (subscribers see one [Change]; readers see the old
// content or the new, never a mix). Feature flags are kept.
//
// Numbers keep their kind: an integer literal that fits an int64 (8080,
// -1) becomes an int64; any other number (1.5, 1e3, 2e19) becomes a
// float64. Objects become sections (map[string]any), arrays []any.
//
// On any error — unreadable input, not a JSON object, trailing data, an
// object key that is empty or contains '.' inside a section, nesting
// deeper than 256 levels, a number beyond the float64 range, a string or
// key with bytes that are not UTF-8, a \u escape of a lone surrogate or a
// NUL — Load returns an *Error naming the key and c is unchanged.
func (c *Config) Load(r io.Reader) error {
	return c.load(r, "", decodeJSON)
}

// decodeJSON reads one JSON object and nothing after it, refusing the
// strings that decoding would change (see checkJSONStrings).
func decodeJSON(r io.Reader) (map[string]any, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	v, err := decodeJSONValue(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	if verr := checkJSONStrings(data); verr != nil {
		return nil, verr
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("JSON %s, want an object", jsonKind(v))
	}
	return m, nil
}

// decodeJSONValue reads one JSON value, numbers as json.Number, and
// nothing after it.
func decodeJSONValue(r io.Reader) (any, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	}
	return "number"
}

// load replaces the content of c with the document decode reads from r;
// name (a file path, or "") goes into errors.
func (c *Config) load(r io.Reader, name string, decode func(io.Reader) (map[string]any, error)) error {
	if r == nil {
		return &Error{Op: "load", Key: name, Err: errors.New("nil reader")}
	}
	m, err := decode(r)
	if verr, ok := err.(*valueError); ok {
		return verr.toError("load", name, "", ErrUnsupported)
	}
	if err != nil {
		return &Error{Op: "load", Key: name, Err: err}
	}
	if _, verr := normalize(m, 0); verr != nil {
		return verr.toError("load", name, "", ErrUnsupported)
	}
	c.mu.Lock()
	old := c.Snapshot()
	if reflect.DeepEqual(old.root, m) {
		c.mu.Unlock()
		return nil
	}
	c.publishLocked(old, newSnapshot(m, old.features, old.featList, old.version+1))
	c.unlockAndDeliver()
	return nil
}

// Save writes the content of c to w as indented JSON with sorted keys, so
// that the same content always gives the same bytes. A whole float64 is
// written with a fraction (3.0), so that Load gives back a float64. A
// time.Duration is written as integer nanoseconds and a time.Time in RFC
// 3339, which the Duration and Time getters read back. What JSON cannot
// represent is refused when it is stored (see [Config.Set]), so Save fails
// only if w does.
func (c *Config) Save(w io.Writer) error {
	return c.save(w, (*Snapshot).marshal)
}

// save writes the current snapshot to w in marshal's format.
func (c *Config) save(w io.Writer, marshal func(*Snapshot) ([]byte, error)) error {
	if w == nil {
		return &Error{Op: "save", Err: errors.New("nil writer")}
	}
	data, err := marshal(c.Snapshot())
	if err != nil {
		return &Error{Op: "save", Err: err}
	}
	if _, err := w.Write(data); err != nil {
		return &Error{Op: "save", Err: err}
	}
	return nil
}

func (s *Snapshot) marshal() ([]byte, error) {
	data, err := json.MarshalIndent(keepFloats(s.root), "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode JSON: %w", err)
	}
	return append(data, '\n'), nil
}

// keepFloats returns v with every whole float64 in its sections and lists
// written with a fraction (3.0, not 3), so that it loads back as a float64
// rather than an int64. Sections and lists are copied; the tree is not
// modified.
func keepFloats(v any) any {
	switch x := v.(type) {
	case float64:
		// encoding/json writes a whole float below 1e21 as digits only.
		if x == math.Trunc(x) && math.Abs(x) < 1e21 {
			return json.Number(strconv.FormatFloat(x, 'f', -1, 64) + ".0")
		}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = keepFloats(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = keepFloats(e)
		}
		return out
	}
	return v
}
