package config

import (
	"cmp"
	"encoding"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// maxDepth bounds the nesting of stored values: every section and
// non-empty list on the way from the root to a value counts one level,
// the sections a dotted key passes through included, so no stored key has
// more than maxDepth segments. It keeps a pathological value or key from
// exhausting the stack or costing time quadratic in its size (the dotted
// index holds every prefix); real configuration is a few levels deep.
const maxDepth = 256

var timeType = reflect.TypeFor[time.Time]()

// copier deep-copies a value. On the way in (Set, FromEnv) it also
// validates: what Set refuses is reported with the path at which it was
// found. On the way out (getters) the value is known to be valid and
// check is false.
type copier struct {
	check bool
	depth int
	stack []uintptr // maps and slices on the current path, for cycle detection
	buf   [8]uintptr

	lastType     reflect.Type // the type marshals last judged, and its answer
	lastMarshals bool
}

// valueError is built bottom-up: each level prepends its path segment while
// the error travels back to the caller, so the success path never builds a
// path string.
type valueError struct {
	segs     []string // path segments, innermost first
	msg      string
	sentinel error // what the *Error built from it wraps; nil: the caller's default
}

// Error returns the message without the path, which the *Error built
// from it carries.
func (e *valueError) Error() string { return e.msg }

func (e *valueError) push(seg string) *valueError {
	e.segs = append(e.segs, seg)
	return e
}

// path is the place of the problem: at (the key of the value, or "" for
// a whole document) followed by the segments.
func (e *valueError) path(at string) string {
	var b strings.Builder
	b.WriteString(at)
	for i := len(e.segs) - 1; i >= 0; i-- {
		b.WriteString(e.segs[i])
	}
	if at == "" {
		return strings.TrimPrefix(b.String(), ".")
	}
	return b.String()
}

// toError is the *Error of op on key for e, whose value sits at at (see
// path). It wraps e's sentinel, or def if e has none.
func (e *valueError) toError(op, key, at string, def error) *Error {
	return &Error{Op: op, Key: key, Path: e.path(at), Err: fmt.Errorf("%w: %s", cmp.Or(e.sentinel, def), e.msg)}
}

// copyIn returns a deep copy of v, or an error naming the offending path.
// v itself is stored at a key of depth segments, so a map[string]any v is a
// section and so are the map[string]any values inside it (but not those
// inside slices): their keys must be valid key segments.
func copyIn(v any, depth int) (any, *valueError) {
	c := copier{check: true, depth: depth}
	c.stack = c.buf[:0]
	return c.any(v, true)
}

// copyOut returns a deep copy of a stored (already validated) value.
// Scalars come back as they are, without allocating.
func copyOut(v any) any {
	if immutable(v) {
		return v
	}
	var c copier
	out, _ := c.any(v, false)
	return out
}

// immutable reports whether v is of a common type that cannot be mutated
// through a copy of the interface value, so it needs no copying.
func immutable(v any) bool {
	switch v.(type) {
	case nil, string, bool, int, int64, float64, time.Duration, time.Time,
		int8, int16, int32, uint, uint8, uint16, uint32, uint64, float32:
		return true
	}
	return false
}

// writable says why Save could not write the immutable scalar v, or nil.
func writable(v any) *valueError {
	switch x := v.(type) {
	case float64:
		return finite(x)
	case float32:
		return finite(float64(x))
	case time.Time:
		if _, err := x.MarshalJSON(); err != nil {
			return &valueError{msg: err.Error()}
		}
	}
	return nil
}

// finite refuses NaN and ±Inf, which JSON cannot hold.
func finite(f float64) *valueError {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return &valueError{msg: fmt.Sprint(f, " is not a finite number")}
	}
	return nil
}

// any copies v; section says whether a map[string]any here is a section.
func (c *copier) any(v any, section bool) (any, *valueError) {
	if immutable(v) {
		if c.check {
			return v, writable(v)
		}
		return v, nil
	}
	switch x := v.(type) {
	case map[string]any:
		return c.section(x, section)
	case []any:
		return c.anySlice(x)
	case []string:
		return slices.Clone(x), nil
	case map[string]string:
		return maps.Clone(x), nil // copies the table wholesale, no rehashing
	}
	rv, err := c.value(reflect.ValueOf(v))
	if err != nil {
		return nil, err
	}
	return rv.Interface(), nil
}

