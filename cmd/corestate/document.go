package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentstate/core/internal/jsontext"
	"github.com/agentstate/core/status"
)

// A document is a status file as a set of top-level JSON members, so that
// get and set see, keep and may change fields that status.Status does not
// declare. It is the T of the status.Store that set mutates; having both
// MarshalJSON and UnmarshalJSON, it owns the file's bytes (see
// status.Store): every value is kept as it was read, byte for byte, so the
// output grows with the input, never with its nesting depth.
type document map[string]json.RawMessage

// MarshalJSON lays the document out as status.Mutate does: two-space
// indent, the fields of status.Status in declared order, then the others
// sorted by name, each value verbatim.
func (d document) MarshalJSON() ([]byte, error) {
	size := 2
	for name, v := range d {
		size += len(name) + len(v) + 8
	}
	buf := make([]byte, 0, size)
	buf = append(buf, '{')
	for i, name := range d.order() {
		if i > 0 {
			buf = append(buf, ',')
		}
		key, _ := json.Marshal(name) // a string always encodes
		buf = append(buf, "\n  "...)
		buf = append(buf, key...)
		buf = append(buf, ": "...)
		buf = append(buf, d[name]...)
	}
	if len(d) > 0 {
		buf = append(buf, '\n')
	}
	return append(buf, '}'), nil
}

// UnmarshalJSON accepts a JSON object that status.Load accepts as a
// status.Status, and keeps every member's value bytes. It refuses what
// status refuses, so that corestate (--if included), Go readers and other
// languages agree on what the file says: null, a repeated name, a name that
// differs from a status.Status field only in case, invalid UTF-8 or a lone
// surrogate in a name or in a status.Status field, and a status.Status field
// whose value does not decode into its Go type.
func (d *document) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return errors.New("document is not a JSON object")
	}
	m := document{}
	for dec.More() {
		from := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name := tok.(string) // an object key
		if err := jsontext.CheckStrings(data[from:dec.InputOffset()]); err != nil {
			return fmt.Errorf("name %q: %w", name, err)
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return err
		}
		if _, dup := m[name]; dup {
			return fmt.Errorf("duplicate name %q", name)
		}
		if err := checkMember(name, value); err != nil {
			return err
		}
		m[name] = value
	}
	*d = m
	return nil
}

// checkMember applies status's rules to one member (see UnmarshalJSON).
func checkMember(name string, value json.RawMessage) error {
	f, known := fieldByName[name]
	if !known {
		for _, kf := range statusFields {
			if strings.EqualFold(kf.name, name) {
				return fmt.Errorf("name %q differs from field %q only in case (Go would read it as %q, other languages would not)", name, kf.name, kf.name)
			}
		}
		return nil
	}
	if err := jsontext.CheckStrings(value); err != nil {
		return fmt.Errorf("field %s: %w", name, err)
	}
	if json.Unmarshal(value, reflect.New(f.typ).Interface()) != nil {
		return fmt.Errorf("field %s holds %s, not %s", name, value, typeName(f.typ))
	}
	return nil
}

func (d document) order() []string {
	names := make([]string, 0, len(d))
	for _, f := range statusFields {
		if _, ok := d[f.name]; ok {
			names = append(names, f.name)
		}
	}
	var others []string
	for name := range d {
		if _, known := fieldByName[name]; !known {
			others = append(others, name)
		}
	}
	slices.Sort(others)
	return append(names, others...)
}

// layout renders d as get and set print it and as set writes it, with a
// final newline.
func (d document) layout() []byte {
	b, _ := d.MarshalJSON() // never fails
	return append(b, '\n')
}

func (d document) equal(o document) bool {
	return maps.EqualFunc(d, o, func(a, b json.RawMessage) bool {
		return bytes.Equal(a, b) || bytes.Equal(compactJSON(a), compactJSON(b))
	})
}

func compactJSON(v []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, v) != nil {
		return v
	}
	return buf.Bytes()
}

// A field is a member of status.Status as the JSON encoder sees it.
type field struct {
	name      string
	typ       reflect.Type
	omitempty bool
}

var (
	statusFields = fieldsOf(reflect.TypeFor[status.Status]())
	fieldByName  = func() map[string]field {
		m := make(map[string]field, len(statusFields))
		for _, f := range statusFields {
			m[f.name] = f
		}
		return m
	}()
)

