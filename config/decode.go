package config

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Decode returns the value at key converted to a T, typically a section
// into a struct:
//
//	type Dispatch struct {
//		MaxWorkers int           `config:"max_workers"`
//		Timeout    time.Duration // matches "timeout", "Timeout", ...
//		Queues     []string
//	}
//	d, err := config.Decode[Dispatch](c.Snapshot(), "agents.dispatch")
//
// The result is built from a deep copy: mutating it, or anything it
// holds, never changes what is stored.
//
// Every read converts this way: the getters and [Snapshot.Lookup] make
// the same conversions. A string here is a value of any string type.
//
//   - int and the other integer types: any integer in range; a float
//     with no fractional part in range (JSON decoding gives a float64 for
//     an integer beyond int64's range); a string in base 10, what FromEnv
//     stores for a new key.
//   - float64, float32: any integer (rounded to the nearest float) or float
//     in range; a string that strconv.ParseFloat accepts, except NaN and
//     ±Inf.
//   - bool: a bool, of any bool type; a string that strconv.ParseBool
//     accepts ("true", "0", ...).
//   - string: a string. Numbers are not formatted: asking for a string
//     where a number is stored is an error.
//   - time.Duration: a Duration; a string time.ParseDuration accepts
//     ("30s"); an integer, or a whole float, as nanoseconds (what Save
//     writes for a Duration).
//   - time.Time: a Time; a string in RFC 3339 (what Save writes for a Time).
//   - a type implementing encoding.TextUnmarshaler (slog.Level, net.IP,
//     ...): a string through UnmarshalText; another value as the type's
//     kind takes it (a number for a slog.Level).
//   - struct: from a section. Each exported field is filled from the key
//     named by its `config` tag, else its `json` tag, else its name;
//     an exact match wins over a case-insensitive one. A tag of "-"
//     skips the field. Fields of embedded structs are filled as if they
//     were the outer struct's. Keys that name no field are ignored (with
//     [RejectUnknownKeys], refused); fields whose key is missing keep
//     their zero value.
//   - map with string keys: from a section or another map with string
//     keys, one entry per key.
//   - slice: from a list; array: from a list of exactly its length.
//   - pointer: a new value, decoded; nil stored gives a nil pointer.
//   - any: a deep copy of the stored value, as [Snapshot.Get] returns.
//
// A stored nil (JSON null, an empty YAML value) gives the zero value,
// whatever T is, in a list or section too: a null in a list of strings
// gives "". Errors are *Error values naming the key and, in Path, where
// inside it the problem is: ErrInvalidKey for a key that is not one (see
// Keys in the package doc; "" too: [DecodeAll] decodes the whole
// configuration), ErrNotFound for a missing key (or a nil s),
// ErrConversion for a value that does not fit, ErrUnsupported for a T that
// a value other than nil cannot be decoded into (func, chan, map with
// non-string keys, ...), and, with [RejectUnknownKeys], ErrUnknownKey for
// each key that no field takes.
//
// Decode is a function because Go methods cannot have type parameters.
func Decode[T any](s *Snapshot, key string, opts ...Option) (T, error) {
	var out T
	if s == nil {
		if err := checkDotted(key); err != nil {
			return out, &Error{Op: "decode", Key: key, Err: err}
		}
		return out, &Error{Op: "decode", Key: key, Err: fmt.Errorf("%w: nil Snapshot", ErrNotFound)}
	}
	v, ok := s.flat[key]
	if !ok {
		return out, missing("decode", key)
	}
	if convertFast(&out, v) {
		return out, nil
	}
	// A value of its own, so that out, which reflection would move to the
	// heap, stays on the stack on the path above.
	p := new(T)
	if err := decodeValue(reflect.ValueOf(p).Elem(), copyOut(v)); err != nil {
		var zero T
		return zero, err.toError("decode", key, key, ErrConversion)
	}
	if len(opts) > 0 {
		if err := checkUnknown(reflect.TypeFor[T](), v, key, optionsOf(opts)); err != nil {
			var zero T
			return zero, err
		}
	}
	return *p, nil
}

