package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/agentstate/core/fs"
)

// Load replaces the whole content of c with the JSON object read from r, in
// one published change (subscribers see one Change; readers see the old
// content or the new, never a mix). Feature flags are kept.
//
// Numbers keep their kind: an integer literal that fits an int64 (8080,
// -1) becomes an int64; any other number (1.5, 1e3, 2e19) becomes a
// float64. Objects become sections (map[string]any), arrays []any.
//
// On any error — unreadable input, not a JSON object, trailing data, an
// object key that is empty or contains '.' inside a section — Load returns
// an *Error and c is unchanged.
func (c *Config) Load(r io.Reader) error {
	return c.load(r, "")
}

// LoadFile is Load from the file at path; errors name the path.
func (c *Config) LoadFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return &Error{Op: "load", Key: path, Err: err}
	}
	return c.load(bytes.NewReader(data), path)
}

func (c *Config) load(r io.Reader, name string) error {
	if r == nil {
		return &Error{Op: "load", Key: name, Err: errors.New("nil reader")}
	}
	dec := json.NewDecoder(r)
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return &Error{Op: "load", Key: name, Err: err}
	}
	if m == nil {
		return &Error{Op: "load", Key: name, Err: errors.New("JSON null, want an object")}
	}
	if _, err := dec.Token(); err != io.EOF {
		return &Error{Op: "load", Key: name, Err: errors.New("trailing data after the JSON object")}
	}
	if _, err := numbers(m); err != nil {
		return &Error{Op: "load", Key: name, Path: strings.TrimPrefix(err.path(""), "."), Err: &detail{ErrUnsupported, err.msg}}
	}
	if err := checkTree(m); err != nil {
		return &Error{Op: "load", Key: name, Path: err.path(""), Err: &detail{ErrUnsupported, err.msg}}
	}
	c.mu.Lock()
	old := c.Snapshot()
	if equal(old.root, m) {
		c.mu.Unlock()
		return nil
	}
	c.publishLocked(old, newSnapshot(m, old.features, old.featList, old.version+1))
	c.unlockAndDeliver()
	return nil
}

// checkTree validates freshly decoded JSON (which cannot contain cycles or
// unsupported types, only bad section keys) without copying it.
func checkTree(m map[string]any) *valueError {
	for k, v := range m {
		if msg := checkSegment(k); msg != "" {
			return &valueError{msg: msg, segs: []string{k}}
		}
		if sub, ok := v.(map[string]any); ok {
			if err := checkTree(sub); err != nil {
				return err.push(k + ".")
			}
		}
	}
	return nil
}

// numbers replaces, in place, every json.Number in v by an int64 when the
// literal is an integer that fits, else by a float64. A number beyond the
// float64 range (1e400) is an error: it would silently become ±Inf, which
// Save then cannot write.
func numbers(v any) (any, *valueError) {
	switch x := v.(type) {
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return n, nil
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return nil, &valueError{msg: "number " + string(x) + " is out of the float64 range"}
		}
		return f, nil
	case map[string]any:
		for k, e := range x {
			n, err := numbers(e)
			if err != nil {
				return nil, err.push("." + k)
			}
			x[k] = n
		}
	case []any:
		for i, e := range x {
			n, err := numbers(e)
			if err != nil {
				return nil, err.push("[" + strconv.Itoa(i) + "]")
			}
			x[i] = n
		}
	}
	return v, nil
}

// Save writes the content of c to w as indented JSON with sorted keys, so
// that the same content always gives the same bytes. A time.Duration is
// written as integer nanoseconds and a time.Time in RFC 3339, which the
// Duration and Time getters read back. Values JSON cannot represent (NaN,
// ±Inf, complex numbers, maps whose keys are bools or floats) make Save
// fail without writing anything.
func (c *Config) Save(w io.Writer) error {
	if w == nil {
		return &Error{Op: "save", Err: errors.New("nil writer")}
	}
	data, err := c.Snapshot().marshal()
	if err != nil {
		return &Error{Op: "save", Err: err}
	}
	if _, err := w.Write(data); err != nil {
		return &Error{Op: "save", Err: err}
	}
	return nil
}

// SaveFile writes the content of c to path atomically (fs.WriteAtomic): a
// reader of path sees the old file or the new one, never a partial one.
// perm applies when the file is created.
func (c *Config) SaveFile(path string, perm os.FileMode) error {
	data, err := c.Snapshot().marshal()
	if err != nil {
		return &Error{Op: "save", Key: path, Err: err}
	}
	if err := fs.WriteAtomic(path, data, perm); err != nil {
		return &Error{Op: "save", Key: path, Err: err}
	}
	return nil
}

func (s *Snapshot) marshal() ([]byte, error) {
	data, err := json.MarshalIndent(s.root, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode JSON: %w", err)
	}
	return append(data, '\n'), nil
}
