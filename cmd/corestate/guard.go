package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"github.com/agentstate/core/status"
)

// A guard is one --if of set, incr and tx: FIELD=VALUE[,VALUE...] holds if
// FIELD currently equals one of the values; FIELD<VALUE (or <=, >, >=)
// holds if the number FIELD compares so with VALUE, a number or the name
// of another field. It is checked inside the same Mutate as the change,
// under the document's lock, so no other writer can come between the check
// and the write.
type guard struct {
	flag string // --if, or list's --where, for messages
	text string // as given, for messages
	name string // the field
	kind kind   // of the document: what an absent or null field reads as
	op   string // "=", "<", "<=", ">" or ">="
	alts []alt  // "=": the alternatives
	than string // a comparison's right side: a number, or a field's name
	ref  bool   // than names a field
}

// An alt is one VALUE of FIELD=VALUE[,VALUE...]. A bare number, true or
// false also matches the JSON string of the same text (run_id=12345
// holds for "12345"): a shell has no types, and a program in another
// language may have stored the string. A quoted VALUE ("12345") matches
// only the string.
type alt struct {
	value    json.RawMessage // nil: "absent (or null)"
	asString json.RawMessage // the string form a bare scalar also matches, or nil
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

func (g guardFlags) parse(k kind) ([]guard, error) { return g.parseAs(k, "--if") }

// parseAs is parse for a flag of another name (list's --where).
func (g guardFlags) parseAs(k kind, flag string) ([]guard, error) {
	var gs []guard
	for _, text := range g {
		gd, err := parseGuardAs(k, flag, text)
		if err != nil {
			return nil, err
		}
		gs = append(gs, gd)
	}
	return gs, nil
}

// parseGuard parses FIELD=VALUE[,VALUE...] for a document of kind k. Each
// VALUE is parsed as set parses its VALUE (JSON if it parses as JSON, else
// a plain string; in a status document the fields of status.Status checked
// against their types), except that null means "the field is absent", and
// a bare scalar also matches its string form (see alt). The whole VALUE is
// one value when it parses as JSON (tags=["a","b"], note="a,b"); otherwise
// it is split at every comma into alternatives (status=queued,blocked).
func parseGuard(k kind, text string) (guard, error) { return parseGuardAs(k, "--if", text) }

func parseGuardAs(k kind, flag, text string) (guard, error) {
	i := strings.IndexAny(text, "<>=")
	if i < 0 {
		return guard{}, fmt.Errorf("%w: %s %q is not FIELD=VALUE or FIELD<VALUE", errUsage, flag, text)
	}
	if text[i] != '=' {
		return parseComparison(k, flag, text, i)
	}
	name, value := text[:i], text[i+1:]
	if name == "" {
		return guard{}, fmt.Errorf("%w: %s %s: empty field name", errBadField, flag, text)
	}
	if err := checkName(k, name); err != nil {
		return guard{}, fmt.Errorf("%s %s: %w", flag, text, err)
	}
	parts := []string{value}
	if !json.Valid([]byte(value)) {
		parts = strings.Split(value, ",")
	}
	g := guard{flag: flag, text: text, name: name, kind: k, op: "="}
	for _, p := range parts {
		if strings.TrimSpace(p) == "null" {
			g.alts = append(g.alts, alt{})
			continue
		}
		if p != "" && strings.ContainsRune(`[{"`, rune(p[0])) && !json.Valid([]byte(p)) {
			// A composite or quoted alternative cut by a comma: refuse
			// rather than compare against a fragment.
			return guard{}, fmt.Errorf("%w: %s %s: %q is not a JSON value (an alternative list cannot hold composite values)", errUsage, flag, text, p)
		}
		a, err := parseAssignment(k, name+"="+p)
		if err != nil {
			return guard{}, fmt.Errorf("%s %s: %w", flag, text, err)
		}
		g.alts = append(g.alts, alt{value: a.value, asString: stringForm(a.value)})
	}
	return g, nil
}

// stringForm returns the JSON string of the text of a number, true or
// false, or nil for any other value.
func stringForm(v json.RawMessage) json.RawMessage {
	if len(v) == 0 || strings.ContainsRune(`"[{n`, rune(v[0])) {
		return nil
	}
	s, _ := json.Marshal(string(v)) // a string always encodes
	return s
}

// parseComparison parses FIELD<VALUE, FIELD<=VALUE, FIELD>VALUE or
// FIELD>=VALUE, whose operator starts at text[i]. VALUE is a JSON number,
// or else the name of another field of the document.
func parseComparison(k kind, flag, text string, i int) (guard, error) {
	g := guard{flag: flag, text: text, name: text[:i], kind: k, op: text[i : i+1]}
	if i+1 < len(text) && text[i+1] == '=' {
		g.op += "="
	}
	g.than = text[i+len(g.op):]
	for _, name := range []string{g.name, g.than} {
		if name == "" {
			return guard{}, fmt.Errorf("%w: %s %s: a comparison needs a field and a number or field", errUsage, flag, text)
		}
	}
	var n json.Number
	g.ref = json.Unmarshal([]byte(g.than), &n) != nil
	fields := []string{g.name}
	if g.ref {
		fields = append(fields, g.than)
	}
	for _, name := range fields {
		if err := checkNumberField(k, name); err != nil {
			return guard{}, fmt.Errorf("%s %s: %w", flag, text, err)
		}
	}
	return g, nil
}

// number returns the numeric value of field name in d: an absent or null
// field counts as 0, as incr counts it.
func number(d doc, name string) (json.Number, error) {
	raw, present := d.Get(name)
	if !present || string(compactJSON(raw)) == "null" {
		return "0", nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return "", fmt.Errorf("%w %s: %s is not a number", errBadField, name, compactJSON(raw))
	}
	return n, nil
}

// compare checks a comparison guard.
func (g guard) compare(d doc) error {
	x, err := number(d, g.name)
	if err != nil {
		return fmt.Errorf("%s %s: %w", g.flag, g.text, err)
	}
	y, detail := json.Number(g.than), ""
	if g.ref {
		if y, err = number(d, g.than); err != nil {
			return fmt.Errorf("%s %s: %w", g.flag, g.text, err)
		}
		detail = fmt.Sprintf(", %s is %s", g.than, y)
	}
	c, ok := compareNumbers(x, y)
	if !ok {
		return fmt.Errorf("%w: %s %s: cannot compare %s with %s", errBadField, g.flag, g.text, x, y)
	}
	holds := map[string]bool{"<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0}[g.op]
	if holds {
		return nil
	}
	return &conflictError{guard: g, detail: fmt.Sprintf("%s is %s%s", g.name, x, detail)}
}

// check reports whether g holds on d, as a *conflictError if it does not.
func (g guard) check(d doc) error {
	if g.op != "=" {
		return g.compare(d)
	}
	// Absent, a field of status.Status in a status document reads as its
	// zero value in every Go reader (and in get), so it compares as that.
	got, present := d.Get(g.name)
	if present && string(compactJSON(got)) == "null" {
		got, present = g.kind.probe().Get(g.name)
	}
	for _, want := range g.alts {
		switch {
		case want.value == nil:
			if !present {
				return nil
			}
		case got != nil:
			if jsonEqual(got, want.value) || want.asString != nil && jsonEqual(got, want.asString) {
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
	detail  string // a comparison's values
}

func (e *conflictError) Error() string {
	if e.detail != "" {
		return fmt.Sprintf("conflict: %s %s does not hold: %s", e.guard.flag, e.guard.text, e.detail)
	}
	want := make([]string, len(e.guard.alts))
	for i, a := range e.guard.alts {
		switch {
		case a.value == nil:
			want[i] = "absent"
		case a.asString != nil:
			want[i] = string(a.value) + " or the string " + string(a.asString)
		default:
			want[i] = string(a.value)
		}
	}
	got := "absent"
	if e.present {
		got = string(compactJSON(e.got))
	} else if e.got != nil {
		got = "absent (reads as " + string(e.got) + ")"
	}
	return fmt.Sprintf("conflict: %s %s does not hold: %s is %s, want %s",
		e.guard.flag, e.guard.text, e.guard.name, got, strings.Join(want, " or "))
}

func (e *conflictError) Is(target error) bool { return target == status.ErrConflict }

func checkGuards(d doc, gs []guard) error {
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
			if a.value != nil && json.Unmarshal(a.value, &s) != nil {
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
	c, ok := compareNumbers(x, y)
	return ok && c == 0
}

// compareNumbers compares two decimal literals as numbersEqual does: -1,
// 0 or +1, and whether both parsed.
func compareNumbers(x, y json.Number) (int, bool) {
	fx, _, errX := big.ParseFloat(string(x), 10, 256, big.ToNearestEven)
	fy, _, errY := big.ParseFloat(string(y), 10, 256, big.ToNearestEven)
	if errX != nil || errY != nil {
		return 0, false
	}
	return fx.Cmp(fy), true
}
