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

// A Document is a status document as its raw JSON members, for programs
// that must see, keep and change members Status does not declare without
// knowing their types (a CLI, a migration, a proxy). Use it as the T of a
// [Store]:
//
//	doc, err := status.NewStore[status.Document](path).Mutate(ctx, func(d *status.Document) error {
//		return d.Set("runs", json.RawMessage("3"))
//	})
//
// A Store[Document] reads, lays out, stamps and compares the document as a
// Store[Status] does, member values aside:
//
//   - Decoding refuses what Store[Status] refuses (see the package doc): a
//     document that is not an object (null included), a repeated name, a
//     name differing from a Status field's only in case, invalid UTF-8 or
//     a lone surrogate in a name or a Status field, and a Status field
//     whose value does not decode into its Go type.
//   - Every member's value is kept as its bytes, exactly as read, so that
//     numbers beyond float64 and unknown members survive any change to
//     other members.
//   - The layout is deterministic: two-space indent, the members Status
//     declares in its order, then the others sorted by name, each value
//     verbatim, and a final newline (the Store adds it).
//   - When anything changed, Stamp sets updated_at to the time of the
//     write, unless the caller set or deleted updated_at itself. When
//     nothing changed, nothing is written: Set keeps a member's bytes
//     when the new value is the same JSON text once compacted.
//
// A Document refers to its members as a map does: copies share them (see
// Clone). The zero Document is empty and ready to use.
type Document struct {
	m map[string]json.RawMessage
	// stampKept is set when the caller sets or deletes updated_at: Stamp
	// leaves it as the caller made it.
	stampKept bool
}

// The members [Status] declares, in its order, with their Go types and the
// values a Go reader sees when they are absent.
var statusMembers = listStatusMembers()

type statusMember struct {
	name string
	typ  reflect.Type
	zero json.RawMessage
}

func listStatusMembers() []statusMember {
	t := reflect.TypeFor[Status]()
	var ms []statusMember
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		zero, _ := json.Marshal(reflect.Zero(f.Type).Interface()) // Status's fields always encode
		ms = append(ms, statusMember{name: name, typ: f.Type, zero: zero})
	}
	return ms
}

func statusMemberNamed(name string) (statusMember, bool) {
	i := slices.IndexFunc(statusMembers, func(m statusMember) bool { return m.name == name })
	if i < 0 {
		return statusMember{}, false
	}
	return statusMembers[i], true
}

var errNullDocument = errors.New("document is null, want a JSON object")

// UnmarshalJSON decodes a JSON object, refusing what Store[Status]
// refuses (see [Document]), and keeps every member's value bytes.
func (d *Document) UnmarshalJSON(data []byte) error {
	if string(bytes.TrimSpace(data)) == "null" {
		return errNullDocument
	}
	var st Status
	if err := json.Unmarshal(data, &st); err != nil {
		return err // not an object, or a Status field of the wrong type
	}
	data = bytes.Clone(data)
	fields := fieldsOf(reflect.TypeFor[Status]())
	seen := make(map[string]bool)
	m := make(map[string]json.RawMessage)
	err := members(data, func(name string, value []byte) error {
		if _, err := fields.member(seen, name, value); err != nil {
			return err
		}
		m[name] = value
		return nil
	})
	if err != nil {
		return err
	}
	*d = Document{m: m}
	return nil
}

// MarshalJSON lays the document out (see [Document]), without the final
// newline.
func (d Document) MarshalJSON() ([]byte, error) {
	size := 2
	for name, v := range d.m {
		size += len(name) + len(v) + 8
	}
	buf := make([]byte, 0, size)
	buf = append(buf, '{')
	for name, value := range d.All() {
		if len(buf) > 1 {
			buf = append(buf, ',')
		}
		key, _ := json.Marshal(name) // a string always encodes
		buf = append(buf, "\n  "...)
		buf = append(buf, key...)
		buf = append(buf, ": "...)
		buf = append(buf, value...)
	}
	if len(d.m) > 0 {
		buf = append(buf, '\n')
	}
	return append(buf, '}'), nil
}

