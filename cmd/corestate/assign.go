package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentstate/core/status"
)

// An assignment is one FIELD=VALUE of set; a nil value removes the field.
type assignment struct {
	name  string
	value json.RawMessage
}

// parseAssignment turns "FIELD=VALUE" into the JSON value to store; see
// fieldValue for which.
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
	value, err := fieldValue(name, text)
	if err != nil {
		return assignment{}, err
	}
	if string(value) == "null" {
		if name == "status" {
			return assignment{}, fmt.Errorf("%w status: cannot be removed; want one of %s", errBadField, stateList())
		}
		return assignment{name: name}, nil
	}
	if name == "status" {
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
// string field). What a field takes is what status.Document.Set accepts:
// the fields of status.Status their Go type, other fields any JSON value.
func fieldValue(name, text string) (json.RawMessage, error) {
	var probe status.Document
	var err error
	if v := bytes.TrimSpace([]byte(text)); json.Valid(v) {
		if err = probe.Set(name, v); err == nil {
			return compactJSON(v), nil
		}
		if v[0] == '"' {
			return nil, fmt.Errorf("%w: %v", errBadField, err)
		}
	}
	str, _ := json.Marshal(text) // a string always encodes
	if errStr := probe.Set(name, str); errStr != nil {
		if err == nil {
			err = errStr
		}
		return nil, fmt.Errorf("%w: %v", errBadField, err)
	}
	return str, nil
}

// checkName refuses a field name that no status document may hold: one
// that differs from a field of status.Status only in case (Go's decoder
// matches names case-insensitively, so "Runs" would collide with "runs" in
// every Go reader of the file), or that is not valid UTF-8.
func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty field name", errBadField)
	}
	var probe status.Document
	if err := probe.Set(name, json.RawMessage("null")); err != nil {
		return fmt.Errorf("%w: %v", errBadField, err)
	}
	return nil
}

// checkNumberField refuses, before the lock is taken, a field that cannot
// hold a number: a status.Status field of another type, or a bad name.
func checkNumberField(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	var probe status.Document
	if probe.Set(name, json.RawMessage("0")) != nil {
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
func layout(d status.Document) []byte {
	b, _ := d.MarshalJSON() // never fails
	return append(b, '\n')
}
