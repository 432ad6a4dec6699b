package status

import (
	"encoding/json"
	"iter"
	"reflect"
	"time"

	"github.com/agentstate/core/status/internal/jsondoc"
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
type Document struct{ r jsondoc.Raw }

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
type StatusDocument struct{ r jsondoc.Raw }

var (
	anyObject    = jsondoc.NewSchema(nil)
	statusSchema = jsondoc.NewSchema(reflect.TypeFor[Status]())
)

// UnmarshalJSON decodes a JSON object, refusing what a Store[Document]
// refuses (see [Document]), and keeps every member's value bytes.
func (d *Document) UnmarshalJSON(data []byte) error { return d.r.Unmarshal(anyObject, data) }

// MarshalJSON lays the document out (see [Document]), without the final
// newline.
func (d Document) MarshalJSON() ([]byte, error) { return d.r.Marshal(anyObject), nil }

// All yields the members sorted by name, values verbatim. The values must
// not be modified.
func (d Document) All() iter.Seq2[string, json.RawMessage] { return d.r.All(anyObject) }

// Len returns the number of members.
func (d Document) Len() int { return d.r.Len() }

// Get returns the value of member name as the document holds it, and
// whether it holds it. The value must not be modified.
func (d Document) Get(name string) (json.RawMessage, bool) { return d.r.Get(anyObject, name) }

// Decode decodes the value of member name into v, as encoding/json
// would; an absent member leaves v unchanged.
func (d Document) Decode(name string, v any) error { return d.r.Decode(name, v) }

// Set sets member name to the JSON value. It refuses, changing nothing, a
// value that is not one JSON value, and a name or string that is not valid
// UTF-8 (or holds a lone surrogate). The value is stored compacted, or, if
// the member already holds the same compacted JSON text, its bytes are
// kept.
func (d *Document) Set(name string, value json.RawMessage) error {
	return d.r.Set(anyObject, name, value)
}

// Encode sets member name to the JSON encoding of v (see Set), with
// <, > and & as they are, as the [Store] writes strings.
func (d *Document) Encode(name string, v any) error { return d.r.Encode(anyObject, name, v) }

// Delete removes member name, if present.
func (d *Document) Delete(name string) { d.r.Delete(name) }

// Clone returns a copy that shares nothing with d.
func (d Document) Clone() Document { return Document{d.r.Clone()} }

// UnmarshalJSON decodes a JSON object, refusing what Store[Status]
// refuses (see [StatusDocument]), and keeps every member's value bytes.
func (d *StatusDocument) UnmarshalJSON(data []byte) error {
	return d.r.Unmarshal(statusSchema, data)
}

// MarshalJSON lays the document out as Store[Status] does (see
// [StatusDocument]), without the final newline.
func (d StatusDocument) MarshalJSON() ([]byte, error) { return d.r.Marshal(statusSchema), nil }

// All yields the members in layout order: those [Status] declares in its
// order, then the others sorted by name; values verbatim. The values must
// not be modified.
func (d StatusDocument) All() iter.Seq2[string, json.RawMessage] { return d.r.All(statusSchema) }

// Len returns the number of members.
func (d StatusDocument) Len() int { return d.r.Len() }

// Get returns the value of member name as the document holds it, and
// whether it holds it. For a member that [Status] declares and the document
// omits, Get returns the value a Go reader of the document sees: the
// field's zero value (0, "", "0001-01-01T00:00:00Z"), and false. The
// value must not be modified.
func (d StatusDocument) Get(name string) (json.RawMessage, bool) {
	return d.r.Get(statusSchema, name)
}

// Decode decodes the value of member name into v, as encoding/json
// would; an absent member leaves v unchanged.
func (d StatusDocument) Decode(name string, v any) error { return d.r.Decode(name, v) }

// Set is [Document.Set], and also refuses a name that differs from a
// [Status] field's only in case and a value that does not decode into the
// Go type of the Status field name.
func (d *StatusDocument) Set(name string, value json.RawMessage) error {
	return d.r.Set(statusSchema, name, value)
}

// Encode sets member name to the JSON encoding of v (see Set), with
// <, > and & as they are, as the [Store] writes strings.
func (d *StatusDocument) Encode(name string, v any) error {
	return d.r.Encode(statusSchema, name, v)
}

// Delete removes member name, if present.
func (d *StatusDocument) Delete(name string) { d.r.Delete(name) }

// Clone returns a copy that shares nothing with d.
func (d StatusDocument) Clone() StatusDocument { return StatusDocument{d.r.Clone()} }

// Stamp sets updated_at to now, unless the caller set or deleted it (see
// [Stamper]).
func (d *StatusDocument) Stamp(now time.Time) { d.r.Stamp(now) }
