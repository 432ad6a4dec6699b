package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentstate/core/status"
)

// An assignment is one FIELD=VALUE of set; a nil value removes the field.
type assignment struct {
	name  string
	value json.RawMessage
}

// parseAssignment turns "FIELD=VALUE" into the JSON value to store in a
// document of kind k; see fieldValue for which.
func parseAssignment(k kind, arg string) (assignment, error) {
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
	value, err := fieldValue(k, name, text)
	if err != nil {
		return assignment{}, err
	}
	if string(value) == "null" {
		if name == "status" && k.isStatus() {
			return assignment{}, fmt.Errorf("%w status: cannot be removed; want one of %s", errBadField, stateList())
		}
		return assignment{name: name}, nil
	}
	if name == "status" && k.isStatus() {
		var s status.State
		json.Unmarshal(value, &s) // fieldValue checked it
		if !slices.Contains(states, s) {
			return assignment{}, fmt.Errorf("%w status: %q is not one of %s", errBadField, s, stateList())
		}
	}
	return assignment{name: name, value: value}, nil
}

// fieldValue returns the JSON value that FIELD=text stores: text itself
// if it is JSON that the field takes, else text as a JSON string
// (status=running; branch=123 stores the string "123" because branch is a
// string field). What a field takes is what the Set of a document of kind
// k accepts: in a status document, the fields of status.Status their Go
// type; other fields, and every field of another document, any JSON value.
func fieldValue(k kind, name, text string) (json.RawMessage, error) {
	probe := k.probe()
	v := bytes.TrimSpace([]byte(text))
	var err error
	if json.Valid(v) {
		if err = probe.Set(name, v); err == nil {
			return compactJSON(v), nil
		}
	}
	if !json.Valid(v) || v[0] != '"' {
		str, _ := json.Marshal(text) // a string always encodes
		errStr := probe.Set(name, str)
		if errStr == nil {
			return str, nil
		}
		if err == nil {
			err = errStr
		}
	}
	if t := statusFieldType(k, name); t != nil {
		return nil, fmt.Errorf("%w %s: want %s, got %s", errBadField, name, describeType(t), text)
	}
	return nil, fmt.Errorf("%w: %v", errBadField, err)
}

// statusFieldType returns the Go type of the status.Status field that
// name is in a status document, or nil.
func statusFieldType(k kind, name string) reflect.Type {
	if !k.isStatus() {
		return nil
	}
	t := reflect.TypeFor[status.Status]()
	for i := range t.NumField() {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); tag == name {
			return t.Field(i).Type
		}
	}
	return nil
}

// describeType says what a value of Go type t is, for a shell user.
func describeType(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[time.Time]():
		return "an RFC 3339 time"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		return "an integer"
	case t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uintptr:
		return "a non-negative integer"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return "a number"
	case t.Kind() == reflect.Bool:
		return "true or false"
	case t.Kind() == reflect.String:
		return "a string"
	}
	return "a Go " + t.String()
}

// checkName refuses a field name that no document of kind k may hold: one
// that is not valid UTF-8, and in a status document one that differs from
// a field of status.Status only in case (Go's decoder matches names
// case-insensitively, so "Runs" would collide with "runs" in every Go
// reader of the file).
func checkName(k kind, name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty field name", errBadField)
	}
	if err := k.probe().Set(name, json.RawMessage("null")); err != nil {
		return fmt.Errorf("%w: %v", errBadField, err)
	}
	return nil
}

// checkNumberField refuses, before the lock is taken, a field that cannot
// hold a number: a status.Status field of another type in a status
// document, or a bad name.
func checkNumberField(k kind, name string) error {
	if err := checkName(k, name); err != nil {
		return err
	}
	if k.probe().Set(name, json.RawMessage("0")) != nil {
		return fmt.Errorf("%w %s: a field of status.Status that holds no number", errBadField, name)
	}
	return nil
}

var states = []status.State{
	status.Queued, status.Running, status.Completed, status.Blocked,
	status.Failed, status.Merged, status.ReadyForReview, status.Rejected,
}

func stateList() string {
	names := make([]string, len(states))
	for i, s := range states {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

func compactJSON(v []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, v) != nil {
		return v
	}
	return buf.Bytes()
}

// layout is the document as corestate prints it: as status writes it.
func layout(d doc) []byte {
	b, _ := d.MarshalJSON() // never fails
	return append(b, '\n')
}