// DecodeAll returns the whole configuration converted to a T, as [Decode]
// converts a section (viper and koanf call this Unmarshal):
//
//	type Config struct {
//		Dispatch Dispatch `config:"dispatch"`
//		DB       struct{ Host string }
//	}
//	all, err := config.DecodeAll[Config](c.Snapshot())
//
// An empty configuration gives a T whose fields are all missing, and so
// keep their zero values. Errors are those of Decode, with the path from
// the top ("dispatch.max_workers"); a nil s gives ErrNotFound. With
// [RejectUnknownKeys], a key anywhere that no field takes is an error:
// decode into a T that names every section, or decode the sections one by
// one.
func DecodeAll[T any](s *Snapshot, opts ...Option) (T, error) {
	var out T
	if s == nil {
		return out, &Error{Op: "decode", Err: fmt.Errorf("%w: nil Snapshot", ErrNotFound)}
	}
	all := s.All()
	if all == nil { // a zero Snapshot
		all = map[string]any{}
	}
	if err := decodeValue(reflect.ValueOf(&out).Elem(), all); err != nil {
		var zero T
		return zero, err.toError("decode", "", "", ErrConversion)
	}
	if err := checkUnknown(reflect.TypeFor[T](), all, "", optionsOf(opts)); err != nil {
		var zero T
		return zero, err
	}
	return out, nil
}

// checkUnknown is [RejectUnknownKeys] for a value v that decoded into a t
// at key: an error per key of v that no field takes, or nil.
func checkUnknown(t reflect.Type, v any, key string, o options) error {
	if !o.rejectUnknown {
		return nil
	}
	var errs []error
	for _, u := range unknownKeys(t, v, key, nil) {
		errs = append(errs, &Error{Op: "decode", Key: key, Path: u.path, Err: fmt.Errorf("%w: no field of %s takes it", ErrUnknownKey, u.in)})
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.(*Error).Path, b.(*Error).Path) })
	return errors.Join(errs...)
}

// An unknown is a key that no field of the struct type in takes.
type unknown struct {
	path string
	in   reflect.Type
}

// unknownKeys appends to out the keys of v, stored at path, that decoding
// v into a t (which succeeded) left unused, walking v as decodeValue does.
func unknownKeys(t reflect.Type, v any, path string, out []unknown) []unknown {
	if v == nil || reflect.TypeOf(v) == t || t == timeType || t == durationType {
		return out // a whole value, used as it is
	}
	if _, ok := toString(v); ok && reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return out
	}
	switch t.Kind() {
	case reflect.Pointer:
		return unknownKeys(t.Elem(), v, path, out)
	case reflect.Slice, reflect.Array:
		src := reflect.ValueOf(v)
		for i := range src.Len() {
			out = unknownKeys(t.Elem(), src.Index(i).Interface(), path+"["+strconv.Itoa(i)+"]", out)
		}
	case reflect.Map:
		keys, vals, _ := entries(v)
		for i, k := range keys {
			out = unknownKeys(t.Elem(), vals[i], joinKey(path, k), out)
		}
	case reflect.Struct:
		keys, vals, _ := entries(v)
		used := make([]bool, len(keys))
		for _, f := range visibleFields(t) {
			if i := matchKey(keys, f.name); i >= 0 {
				used[i] = true
				out = unknownKeys(t.FieldByIndex(f.index).Type, vals[i], joinKey(path, keys[i]), out)
			}
		}
		for i, k := range keys {
			if !used[i] {
				out = append(out, unknown{joinKey(path, k), t})
			}
		}
	}
	return out
}

// joinKey is the dotted key of k inside the value at path ("" for the
// whole configuration).
func joinKey(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// decodeInto implements Lookup: it decodes into a copy of *dst and stores
// the copy only if the whole decode succeeded, so fields whose keys are
// missing keep the values *dst had.
func decodeInto(dst any, v any) *valueError {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return &valueError{msg: fmt.Sprintf("Lookup into %T: want a non-nil pointer", dst), sentinel: ErrUnsupported}
	}
	tmp := reflect.New(rv.Type().Elem()).Elem()
	tmp.Set(rv.Elem())
	if err := decodeValue(tmp, copyOut(v)); err != nil {
		return err
	}
	rv.Elem().Set(tmp)
	return nil
}

