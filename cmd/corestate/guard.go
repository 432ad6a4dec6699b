package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"github.com/agentstate/core/status"
)

// A guard is one --if FIELD=VALUE[,VALUE...] of set and incr: the change is
// made only if FIELD currently equals one of the values. It is checked
// inside the same Mutate as the change, under the document's lock, so no
// other writer can come between the check and the write.
type guard struct {
	text string            // as given, for messages
	name string            // the field
	alts []json.RawMessage // alternatives; nil means "absent (or null)"
}

// guardFlags collects the repeatable --if flag as written; the values are
// parsed after flag parsing so that a bad value maps to its own exit code
// (the flag package would turn every error into a usage error).
type guardFlags []string

func (g *guardFlags) String() string {
	if g == nil {
		return ""
	}
	return strings.Join(*g, " ")
}

func (g *guardFlags) Set(s string) error { *g = append(*g, s); return nil }

func (g guardFlags) parse() ([]guard, error) {
	var gs []guard
	for _, text := range g {
		gd, err := parseGuard(text)
		if err != nil {
			return nil, err
		}
		gs = append(gs, gd)
	}
	return gs, nil
}

// parseGuard parses FIELD=VALUE[,VALUE...]. Each VALUE is parsed as set
// parses its VALUE (JSON if it parses as JSON, else a plain string; the
// fields of status.Status checked against their types), except that null
// means "the field is absent". The whole VALUE is one value when it parses
// as JSON (tags=["a","b"], note="a,b"); otherwise it is split at every
// comma into alternatives (status=queued,blocked).
func parseGuard(text string) (guard, error) {
	name, value, ok := strings.Cut(text, "=")
	if !ok {
		return guard{}, fmt.Errorf("%w: --if %q is not FIELD=VALUE", errUsage, text)
	}
	if name == "" {
		return guard{}, fmt.Errorf("%w: --if %s: empty field name", errBadField, text)
	}
	if _, known := fieldByName[name]; !known {
		if err := checkUnknownName(name); err != nil {
			return guard{}, fmt.Errorf("--if %s: %w", text, err)
		}
	}
	parts := []string{value}
	if !json.Valid([]byte(value)) {
		parts = strings.Split(value, ",")
	}
	g := guard{text: text, name: name}
	for _, p := range parts {
		if strings.TrimSpace(p) == "null" {
			g.alts = append(g.alts, nil)
			continue
		}
		if p != "" && strings.ContainsRune(`[{"`, rune(p[0])) && !json.Valid([]byte(p)) {
			// A composite or quoted alternative cut by a comma: refuse
			// rather than compare against a fragment.
			return guard{}, fmt.Errorf("%w: --if %s: %q is not a JSON value (an alternative list cannot hold composite values)", errUsage, text, p)
		}
		a, err := parseAssignment(name + "=" + p)
		if err != nil {
			return guard{}, fmt.Errorf("--if %s: %w", text, err)
		}
		g.alts = append(g.alts, a.value)
	}
	return g, nil
}

// check reports whether g holds on d, as a *conflictError if it does not.
func (g guard) check(d document) error {
	got, present := d[g.name]
	if present && string(compactJSON(got)) == "null" {
		present = false
	}
	for _, want := range g.alts {
		switch {
		case want == nil:
			if !present {
				return nil
			}
		case present:
			if jsonEqual(got, want) {
				return nil
			}
		default:
			// Absent: a field of status.Status reads as its zero value in
			// every Go reader (and in get), so compare with that.
			if f, known := fieldByName[g.name]; known && jsonEqual(f.zeroValue(), want) {
				return nil
			}
		}
	}
	return &conflictError{guard: g, got: got, present: present}
}

// A conflictError reports a guard that did not hold. It matches
// status.ErrConflict, as the status package's own transition conflicts do,
// so that both map to the conflict exit code.
type conflictError struct {
	guard   guard
	got     json.RawMessage
	present bool
}

func (e *conflictError) Error() string {
	want := make([]string, len(e.guard.alts))
	for i, a := range e.guard.alts {
		if a == nil {
			want[i] = "absent"
		} else {
			want[i] = string(a)
		}
	}
	got := "absent"
	if e.present {
		got = string(compactJSON(e.got))
	} else if f, known := fieldByName[e.guard.name]; known {
		got = "absent (reads as " + string(f.zeroValue()) + ")"
	}
	return fmt.Sprintf("conflict: --if %s does not hold: %s is %s, want %s",
		e.guard.text, e.guard.name, got, strings.Join(want, " or "))
}

func (e *conflictError) Is(target error) bool { return target == status.ErrConflict }

func checkGuards(d document, gs []guard) error {
	for _, g := range gs {
		if err := g.check(d); err != nil {
			return err
		}
	}
	return nil
}

// guardedStates returns the states that the guards on "status" allow, as
// the from list of status.Status.Transition ("" for an absent status), and
// whether there is any such guard.
func guardedStates(gs []guard) (from []status.State, guarded bool) {
	for _, g := range gs {
		if g.name != "status" {
			continue
		}
		guarded = true
		for _, a := range g.alts {
			var s string
			if a != nil && json.Unmarshal(a, &s) != nil {
				continue // parseGuard admits only states for status
			}
			from = append(from, status.State(s))
		}
	}
	return from, guarded
}

// jsonEqual compares two JSON values as values: objects regardless of key
// order, numbers numerically (1 equals 1.0), strings after unescaping.
func jsonEqual(a, b []byte) bool {
	if bytes.Equal(compactJSON(a), compactJSON(b)) {
		return true
	}
	x, errX := decodeNumbers(a)
	y, errY := decodeNumbers(b)
	return errX == nil && errY == nil && valuesEqual(x, y)
}

func decodeNumbers(v []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var x any
	err := dec.Decode(&x)
	return x, err
}

func valuesEqual(x, y any) bool {
	switch x := x.(type) {
	case json.Number:
		y, ok := y.(json.Number)
		return ok && numbersEqual(x, y)
	case map[string]any:
		y, ok := y.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !valuesEqual(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := y.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !valuesEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return x == y // string, bool, nil
}

// numbersEqual compares decimal literals exactly enough for status files:
// with 256 bits of mantissa, integers well beyond int64 and the usual
// decimals compare as written.
func numbersEqual(x, y json.Number) bool {
	if x == y {
		return true
	}
	fx, _, errX := big.ParseFloat(string(x), 10, 256, big.ToNearestEven)
	fy, _, errY := big.ParseFloat(string(y), 10, 256, big.ToNearestEven)
	return errX == nil && errY == nil && fx.Cmp(fy) == 0
}
