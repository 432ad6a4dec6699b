// Package jsondoc is the JSON document layer under package status: it
// decodes a document into a Go value while keeping, byte for byte, the
// members the value's type does not declare; refuses documents that other
// languages would read differently (see [Codec.Decode]); lays documents out
// deterministically; and keeps documents as raw members for programs that
// do not know their types ([Raw]). It knows types only as [reflect.Type]:
// package status adds the type parameters.
package jsondoc

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"hash/maphash"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// A Codec holds what a document store needs to know about a type to keep
// unknown members: whether it is a struct and the JSON names it declares.
// The values it takes and returns (as any) are pointers to, or values of,
// that type.
type Codec struct {
	typ      reflect.Type
	owner    bool // the type decodes and encodes itself: see selfCoded
	isStruct bool
	fields   *structFields // the type's JSON names and field types, if a struct

	// flat reports that the type holds only values that encoding/json can
	// round trip exactly (see flatType); only then is recent used.
	flat bool
	// recent holds documents this codec encoded recently, in slots chosen
	// by a hash of their bytes. The next Mutate of a document usually
	// starts from exactly the bytes this process wrote last (the next call
	// in a group-commit batch, or this process's next call, also when it
	// writes many documents in turn), and decoding them was most of a
	// batched call's CPU cost.
	recent [recentSlots]atomic.Pointer[encoded]
	seed   maphash.Seed
}

// recentSlots bounds how many encodings a codec keeps (about 1 KB each for
// a status document).
const recentSlots = 64

// maxRemembered bounds the size of an encoding worth keeping: the cache
// saves a status document's decode, and must not pin recentSlots large
// documents in memory.
const maxRemembered = 64 << 10

func (c *Codec) slot(raw []byte) *atomic.Pointer[encoded] {
	return &c.recent[maphash.Bytes(c.seed, raw)%recentSlots]
}

// encoded is an immutable record of one encoding: raw = encode(compact,
// unknown), compact = marshal(value), and decoding raw yields exactly value
// and unknown (checked by exact before it is recorded).
type encoded struct {
	raw     []byte
	value   any // a value of the codec's type
	unknown map[string]json.RawMessage
	compact []byte
}

var codecs sync.Map // reflect.Type -> *Codec

// For returns the Codec of type t, shared by all its callers.
func For(t reflect.Type) *Codec {
	if c, ok := codecs.Load(t); ok {
		return c.(*Codec)
	}
	c := &Codec{typ: t, owner: selfCoded(t), seed: maphash.MakeSeed()}
	c.isStruct = t.Kind() == reflect.Struct && !c.owner
	if c.isStruct {
		c.fields = fieldsOf(t)
		c.flat = flatType(t)
	}
	actual, _ := codecs.LoadOrStore(t, c)
	return actual.(*Codec)
}

// Reuses reports whether the codec records its encodings for [Codec.Lookup]
// (see flatType).
func (c *Codec) Reuses() bool { return c.flat }

// selfCoded reports whether t has both a MarshalJSON and an UnmarshalJSON
// method: such a type owns the whole document. Its UnmarshalJSON gets the
// file's bytes, and its MarshalJSON's bytes are written as they are (with a
// final newline): no layout is imposed and no field is kept apart, so that
// a type holding raw values can keep them byte for byte.
func selfCoded(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.Implements(reflect.TypeFor[json.Marshaler]()) && p.Implements(reflect.TypeFor[json.Unmarshaler]())
}

// collectNames records the JSON object keys that encoding/json maps to
// fields of struct type t, with the fields' types, following embedded
// structs. It reads the tags rather than marshalling a value so that
// omitempty fields count as known.
func collectNames(t reflect.Type, known map[string]reflect.Type, depth int) {
	if depth > 16 { // recursive embedding through pointers
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				collectNames(ft, known, depth+1)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		known[name] = f.Type
	}
}

