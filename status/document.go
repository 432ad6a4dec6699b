package status

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// A Document is any JSON object kept as its top-level members, each value
// exactly as read, for programs that must see, keep and change members
// without knowing their types (a CLI, a migration, a proxy): a registry, a
// queue, a status document. Use it as the T of a [Store]:
//
//	doc, err := status.NewStore[status.Document](path).Mutate(ctx, func(d *status.Document) error {
//		return d.Set("active_count", json.RawMessage("3"))
//	})
//
// A Document knows no member: [StatusDocument] is the same for status
// documents, with [Status]'s types, layout and updated_at stamping. A
// Store[Document]:
//
//   - refuses a document that is not an object (null included), a name
//     repeated in it, and a name that is not valid UTF-8 or holds a \u
//     escape of a lone surrogate: the rules of the package doc that need
//     no declared field;
//   - keeps every member's value as its bytes, exactly as read, so that
//     numbers beyond float64 and members of any type survive any change to
//     other members;
//   - lays the document out deterministically: two-space indent, the
//     members sorted by name, each value verbatim, and a final newline (the
//     Store adds it);
//   - writes nothing when nothing changed (Set keeps a member's bytes when
//     the new value is the same JSON text once compacted), and stamps
//     nothing: an updated_at member is a member like any other.
//
// A Document refers to its members as a map does: copies share them (see
// Clone). The zero Document is empty and ready to use.
type Document struct{ r rawDoc }

// A StatusDocument is a status document kept as its raw members: a
// [Document] that follows [Status]'s rules for the members Status
// declares, for programs that change members Status does not declare (a
// CLI, a migration). A Store[StatusDocument] reads, lays out, stamps and
// compares the document as a Store[Status] does, member values aside:
//
//   - Decoding refuses what Store[Status] refuses (see the package doc): what
//     a Document refuses, a name differing from a Status field's only in
//     case, invalid UTF-8 or a lone surrogate in a Status field, and a Status
//     field whose value does not decode into its Go type.
//   - Every member's value is kept as its bytes, as in a Document.
//   - The layout is the Store[Status] layout: two-space indent, the members
//     Status declares in its order, then the others sorted by name, each
//     value verbatim, and a final newline.
//   - When anything changed, Stamp sets updated_at to the time of the
//     write, unless the caller set or deleted updated_at itself. When
//     nothing changed, nothing is written.
//
// The zero StatusDocument is empty and ready to use.
type StatusDocument struct{ r rawDoc }

// A schema is what a kind of raw document knows about its members: the
// struct type whose fields it checks (nil: none), and those fields in
// layout order.
type schema struct {
	typ     reflect.Type
	fields  *structFields
	members []declaredMember
}

// A declaredMember is a field of the schema's type: its JSON name, its Go
// type, and the value a Go reader sees when it is absent.
type declaredMember struct {
	name string
	typ  reflect.Type
	zero json.RawMessage
}

var (
	anyObject    = newSchema(nil)
	statusSchema = newSchema(reflect.TypeFor[Status]())
)

func newSchema(t reflect.Type) *schema {
	if t == nil {
		return &schema{fields: fieldsOf(reflect.TypeFor[struct{}]())}
	}
	s := &schema{typ: t, fields: fieldsOf(t)}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		zero, _ := json.Marshal(reflect.Zero(f.Type).Interface()) // Status's fields always encode
		s.members = append(s.members, declaredMember{name: name, typ: f.Type, zero: zero})
	}
	return s
}

func (s *schema) declared(name string) (declaredMember, bool) {
	i := slices.IndexFunc(s.members, func(m declaredMember) bool { return m.name == name })
	if i < 0 {
		return declaredMember{}, false
	}
	return s.members[i], true
}

// rawDoc is the members of a Document or StatusDocument; its methods take
// the schema that tells the two apart.
type rawDoc struct {
	m map[string]json.RawMessage
	// stampKept is set when the caller sets or deletes updated_at: Stamp
	// leaves it as the caller made it.
	stampKept bool
}

var errNullDocument = errors.New("document is null, want a JSON object")