// All yields the members in layout order (see [Document]), values verbatim.
// The values must not be modified.
func (d Document) All() iter.Seq2[string, json.RawMessage] {
	return func(yield func(string, json.RawMessage) bool) {
		for _, f := range statusMembers {
			if v, ok := d.m[f.name]; ok && !yield(f.name, v) {
				return
			}
		}
		var others []string
		for name := range d.m {
			if _, declared := statusMemberNamed(name); !declared {
				others = append(others, name)
			}
		}
		slices.Sort(others)
		for _, name := range others {
			if !yield(name, d.m[name]) {
				return
			}
		}
	}
}

// Len returns the number of members.
func (d Document) Len() int { return len(d.m) }

// Get returns the value of member name as the document holds it, and
// whether it holds it. For a member that [Status] declares and the document
// omits, Get returns the value a Go reader of the document sees: the
// field's zero value (0, "", "0001-01-01T00:00:00Z"), and false. The
// value must not be modified.
func (d Document) Get(name string) (json.RawMessage, bool) {
	if v, ok := d.m[name]; ok {
		return v, true
	}
	if f, declared := statusMemberNamed(name); declared {
		return f.zero, false
	}
	return nil, false
}

// Decode decodes the value of member name into v, as encoding/json
// would; an absent member leaves v unchanged.
func (d Document) Decode(name string, v any) error {
	raw, ok := d.m[name]
	if !ok {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("member %q: %w", name, err)
	}
	return nil
}

// Set sets member name to the JSON value. It refuses, changing nothing, a
// value that is not one JSON value, a name or string that is not valid
// UTF-8 (or holds a lone surrogate), a name that differs from a [Status]
// field's only in case, and a value that does not decode into the Go type
// of the Status field name. The value is stored compacted, or, if the
// member already holds the same compacted JSON text, its bytes are kept.
func (d *Document) Set(name string, value json.RawMessage) error {
	if err := checkMember(name, value); err != nil {
		return err
	}
	var compact bytes.Buffer
	json.Compact(&compact, value) // checkMember checked it
	if old, ok := d.m[name]; ok && sameJSON(old, compact.Bytes()) {
		return nil
	}
	if d.m == nil {
		d.m = make(map[string]json.RawMessage)
	}
	d.m[name] = bytes.Clone(compact.Bytes())
	d.stampKept = d.stampKept || name == "updated_at"
	return nil
}

// Encode sets member name to the JSON encoding of v (see Set), with
// <, > and & as they are, as the [Store] writes strings.
func (d *Document) Encode(name string, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("member %q: %w", name, err)
	}
	return d.Set(name, buf.Bytes())
}

// Delete removes member name, if present.
func (d *Document) Delete(name string) {
	if _, ok := d.m[name]; ok {
		delete(d.m, name)
		d.stampKept = d.stampKept || name == "updated_at"
	}
}

// Clone returns a copy that shares nothing with d.
func (d Document) Clone() Document {
	c := Document{stampKept: d.stampKept}
	if d.m != nil {
		c.m = maps.Clone(d.m)
	}
	return c
}

// Stamp sets updated_at to now, unless the caller set or deleted it (see
// [Stamper]).
func (d *Document) Stamp(now time.Time) {
	if d.stampKept {
		return
	}
	v, _ := json.Marshal(now) // a time always encodes
	if d.m == nil {
		d.m = make(map[string]json.RawMessage)
	}
	d.m["updated_at"] = v
}

// checkMember applies Set's rules to one member.
func checkMember(name string, value json.RawMessage) error {
	if !utf8.ValidString(name) {
		return fmt.Errorf("member name %q is not valid UTF-8", name)
	}
	if f := fieldsOf(reflect.TypeFor[Status]()).caseVariant(name); f != "" && f != name {
		return fmt.Errorf("member %q: differs from field %q only in case (Go would read it as %q, other languages would not)", name, f, f)
	}
	if !json.Valid(value) {
		return fmt.Errorf("member %q: %s is not a JSON value", name, value)
	}
	if err := strictStrings(value); err != nil {
		return fmt.Errorf("member %q: %w", name, err)
	}
	f, declared := statusMemberNamed(name)
	if !declared {
		return nil
	}
	if json.Unmarshal(value, reflect.New(f.typ).Interface()) != nil {
		return fmt.Errorf("member %q: %s does not decode into its Status field, a Go %s", name, value, f.typ)
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