// Marshal returns the compact encoding of v, a pointer to a value of the
// codec's type (without HTML escaping, so that URLs stay readable in the
// file).
func (c *Codec) Marshal(v any) ([]byte, error) {
	if c.owner {
		out, err := v.(json.Marshaler).MarshalJSON()
		if err == nil && !json.Valid(out) {
			err = errors.New("MarshalJSON returned invalid JSON")
		}
		return out, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Encode lays out a document: compact (from [Codec.Marshal]) indented by
// two spaces, then the unknown members sorted by name with their value
// bytes exactly as they were read, then a newline. A type that encodes
// itself gets its bytes as they are, with a final newline.
func (c *Codec) Encode(compact []byte, unknown map[string]json.RawMessage) []byte {
	if c.owner {
		out := slices.Clip(compact) // MarshalJSON's bytes as they are
		if !bytes.HasSuffix(out, []byte("\n")) {
			out = append(out, '\n')
		}
		return out
	}
	buf := make([]byte, 0, len(compact)+len(compact)/4+64)
	buf = appendIndent(buf, compact)
	if len(unknown) > 0 {
		empty := bytes.Equal(buf, []byte("{}"))
		if empty {
			buf = buf[:1] // "{"
		} else {
			buf = buf[:len(buf)-2] // drop "\n}"
		}
		for i, name := range slices.Sorted(maps.Keys(unknown)) {
			if i > 0 || !empty {
				buf = append(buf, ',')
			}
			buf = append(buf, "\n  "...)
			key, _ := json.Marshal(name) // a string always encodes
			buf = append(buf, key...)
			buf = append(buf, ": "...)
			buf = append(buf, unknown[name]...)
		}
		buf = append(buf, "\n}"...)
	}
	return append(buf, '\n')
}

// Remember records raw, the encoding of v (a pointer to a value of the
// codec's type) with unknown, for reuse by [Codec.Lookup], if decoding raw
// would give back exactly *v.
func (c *Codec) Remember(raw []byte, v any, unknown map[string]json.RawMessage, compact []byte) {
	if c.flat && len(raw) <= maxRemembered && exact(reflect.ValueOf(v).Elem()) {
		c.slot(raw).Store(&encoded{raw: raw, value: reflect.ValueOf(v).Elem().Interface(), unknown: unknown, compact: compact})
	}
}

// Lookup returns the value (of the codec's type), unknown members and
// compact encoding recorded for exactly the bytes cur, if any. They are
// shared: the caller must copy the value and not modify the others.
func (c *Codec) Lookup(cur []byte) (v any, unknown map[string]json.RawMessage, compact []byte, ok bool) {
	if !c.flat || cur == nil {
		return nil, nil, nil, false
	}
	e := c.slot(cur).Load()
	if e == nil || !bytes.Equal(e.raw, cur) {
		return nil, nil, nil, false
	}
	return e.value, e.unknown, e.compact, true
}

var (
	timeType = reflect.TypeFor[time.Time]()
	custom   = []reflect.Type{
		reflect.TypeFor[json.Marshaler](), reflect.TypeFor[json.Unmarshaler](),
		reflect.TypeFor[encoding.TextMarshaler](), reflect.TypeFor[encoding.TextUnmarshaler](),
	}
)

// flatType reports whether every value of t is plain data that
// encoding/json encodes field by field: booleans, numbers, strings,
// time.Time, and arrays and structs of those, with no pointers, maps,
// slices, interfaces, custom (un)marshalers, embedded, unexported or
// skipped ("-") fields. For such types decoding an encoding gives back the
// value itself, given the per-value conditions checked by exact.
func flatType(t reflect.Type) bool {
	if t == timeType {
		return true
	}
	for _, i := range custom {
		if t.Implements(i) || reflect.PointerTo(t).Implements(i) {
			return false
		}
	}
	switch t.Kind() {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	case reflect.Array:
		return flatType(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() || f.Anonymous || f.Tag.Get("json") == "-" || !flatType(f.Type) {
				return false
			}
		}
		return true
	}
	return false
}

// exact reports whether v (of a flat type) survives encoding and decoding
// unchanged: strings must be valid UTF-8 (the encoder replaces invalid
// bytes) and times must be UTC without a monotonic reading (the decoder
// gives other zones a new fixed Location and never a monotonic reading).
func exact(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		return utf8.ValidString(v.String())
	case reflect.Array:
		for i := range v.Len() {
			if !exact(v.Index(i)) {
				return false
			}
		}
	case reflect.Struct:
		if v.Type() == timeType {
			t := v.Interface().(time.Time)
			return t.Location() == time.UTC && t == t.Round(0)
		}
		for i := range v.NumField() {
			if !exact(v.Field(i)) {
				return false
			}
		}
	}
	return true
}

// Decode parses cur into v, a pointer to a zero value of the codec's type,
// and returns the object members the type does not declare. nil cur (no
// document) leaves v zero. A document that cannot be decoded, or that
// another language would read differently (see strict.go), is an error
// placed at a byte offset of cur (see [Offset]).
func (c *Codec) Decode(cur []byte, v any) (unknown map[string]json.RawMessage, err error) {
	if cur == nil {
		return nil, nil
	}
	if len(bytes.TrimSpace(cur)) == 0 {
		return nil, errEmpty
	}
	if err := json.Unmarshal(cur, v); err != nil {
		return nil, err
	}
	if !c.isStruct {
		start := skipSpace(cur, 0)
		if err := checkValue(c.typ, cur[start:]); err != nil {
			return nil, placed(err, start, start)
		}
		return nil, nil
	}
	// Unmarshal accepted cur, so it is valid JSON; for a struct it is an
	// object or the literal null.
	if string(bytes.TrimSpace(cur)) == "null" {
		return nil, errNull
	}
	seen := make(map[string]bool, len(c.fields.names))
	err = members(cur, func(key string, value []byte) error {
		known, err := c.fields.member(seen, key, value)
		if err == nil && !known {
			if unknown == nil {
				unknown = make(map[string]json.RawMessage)
			}
			unknown[key] = value
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return unknown, nil
}

var (
	errEmpty = errors.New("empty document")
	errNull  = errors.New("document is null, want a JSON object")
)

// Offset returns the byte offset of the document at which err, from
// [Codec.Decode] or [Raw.Unmarshal], found it wrong (0 if it does not say).
func Offset(err error) int64 {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var at *atError
	switch {
	case errors.As(err, &at):
		return at.Offset
	case errors.As(err, &se):
		return se.Offset
	case errors.As(err, &te):
		return te.Offset
	}
	return 0
}