// fieldsOf reads the JSON names of struct type t's exported fields from their
// tags, so that the list follows status.Status when its owner adds a field.
func fieldsOf(t reflect.Type) []field {
	var fs []field
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if !sf.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = sf.Name
		}
		fs = append(fs, field{name: name, typ: sf.Type, omitempty: strings.Contains(opts, "omitempty")})
	}
	return fs
}

var states = []status.State{
	status.Queued, status.Running, status.Completed, status.Blocked,
	status.Failed, status.Merged, status.ReadyForReview, status.Rejected,
}

// zeroValue is the JSON a Go reader of the file sees for a status.Status
// field the file omits.
func (f field) zeroValue() json.RawMessage {
	b, _ := json.Marshal(reflect.Zero(f.typ).Interface()) // fields of Status always encode
	return b
}

// An assignment is one FIELD=VALUE of set; a nil value removes the field.
type assignment struct {
	name  string
	value json.RawMessage
}

// parseAssignment turns "FIELD=VALUE" into the JSON value to store,
// checking the fields of status.Status against their types.
func parseAssignment(arg string) (assignment, error) {
	name, text, ok := strings.Cut(arg, "=")
	if !ok {
		return assignment{}, fmt.Errorf("%w: set: %q is not FIELD=VALUE", errUsage, arg)
	}
	if name == "" {
		return assignment{}, fmt.Errorf("%w: %q: empty field name", errBadField, arg)
	}
	// JSON shared between programs must be UTF-8 (RFC 8259): json.Valid
	// accepts other bytes inside strings and would let them into the file,
	// where a Python agent's json.load then fails on the whole document;
	// re-encoding would silently replace them with U+FFFD.
	if !utf8.ValidString(arg) {
		return assignment{}, fmt.Errorf("%w: %q: not valid UTF-8", errBadField, arg)
	}
	value := json.RawMessage(text)
	if !json.Valid(value) {
		value, _ = json.Marshal(text) // a string always encodes
	}
	value = compactJSON(value)
	f, known := fieldByName[name]
	if !known {
		if err := checkUnknownName(name); err != nil {
			return assignment{}, err
		}
		if string(value) == "null" {
			value = nil
		}
		return assignment{name: name, value: value}, nil
	}
	return checkKnown(f, text, value)
}

// checkUnknownName refuses a name that status.Status does not declare but
// that differs from one of its fields only in case: Go's decoder matches
// names case-insensitively, so "Runs" would collide with "runs" in every Go
// reader of the file.
func checkUnknownName(name string) error {
	for _, kf := range statusFields {
		if strings.EqualFold(kf.name, name) {
			return fmt.Errorf("%w %s: did you mean %s? (Go readers match field names case-insensitively)", errBadField, name, kf.name)
		}
	}
	return nil
}

func checkKnown(f field, text string, value json.RawMessage) (assignment, error) {
	if string(value) == "null" {
		if f.name == "status" {
			return assignment{}, fmt.Errorf("%w status: cannot be removed; want one of %s", errBadField, stateList())
		}
		return assignment{name: f.name}, nil
	}
	// A string field takes VALUE as written unless VALUE is a JSON string:
	// branch=123 means the branch "123", not a type error.
	if f.typ.Kind() == reflect.String && value[0] != '"' {
		value, _ = json.Marshal(text)
	}
	v := reflect.New(f.typ)
	if err := json.Unmarshal(value, v.Interface()); err != nil {
		return assignment{}, fmt.Errorf("%w %s: want %s, got %s", errBadField, f.name, typeName(f.typ), text)
	}
	if f.name == "status" && !slices.Contains(states, status.State(v.Elem().String())) {
		return assignment{}, fmt.Errorf("%w status: %q is not one of %s", errBadField, v.Elem().String(), stateList())
	}
	return assignment{name: f.name, value: value}, nil
}

func typeName(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[time.Time]():
		return "an RFC 3339 time such as 2026-01-02T15:04:05Z"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return "an integer"
	case t.Kind() == reflect.String:
		return "a string"
	case t.Kind() == reflect.Bool:
		return "true or false"
	}
	return "a JSON value of Go type " + t.String()
}

func stateList() string {
	names := make([]string, len(states))
	for i, s := range states {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}