// parseText parses s into a new value of t, a type whose pointer
// implements encoding.TextUnmarshaler.
func parseText(t reflect.Type, s string) (reflect.Value, error) {
	p := reflect.New(t)
	err := p.Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s))
	return p.Elem(), err
}

// decodeAs converts the stored value v to a new []string or
// map[string]string, as Decode does. It decodes v itself, not a copy: the
// result holds only strings, and its callers take a v of exactly that type
// (which the decoder would keep) themselves.
func decodeAs[T []string | map[string]string](v any) (T, bool) {
	var out T
	err := decodeValue(reflect.ValueOf(&out).Elem(), v)
	return out, err == nil
}

var (
	durationType        = reflect.TypeFor[time.Duration]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// decodeValue fills dst, which is settable, from the stored value v, which
// the caller has copied: dst may keep references into it.
func decodeValue(dst reflect.Value, v any) *valueError {
	t := dst.Type()
	if v == nil {
		dst.SetZero()
		return nil
	}
	if reflect.TypeOf(v) == t { // stored as a T (by Set): already a copy
		dst.Set(reflect.ValueOf(v))
		return nil
	}
	switch {
	case t == timeType:
		x, ok := toTime(v)
		return setIf(dst, reflect.ValueOf(x), ok, v)
	case t == durationType:
		x, ok := toDuration(v)
		return setIf(dst, reflect.ValueOf(x), ok, v)
	case reflect.PointerTo(t).Implements(textUnmarshalerType):
		if s, ok := toString(v); ok {
			x, err := parseText(t, s)
			if err != nil {
				return &valueError{msg: fmt.Sprintf("string to %s: %v", t, err)}
			}
			dst.Set(x)
			return nil
		}
	}
	switch t.Kind() {
	case reflect.Interface:
		cv := reflect.ValueOf(v)
		if !cv.Type().AssignableTo(t) {
			return mismatch(v, t)
		}
		dst.Set(cv)
		return nil
	case reflect.Bool:
		x, ok := toBool(v)
		return setIf(dst, reflect.ValueOf(x).Convert(t), ok, v)
	case reflect.String:
		x, ok := toString(v)
		return setIf(dst, reflect.ValueOf(x).Convert(t), ok, v)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x, ok := toInt64(v)
		return setIf(dst, reflect.ValueOf(x).Convert(t), ok && !dst.OverflowInt(x), v)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		x, ok := toUint64(v)
		return setIf(dst, reflect.ValueOf(x).Convert(t), ok && !dst.OverflowUint(x), v)
	case reflect.Float32, reflect.Float64:
		x, ok := toFloat64(v)
		return setIf(dst, reflect.ValueOf(x).Convert(t), ok && !dst.OverflowFloat(x), v)
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		if !dst.IsNil() {
			p.Elem().Set(dst.Elem()) // a copy: never write through the caller's pointer
		}
		if err := decodeValue(p.Elem(), v); err != nil {
			return err
		}
		dst.Set(p)
		return nil
	case reflect.Slice, reflect.Array:
		return decodeList(dst, v)
	case reflect.Map:
		return decodeMap(dst, v)
	case reflect.Struct:
		return decodeStruct(dst, v)
	}
	return &valueError{msg: "cannot decode into " + t.String(), sentinel: ErrUnsupported}
}

func setIf(dst, x reflect.Value, ok bool, v any) *valueError {
	if !ok {
		return mismatch(v, dst.Type())
	}
	dst.Set(x)
	return nil
}

func mismatch(v any, t reflect.Type) *valueError {
	return &valueError{msg: fmt.Sprintf("%s to %s", kindOf(v), t)}
}

// kindOf names what a stored value is, without showing it (it may be a
// secret).
func kindOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "a section"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%T", v)
}