func (c *copier) enter(p uintptr) *valueError {
	if !c.check {
		return nil
	}
	c.depth++
	if c.depth > maxDepth {
		return &valueError{msg: fmt.Sprintf("nested deeper than %d levels", maxDepth)}
	}
	for _, q := range c.stack {
		if q == p {
			return &valueError{msg: "cycle: value contains itself"}
		}
	}
	c.stack = append(c.stack, p)
	return nil
}

func (c *copier) leave() {
	if c.check {
		c.depth--
		c.stack = c.stack[:len(c.stack)-1]
	}
}

func (c *copier) section(m map[string]any, section bool) (any, *valueError) {
	if m == nil {
		return m, nil
	}
	if err := c.enter(reflect.ValueOf(m).Pointer()); err != nil {
		return nil, err
	}
	defer c.leave()
	// Clone the table wholesale (no rehashing), then replace the values
	// that are themselves mutable with their copies.
	out := maps.Clone(m)
	for k, v := range m {
		if section && c.check {
			if msg := checkSegment(k); msg != "" {
				return nil, &valueError{msg: msg, segs: []string{"." + k}}
			}
		}
		if immutable(v) {
			if c.check {
				if err := writable(v); err != nil {
					return nil, err.push("." + k)
				}
			}
			continue
		}
		cv, err := c.any(v, section)
		if err != nil {
			return nil, err.push("." + k)
		}
		out[k] = cv
	}
	return out, nil
}

func (c *copier) anySlice(s []any) (any, *valueError) {
	if s == nil {
		return s, nil
	}
	if len(s) > 0 {
		if err := c.enter(reflect.ValueOf(s).Pointer()); err != nil {
			return nil, err
		}
		defer c.leave()
	}
	out := make([]any, len(s))
	for i, v := range s {
		cv, err := c.any(v, false)
		if err != nil {
			return nil, err.push("[" + strconv.Itoa(i) + "]")
		}
		out[i] = cv
	}
	return out, nil
}

// value copies by reflection the kinds the type switch in any does not
// name: named scalar types, typed slices, arrays, maps and structs.
func (c *copier) value(rv reflect.Value) (reflect.Value, *valueError) {
	if c.check {
		if err := c.checkValue(rv); err != nil {
			return rv, err
		}
	}
	switch rv.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.String:
		return rv, nil
	case reflect.Interface:
		if rv.IsNil() {
			return rv, nil
		}
		cv, err := c.value(rv.Elem())
		if err != nil {
			return rv, err
		}
		out := reflect.New(rv.Type()).Elem()
		out.Set(cv)
		return out, nil
	case reflect.Slice:
		if rv.IsNil() {
			return rv, nil
		}
		if rv.Len() > 0 {
			if err := c.enter(rv.Pointer()); err != nil {
				return rv, err
			}
			defer c.leave()
		}
		out := reflect.MakeSlice(rv.Type(), rv.Len(), rv.Len())
		return out, c.elems(rv, out)
	case reflect.Array:
		out := reflect.New(rv.Type()).Elem()
		return out, c.elems(rv, out)
	case reflect.Map:
		if rv.IsNil() {
			return rv, nil
		}
		if err := c.enter(rv.Pointer()); err != nil {
			return rv, err
		}
		defer c.leave()
		out := reflect.MakeMapWithSize(rv.Type(), rv.Len())
		it := rv.MapRange()
		for it.Next() {
			cv, err := c.value(it.Value())
			if err != nil {
				return rv, err.push("[" + fmt.Sprint(it.Key().Interface()) + "]")
			}
			out.SetMapIndex(it.Key(), cv)
		}
		return out, nil
	case reflect.Struct:
		t := rv.Type()
		if t == timeType {
			return rv, nil // immutable by contract of package time
		}
		out := reflect.New(t).Elem()
		for i := range t.NumField() {
			cv, err := c.value(rv.Field(i))
			if err != nil {
				return rv, err.push("." + t.Field(i).Name)
			}
			out.Field(i).Set(cv)
		}
		return out, nil
	}
	return rv, nil // unreachable: checkValue refused every other kind on the way in
}

