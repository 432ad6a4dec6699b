package config

import (
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

// copier deep-copies a value. On the way in (Set, Load) it also validates:
// unsupported kinds, cycles and section keys that would break dotted lookup
// are reported with the path at which they were found. On the way out
// (getters) the value is known to be valid and check is false.
type copier struct {
	check bool
	depth int
	stack []uintptr // maps and slices on the current path, for cycle detection
	buf   [8]uintptr
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

func (e *valueError) path(key string) string {
	var b strings.Builder
	b.WriteString(key)
	for i := len(e.segs) - 1; i >= 0; i-- {
		b.WriteString(e.segs[i])
	}
	return b.String()
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

// any copies v; section says whether a map[string]any here is a section.
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

func (c *copier) any(v any, section bool) (any, *valueError) {
	switch x := v.(type) {
	case nil, string, bool, int, int64, float64, time.Duration, time.Time,
		int8, int16, int32, uint, uint8, uint16, uint32, uint64, float32,
		complex64, complex128, uintptr:
		return v, nil
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
	if k := rv.Kind(); (k == reflect.Slice || k == reflect.Array || k == reflect.Map) && rv.Len() == 0 {
		if err := c.checkEmpty(rv.Type()); err != nil {
			return rv, err
		}
	}
	switch rv.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.String:
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
		if c.check && !scalarKind(rv.Type().Key().Kind()) {
			return rv, &valueError{msg: "unsupported map key type " + rv.Type().Key().String()}
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
			f := t.Field(i)
			if !f.IsExported() {
				return rv, &valueError{msg: "unsupported struct " + t.String() + ": unexported field " + f.Name}
			}
			cv, err := c.value(rv.Field(i))
			if err != nil {
				return rv, err.push("." + f.Name)
			}
			out.Field(i).Set(cv)
		}
		return out, nil
	}
	// Func, Chan, Pointer, UnsafePointer: shared mutable state or no value
	// at all; a copy cannot make them safe.
	return rv, &valueError{msg: "unsupported type " + rv.Type().String()}
}

// checkEmpty judges a slice, array or map with no elements by its type,
// since there are no elements to judge: whether Set accepts a []func()
// must not depend on its length.
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

func (c *copier) checkEmpty(t reflect.Type) *valueError {
	if !c.check {
		return nil
	}
	if msg := unsupportedType(t, nil); msg != "" {
		return &valueError{msg: msg + " in " + t.String()}
	}
	return nil
}

// unsupportedType says why no value of type t could be stored, or "" if
// some could. It follows value: interfaces are judged by their contents,
// so they pass here. seen breaks the recursion of recursive types.
func unsupportedType(t reflect.Type, seen map[reflect.Type]bool) string {
	if t == timeType || scalarKind(t.Kind()) {
		return ""
	}
	switch t.Kind() {
	case reflect.Uintptr, reflect.Complex64, reflect.Complex128, reflect.Interface:
		return ""
	case reflect.Slice, reflect.Array, reflect.Map, reflect.Struct:
	default:
		return "unsupported type " + t.String()
	}
	if seen[t] {
		return "" // judged where the recursion started
	}
	if seen == nil {
		seen = map[reflect.Type]bool{}
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Map:
		if !scalarKind(t.Key().Kind()) {
			return "unsupported map key type " + t.Key().String()
		}
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				return "unsupported struct " + t.String() + ": unexported field " + f.Name
			}
			if msg := unsupportedType(f.Type, seen); msg != "" {
				return msg
			}
		}
		return ""
	}
	return unsupportedType(t.Elem(), seen)
}

func scalarKind(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.String:
		return true
	}
	return false
}

// equal reports whether two stored values are the same configuration
// value: like reflect.DeepEqual, except that NaN equals NaN (otherwise
// setting NaN twice would notify twice) and time.Time compares with ==
// after a fast Equal check, so a changed location counts as a change.
func equal(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case int:
		y, ok := b.(int)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || math.IsNaN(x) && math.IsNaN(y))
	}
	return equalValue(reflect.ValueOf(a), reflect.ValueOf(b))
}

func equalValue(a, b reflect.Value) bool {
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Float32, reflect.Float64:
		x, y := a.Float(), b.Float()
		return x == y || math.IsNaN(x) && math.IsNaN(y)
	case reflect.Complex64, reflect.Complex128:
		x, y := a.Complex(), b.Complex()
		return x == y || (cmplxNaN(x) && cmplxNaN(y))
	case reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return equalValue(a.Elem(), b.Elem())
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		fallthrough
	case reflect.Array:
		for i := range a.Len() {
			if !equalValue(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		it := a.MapRange()
		for it.Next() {
			bv := b.MapIndex(it.Key())
			if !bv.IsValid() || !equalValue(it.Value(), bv) {
				return false
			}
		}
		return true
	case reflect.Struct:
		if a.Type() == timeType {
			return a.Interface() == b.Interface()
		}
		for i := range a.NumField() {
			if !equalValue(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	}
	return a.Interface() == b.Interface()
}

func cmplxNaN(c complex128) bool { return math.IsNaN(real(c)) || math.IsNaN(imag(c)) }