// decodeList fills a slice or array from a list.
func decodeList(dst reflect.Value, v any) *valueError {
	src := reflect.ValueOf(v)
	if k := src.Kind(); k != reflect.Slice && k != reflect.Array || src.Type() == reflect.TypeFor[[]byte]() {
		return mismatch(v, dst.Type())
	}
	n := src.Len()
	out := dst
	if dst.Kind() == reflect.Slice {
		out = reflect.MakeSlice(dst.Type(), n, n)
	} else if n != dst.Len() {
		return &valueError{msg: fmt.Sprintf("a list of %d to %s", n, dst.Type())}
	}
	for i := range n {
		if err := decodeValue(out.Index(i), src.Index(i).Interface()); err != nil {
			return err.push("[" + strconv.Itoa(i) + "]")
		}
	}
	dst.Set(out)
	return nil
}

// entries returns the string-keyed entries of a section or other map with
// string keys, or ok=false.
func entries(v any) (keys []string, vals []any, ok bool) {
	src := reflect.ValueOf(v)
	if src.Kind() != reflect.Map || src.Type().Key().Kind() != reflect.String {
		return nil, nil, false
	}
	it := src.MapRange()
	for it.Next() {
		keys = append(keys, it.Key().String())
		vals = append(vals, it.Value().Interface())
	}
	return keys, vals, true
}

// decodeMap fills a map with string keys from a section.
func decodeMap(dst reflect.Value, v any) *valueError {
	t := dst.Type()
	if t.Key().Kind() != reflect.String {
		return &valueError{msg: "cannot decode into " + t.String() + ": keys must be strings", sentinel: ErrUnsupported}
	}
	keys, vals, ok := entries(v)
	if !ok {
		return mismatch(v, t)
	}
	out := reflect.MakeMapWithSize(t, len(keys))
	for i, k := range keys {
		e := reflect.New(t.Elem()).Elem()
		if err := decodeValue(e, vals[i]); err != nil {
			return err.push("." + k)
		}
		out.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), e)
	}
	dst.Set(out)
	return nil
}

// decodeStruct fills the fields of a struct from a section (see [Decode]).
func decodeStruct(dst reflect.Value, v any) *valueError {
	keys, vals, ok := entries(v)
	if !ok {
		return mismatch(v, dst.Type())
	}
	for _, f := range visibleFields(dst.Type()) {
		i := matchKey(keys, f.name)
		if i < 0 {
			continue
		}
		if err := decodeValue(dst.FieldByIndex(f.index), vals[i]); err != nil {
			return err.push("." + keys[i])
		}
	}
	return nil
}

// matchKey returns the index of the key that names a field: the exact
// name, else the first case-insensitive match in sorted order, else -1.
func matchKey(keys []string, name string) int {
	best := -1
	for i, k := range keys {
		if k == name {
			return i
		}
		if strings.EqualFold(k, name) && (best < 0 || k < keys[best]) {
			best = i
		}
	}
	return best
}

type field struct {
	name  string
	index []int
}

// visibleFields lists the fields [Decode] fills: of several with one name,
// the shallowest, as for Go's selectors and encoding/json.
func visibleFields(t reflect.Type) []field {
	all := fieldsOf(t)
	depth := map[string]int{}
	for _, f := range all {
		if d, ok := depth[f.name]; !ok || len(f.index) < d {
			depth[f.name] = len(f.index)
		}
	}
	out := all[:0]
	for _, f := range all {
		if len(f.index) == depth[f.name] {
			out = append(out, f)
		}
	}
	return out
}

// fieldsOf lists the exported fields of t, embedded structs' promoted.
func fieldsOf(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		name, tagged := fieldName(f)
		if name == "-" {
			continue
		}
		if f.Anonymous && !tagged && f.Type.Kind() == reflect.Struct {
			for _, sub := range fieldsOf(f.Type) {
				out = append(out, field{sub.name, append([]int{i}, sub.index...)})
			}
			continue
		}
		if f.IsExported() {
			out = append(out, field{name, []int{i}})
		}
	}
	return out
}

// fieldName returns the key a field is filled from and whether a tag
// named it.
func fieldName(f reflect.StructField) (string, bool) {
	for _, tag := range []string{"config", "json"} {
		if v, ok := f.Tag.Lookup(tag); ok {
			name, _, _ := strings.Cut(v, ",")
			if name != "" {
				return name, true
			}
		}
	}
	return f.Name, false
}