// elems copies the elements of the slice or array rv into out.
func (c *copier) elems(rv, out reflect.Value) *valueError {
	for i := range rv.Len() {
		cv, err := c.value(rv.Index(i))
		if err != nil {
			return err.push("[" + strconv.Itoa(i) + "]")
		}
		out.Index(i).Set(cv)
	}
	return nil
}

// checkValue refuses, before rv is copied, what Set does not store (see
// badType), an empty container whose elements could not be stored (so that
// an empty []func() is refused like a full one), NaN and ±Inf, and a value
// whose own MarshalJSON or MarshalText fails.
func (c *copier) checkValue(rv reflect.Value) *valueError {
	t := rv.Type()
	if msg := badType(t); msg != "" {
		return &valueError{msg: msg}
	}
	switch rv.Kind() {
	case reflect.Float32, reflect.Float64:
		return finite(rv.Float())
	case reflect.Slice, reflect.Array, reflect.Map:
		if rv.Len() == 0 {
			if msg := unsupportedType(t, nil); msg != "" {
				return &valueError{msg: msg + " in " + t.String()}
			}
		}
	}
	if c.marshals(t) {
		if msg := marshalError(rv); msg != "" {
			return &valueError{msg: msg}
		}
	}
	return nil
}

// badType says why no value of type t can be stored, or "", judging t
// alone: its elements and fields are judged where they are copied.
func badType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Func, reflect.Chan, reflect.Pointer, reflect.UnsafePointer:
		// Shared mutable state, or no value at all: a copy cannot make them safe.
		return "unsupported type " + t.String()
	case reflect.Complex64, reflect.Complex128:
		return "unsupported type " + t.String() + ": JSON has no complex numbers"
	case reflect.Map:
		if !keyKind(t.Key().Kind()) {
			return "unsupported map key type " + t.Key().String() + ": keys must be strings or integers"
		}
	case reflect.Struct:
		if t == timeType {
			return "" // its fields are unexported, but it is immutable
		}
		for i := range t.NumField() {
			if f := t.Field(i); !f.IsExported() {
				return "unsupported struct " + t.String() + ": unexported field " + f.Name
			}
		}
	}
	return ""
}

// keyKind reports whether Save can write map keys of kind k.
func keyKind(k reflect.Kind) bool {
	switch k {
	case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// unsupportedType is badType for t and, recursively, the types of its
// elements and fields. Interfaces are judged by their contents, so they
// pass here. seen breaks the recursion of recursive types.
func unsupportedType(t reflect.Type, seen map[reflect.Type]bool) string {
	if msg := badType(t); msg != "" || t == timeType || seen[t] {
		return msg
	}
	if seen == nil {
		seen = map[reflect.Type]bool{}
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			if msg := unsupportedType(t.Field(i).Type, seen); msg != "" {
				return msg
			}
		}
	case reflect.Slice, reflect.Array, reflect.Map:
		return unsupportedType(t.Elem(), seen)
	}
	return ""
}

var (
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	jsonNumberType    = reflect.TypeFor[json.Number]()
)

// marshals reports whether encoding/json writes a value of type t with
// code that can fail: a MarshalJSON or MarshalText method (of T or *T),
// the validation of a json.Number, or MarshalText on integer map keys.
// The answer for the last type asked is kept: slices repeat one type.
func (c *copier) marshals(t reflect.Type) bool {
	if t == c.lastType {
		return c.lastMarshals
	}
	p := reflect.PointerTo(t)
	m := t.Kind() != reflect.Interface &&
		(p.Implements(jsonMarshalerType) || p.Implements(textMarshalerType) || t == jsonNumberType ||
			t.Kind() == reflect.Map && t.Key().Kind() != reflect.String && t.Key().Implements(textMarshalerType))
	c.lastType, c.lastMarshals = t, m
	return m
}

// marshalError says why encoding/json cannot write rv, or "". It encodes
// through a pointer, so that methods of *T run as they do for the elements
// of a slice, and it turns a panic in them into an error here rather than
// in Save.
func marshalError(rv reflect.Value) (msg string) {
	p := reflect.New(rv.Type())
	p.Elem().Set(rv)
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprintf("encoding %s to JSON panicked: %v", rv.Type(), r)
		}
	}()
	if _, err := json.Marshal(p.Interface()); err != nil {
		return err.Error()
	}
	return ""
}
