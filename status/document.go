package status

import (
	"encoding/json"
	"iter"
	"reflect"
	"time"

	"github.com/agentstate/core/status/internal/jsondoc"
)

// A Document is any JSON object kept as its top-level members, each value's
// bytes exactly as read (numbers beyond float64 survive), as the T of a
// [Store] for programs that change members without knowing their types (a
// CLI, a migration). It refuses a non-object and what the corrupt-document
// rules refuse without a declared field, sorts members by name and stamps
// nothing. Copies share members, as maps do ([Document.Clone]); the zero
// Document is empty and ready.
type Document struct{ r jsondoc.Raw }

// A StatusDocument is a [Document] that follows [Status]'s rules for the
// members Status declares: a Store[StatusDocument] refuses, lays out, stamps
// and compares as a Store[Status] does, and keeps every value's bytes. The
// zero StatusDocument is empty and ready.
type StatusDocument struct{ r jsondoc.Raw }

var (
	anyObject    = jsondoc.NewSchema(nil)
	statusSchema = jsondoc.NewSchema(reflect.TypeFor[Status]())
)

// UnmarshalJSON decodes a JSON object as a Store[Document] does.
func (d *Document) UnmarshalJSON(data []byte) error { return d.r.Unmarshal(anyObject, data) }

// MarshalJSON lays the document out as a Store[Document] does.
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

// Set sets member name to the JSON value, compacted, or keeps the member's
// bytes if they are the same JSON text. It refuses, changing nothing, what
// is not one JSON value and a name or string that is not valid UTF-8.
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

// UnmarshalJSON decodes a JSON object as a Store[StatusDocument] does.
func (d *StatusDocument) UnmarshalJSON(data []byte) error {
	return d.r.Unmarshal(statusSchema, data)
}

// MarshalJSON lays the document out as Store[Status] does.
func (d StatusDocument) MarshalJSON() ([]byte, error) { return d.r.Marshal(statusSchema), nil }

// All is [Document.All], in the order of Store[Status]'s layout.
func (d StatusDocument) All() iter.Seq2[string, json.RawMessage] { return d.r.All(statusSchema) }

// Len returns the number of members.
func (d StatusDocument) Len() int { return d.r.Len() }

// Get is [Document.Get], except that for a member [Status] declares and the
// document omits it returns the value a Go reader sees (the field's zero
// value, such as "0001-01-01T00:00:00Z") and false.
func (d StatusDocument) Get(name string) (json.RawMessage, bool) {
	return d.r.Get(statusSchema, name)
}

// Decode is [Document.Decode].
func (d StatusDocument) Decode(name string, v any) error { return d.r.Decode(name, v) }

// Set is [Document.Set], and also refuses a name that differs from a
// [Status] field's only in case and a value that does not decode into the
// Go type of the Status field name.
func (d *StatusDocument) Set(name string, value json.RawMessage) error {
	return d.r.Set(statusSchema, name, value)
}

// Encode is [Document.Encode], with the checks of Set.
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
