package jsondoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// A Schema is what a kind of raw document knows about its members: the
// struct type whose fields it checks (nil: none), and those fields in
// layout order.
type Schema struct {
	typ     reflect.Type
	fields  *structFields
	members []declaredMember
}

// A declaredMember is a field of the Schema's type: its JSON name, its Go
// type, and the value a Go reader sees when it is absent.
type declaredMember struct {
	name string
	typ  reflect.Type
	zero json.RawMessage
}

// NewSchema returns the Schema of documents whose members t, a struct type
// whose fields' zero values encode, declares; nil t declares none.
func NewSchema(t reflect.Type) *Schema {
	if t == nil {
		return &Schema{fields: fieldsOf(reflect.TypeFor[struct{}]())}
	}
	s := &Schema{typ: t, fields: fieldsOf(t)}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		zero, _ := json.Marshal(reflect.Zero(f.Type).Interface()) // t's fields' zero values encode
		s.members = append(s.members, declaredMember{name: name, typ: f.Type, zero: zero})
	}
	return s
}

func (s *Schema) declared(name string) (declaredMember, bool) {
	i := slices.IndexFunc(s.members, func(m declaredMember) bool { return m.name == name })
	if i < 0 {
		return declaredMember{}, false
	}
	return s.members[i], true
}

// Raw is a JSON object kept as its top-level members, each value exactly as
// read; its methods take the [Schema] that says which members are declared
// and how they are laid out. Copies share the members (see [Raw.Clone]).
// The zero Raw is empty and ready to use.
type Raw struct {
	m map[string]json.RawMessage
	// stampKept is set when the caller sets or deletes updated_at: Stamp
	// leaves it as the caller made it.
	stampKept bool
}

// Unmarshal sets r to the members of the JSON object data, refusing what
// s refuses: a value that is not an object, a declared member whose value
// does not decode into its Go type, and the ambiguities of strict.go.
func (r *Raw) Unmarshal(s *Schema, data []byte) error {
	trimmed := bytes.TrimSpace(data)
	if string(trimmed) == "null" {
		return errNull
	}
	if len(trimmed) > 0 && trimmed[0] != '{' {
		return fmt.Errorf("document is a JSON %s, want a JSON object", jsonKind(trimmed[0]))
	}
	if s.typ != nil {
		if err := json.Unmarshal(data, reflect.New(s.typ).Interface()); err != nil {
			return err // a declared field of the wrong type
		}
	}
	data = bytes.Clone(data)
	seen := make(map[string]bool)
	m := make(map[string]json.RawMessage)
	err := members(data, func(name string, value []byte) error {
		if _, err := s.fields.member(seen, name, value); err != nil {
			return err
		}
		m[name] = value
		return nil
	})
	if err != nil {
		return err
	}
	*r = Raw{m: m}
	return nil
}

// jsonKind names the kind of JSON value that starts with c.
func jsonKind(c byte) string {
	switch c {
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	}
	return "number"
}

// Marshal lays r out: two-space indent, the members s declares in its
// order, then the others sorted by name, each value verbatim; no final
// newline.
func (r Raw) Marshal(s *Schema) []byte {
	size := 2
	for name, v := range r.m {
		size += len(name) + len(v) + 8
	}
	buf := make([]byte, 0, size)
	buf = append(buf, '{')
	for name, value := range r.All(s) {
		if len(buf) > 1 {
			buf = append(buf, ',')
		}
		key, _ := json.Marshal(name) // a string always encodes
		buf = append(buf, "\n  "...)
		buf = append(buf, key...)
		buf = append(buf, ": "...)
		buf = append(buf, value...)
	}
	if len(r.m) > 0 {
		buf = append(buf, '\n')
	}
	return append(buf, '}')
}