func (r *rawDoc) unmarshal(s *schema, data []byte) error {
	trimmed := bytes.TrimSpace(data)
	if string(trimmed) == "null" {
		return errNullDocument
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
	*r = rawDoc{m: m}
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

func (r rawDoc) marshal(s *schema) []byte {
	size := 2
	for name, v := range r.m {
		size += len(name) + len(v) + 8
	}
	buf := make([]byte, 0, size)
	buf = append(buf, '{')
	for name, value := range r.all(s) {
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

func (r rawDoc) all(s *schema) iter.Seq2[string, json.RawMessage] {
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

func (r rawDoc) get(s *schema, name string) (json.RawMessage, bool) {
	if v, ok := r.m[name]; ok {
		return v, true
	}
	if f, declared := s.declared(name); declared {
		return f.zero, false
	}
	return nil, false
}

func (r rawDoc) decode(name string, v any) error {
	raw, ok := r.m[name]
	if !ok {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("member %q: %w", name, err)
	}
	return nil
}

func (r *rawDoc) set(s *schema, name string, value json.RawMessage) error {
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

// encode is Encode: v as the Store writes strings, then set.
func (r *rawDoc) encode(s *schema, name string, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("member %q: %w", name, err)
	}
	return r.set(s, name, bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

func (r *rawDoc) delete(name string) {
	if _, ok := r.m[name]; ok {
		delete(r.m, name)
		r.stampKept = r.stampKept || name == "updated_at"
	}
}

func (r rawDoc) clone() rawDoc {
	c := rawDoc{stampKept: r.stampKept}
	if r.m != nil {
		c.m = maps.Clone(r.m)
	}
	return c
}

// check applies Set's rules to one member.
func (s *schema) check(name string, value json.RawMessage) error {
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

// UnmarshalJSON decodes a JSON object, refusing what a Store[Document]
// refuses (see [Document]), and keeps every member's value bytes.
func (d *Document) UnmarshalJSON(data []byte) error { return d.r.unmarshal(anyObject, data) }

// MarshalJSON lays the document out (see [Document]), without the final
// newline.
func (d Document) MarshalJSON() ([]byte, error) { return d.r.marshal(anyObject), nil }

// All yields the members sorted by name, values verbatim. The values must
// not be modified.
func (d Document) All() iter.Seq2[string, json.RawMessage] { return d.r.all(anyObject) }

// Len returns the number of members.
func (d Document) Len() int { return len(d.r.m) }

// Get returns the value of member name as the document holds it, and
// whether it holds it. The value must not be modified.
func (d Document) Get(name string) (json.RawMessage, bool) { return d.r.get(anyObject, name) }

// Decode decodes the value of member name into v, as encoding/json
// would; an absent member leaves v unchanged.
func (d Document) Decode(name string, v any) error { return d.r.decode(name, v) }

// Set sets member name to the JSON value. It refuses, changing nothing, a
// value that is not one JSON value, and a name or string that is not valid
// UTF-8 (or holds a lone surrogate). The value is stored compacted, or, if
// the member already holds the same compacted JSON text, its bytes are
// kept.
func (d *Document) Set(name string, value json.RawMessage) error {
	return d.r.set(anyObject, name, value)
}

// Encode sets member name to the JSON encoding of v (see Set), with
// <, > and & as they are, as the [Store] writes strings.
func (d *Document) Encode(name string, v any) error { return d.r.encode(anyObject, name, v) }

// Delete removes member name, if present.
func (d *Document) Delete(name string) { d.r.delete(name) }

// Clone returns a copy that shares nothing with d.
func (d Document) Clone() Document { return Document{d.r.clone()} }

// UnmarshalJSON decodes a JSON object, refusing what Store[Status]
// refuses (see [StatusDocument]), and keeps every member's value bytes.
func (d *StatusDocument) UnmarshalJSON(data []byte) error {
	return d.r.unmarshal(statusSchema, data)
}

// MarshalJSON lays the document out as Store[Status] does (see
// [StatusDocument]), without the final newline.
func (d StatusDocument) MarshalJSON() ([]byte, error) { return d.r.marshal(statusSchema), nil }

// All yields the members in layout order: those [Status] declares in its
// order, then the others sorted by name; values verbatim. The values must
// not be modified.
func (d StatusDocument) All() iter.Seq2[string, json.RawMessage] { return d.r.all(statusSchema) }

// Len returns the number of members.
func (d StatusDocument) Len() int { return len(d.r.m) }

// Get returns the value of member name as the document holds it, and
// whether it holds it. For a member that [Status] declares and the document
// omits, Get returns the value a Go reader of the document sees: the
// field's zero value (0, "", "0001-01-01T00:00:00Z"), and false. The
// value must not be modified.
func (d StatusDocument) Get(name string) (json.RawMessage, bool) {
	return d.r.get(statusSchema, name)
}

// Decode decodes the value of member name into v, as encoding/json
// would; an absent member leaves v unchanged.
func (d StatusDocument) Decode(name string, v any) error { return d.r.decode(name, v) }

// Set is [Document.Set], and also refuses a name that differs from a
// [Status] field's only in case and a value that does not decode into the
// Go type of the Status field name.
func (d *StatusDocument) Set(name string, value json.RawMessage) error {
	return d.r.set(statusSchema, name, value)
}

// Encode sets member name to the JSON encoding of v (see Set), with
// <, > and & as they are, as the [Store] writes strings.
func (d *StatusDocument) Encode(name string, v any) error {
	return d.r.encode(statusSchema, name, v)
}

// Delete removes member name, if present.
func (d *StatusDocument) Delete(name string) { d.r.delete(name) }

// Clone returns a copy that shares nothing with d.
func (d StatusDocument) Clone() StatusDocument { return StatusDocument{d.r.clone()} }

// Stamp sets updated_at to now, unless the caller set or deleted it (see
// [Stamper]).
func (d *StatusDocument) Stamp(now time.Time) {
	if d.r.stampKept {
		return
	}
	v, _ := json.Marshal(now) // a time always encodes
	if d.r.m == nil {
		d.r.m = make(map[string]json.RawMessage)
	}
	d.r.m["updated_at"] = v
}
