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

	"github.com/agentstate/core/status"
)

// A document is a status file as a set of top-level JSON members, so that
// get and set see, keep and may change fields that status.Status does not
// declare. It is the T of the status.Store that set mutates.
type document map[string]json.RawMessage

// MarshalJSON lays the document out as status.Mutate does: the fields of
// status.Status in declared order, then the others sorted by name.
func (d document) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, name := range d.order() {
		if i > 0 {
			buf.WriteByte(',')
		}
		key, _ := json.Marshal(name) // a string always encodes
		buf.Write(key)
		buf.WriteByte(':')
		buf.Write(d[name])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON accepts a JSON object only: status.Read reports a "null"
// document as corrupt, and so must we, or set would overwrite it.
func (d *document) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	if m == nil {
		return errors.New("document is null, want a JSON object")
	}
	*d = m
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

// indent renders d as get and set print it: indented by two spaces, with a
// final newline.
func (d document) indent() []byte {
	compact, err := d.MarshalJSON()
	if err == nil {
		var buf bytes.Buffer
		if err = json.Indent(&buf, compact, "", "  "); err == nil {
			buf.WriteByte('\n')
			return buf.Bytes()
		}
	}
	// Every value came from the decoder or passed json.Valid.
	panic("corestate: indent document: " + err.Error())
}

func (d document) equal(o document) bool {
	return maps.EqualFunc(d, o, func(a, b json.RawMessage) bool {
		return bytes.Equal(compactJSON(a), compactJSON(b))
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