// All yields the members in layout order (see [Raw.Marshal]). The values
// must not be modified.
func (r Raw) All(s *Schema) iter.Seq2[string, json.RawMessage] {
	return func(yield func(string, json.RawMessage) bool) {
		for _, f := range s.members {
			if v, ok := r.m[f.name]; ok && !yield(f.name, v) {
				return
			}
		}
		var others []string
		for name := range r.m {
			if _, declared := s.declared(name); !declared {
				others = append(others, name)
			}
		}
		slices.Sort(others)
		for _, name := range others {
			if !yield(name, r.m[name]) {
				return
			}
		}
	}
}

// Len returns the number of members.
func (r Raw) Len() int { return len(r.m) }

// Get returns the value of member name, and whether r holds it; for a
// member s declares and r omits, the value of its Go field's zero value.
// The value must not be modified.
func (r Raw) Get(s *Schema, name string) (json.RawMessage, bool) {
	if v, ok := r.m[name]; ok {
		return v, true
	}
	if f, declared := s.declared(name); declared {
		return f.zero, false
	}
	return nil, false
}

// Decode decodes the value of member name into v, as encoding/json would;
// an absent member leaves v unchanged.
func (r Raw) Decode(name string, v any) error {
	raw, ok := r.m[name]
	if !ok {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("member %q: %w", name, err)
	}
	return nil
}

// Set sets member name to value, compacted, after s's checks (see
// Schema.check); a member that already holds the same compacted JSON text
// keeps its bytes.
func (r *Raw) Set(s *Schema, name string, value json.RawMessage) error {
	if err := s.check(name, value); err != nil {
		return err
	}
	var compact bytes.Buffer
	json.Compact(&compact, value) // check checked it
	if old, ok := r.m[name]; ok && sameJSON(old, compact.Bytes()) {
		return nil
	}
	if r.m == nil {
		r.m = make(map[string]json.RawMessage)
	}
	r.m[name] = bytes.Clone(compact.Bytes())
	r.stampKept = r.stampKept || name == "updated_at"
	return nil
}

// Encode sets member name to the JSON encoding of v, with <, > and & as
// they are (see [Raw.Set]).
func (r *Raw) Encode(s *Schema, name string, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("member %q: %w", name, err)
	}
	return r.Set(s, name, bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// Delete removes member name, if present.
func (r *Raw) Delete(name string) {
	if _, ok := r.m[name]; ok {
		delete(r.m, name)
		r.stampKept = r.stampKept || name == "updated_at"
	}
}

// Clone returns a copy that shares nothing with r.
func (r Raw) Clone() Raw {
	c := Raw{stampKept: r.stampKept}
	if r.m != nil {
		c.m = maps.Clone(r.m)
	}
	return c
}

// check applies Set's rules to one member.
func (s *Schema) check(name string, value json.RawMessage) error {
	if !utf8.ValidString(name) {
		return fmt.Errorf("member name %q is not valid UTF-8", name)
	}
	if f := s.fields.caseVariant(name); f != "" && f != name {
		return fmt.Errorf("member %q: differs from field %q only in case (Go would read it as %q, other languages would not)", name, f, f)
	}
	if !json.Valid(value) {
		return fmt.Errorf("member %q: %s is not a JSON value", name, value)
	}
	if err := strictStrings(value); err != nil {
		return fmt.Errorf("member %q: %w", name, err)
	}
	f, declared := s.declared(name)
	if !declared {
		return nil
	}
	if json.Unmarshal(value, reflect.New(f.typ).Interface()) != nil {
		return fmt.Errorf("member %q: %s does not decode into its %s field, a Go %s", name, value, s.typ.Name(), f.typ)
	}
	return nil
}

// sameJSON reports whether two JSON values are the same text once
// compacted.
func sameJSON(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var ca, cb bytes.Buffer
	return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
}

// Stamp sets member updated_at to now, unless the caller set or deleted
// it.
func (r *Raw) Stamp(now time.Time) {
	if r.stampKept {
		return
	}
	v, _ := json.Marshal(now) // a time always encodes
	if r.m == nil {
		r.m = make(map[string]json.RawMessage)
	}
	r.m["updated_at"] = v
}
