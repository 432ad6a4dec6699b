package jsondoc

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/agentstate/core/internal/jsontext"
)

// A document is decoded only if Go, Python, jq and corestate all read it the
// same way, so that no Mutate changes what the caller did not change. Three
// kinds of valid JSON break that, and are refused as corrupt:
//
//   - a name that differs from a declared field's only in case ("Runs" next
//     to "runs"): encoding/json matches names case-insensitively, the
//     others exactly;
//   - the same name twice in one object: a decoder keeps one of them and
//     the next write drops the other;
//   - in a declared field, bytes that are not UTF-8 or a \u escape of a lone
//     surrogate: encoding/json reads U+FFFD and would write that back.
//
// Names are checked everywhere (see unquote); values of fields that the
// type does not declare are kept byte for byte and not checked.

// structFields describes the JSON names of a struct type.
type structFields struct {
	types map[string]reflect.Type // exact JSON name -> field type
	names []string                // the same names, for case-variant checks
}

var fieldCache sync.Map // reflect.Type -> *structFields

func fieldsOf(t reflect.Type) *structFields {
	if f, ok := fieldCache.Load(t); ok {
		return f.(*structFields)
	}
	f := &structFields{types: make(map[string]reflect.Type)}
	collectNames(t, f.types, 0)
	for name := range f.types {
		f.names = append(f.names, name)
	}
	actual, _ := fieldCache.LoadOrStore(t, f)
	return actual.(*structFields)
}

// caseVariant returns the declared name that name differs from only in
// case (as encoding/json folds names), or "".
func (f *structFields) caseVariant(name string) string {
	for _, known := range f.names {
		if strings.EqualFold(known, name) {
			return known
		}
	}
	return ""
}

// member checks one member of an object decoded into a struct with fields
// f: a repeated name, a case variant of a field, and the value of a field.
// It reports whether the member is a declared field.
func (f *structFields) member(seen map[string]bool, name string, value []byte) (known bool, err error) {
	if seen[name] {
		return false, fmt.Errorf("duplicate name %q", name)
	}
	seen[name] = true
	if t, ok := f.types[name]; ok {
		return true, checkValue(t, value)
	}
	if field := f.caseVariant(name); field != "" {
		return false, fmt.Errorf("name %q differs from field %q only in case (Go would read it as %q, other languages would not)", name, field, field)
	}
	return false, nil
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// checkValue checks the JSON value data that encoding/json decodes into a
// value of type t (nil: an interface). A type with its own decoding method
// owns its bytes and is not looked into.
func checkValue(t reflect.Type, data []byte) error {
	if t != nil {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType) {
			return nil
		}
		if t.Kind() == reflect.Interface {
			t = nil
		}
	}
	if len(data) == 0 {
		return nil
	}
	switch data[0] {
	case '"':
		return strictStrings(data)
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		return elements(data, func(v []byte) error { return checkValue(elem, v) })
	case '{':
		return checkObject(t, data)
	}
	return nil
}

func checkObject(t reflect.Type, data []byte) error {
	seen := make(map[string]bool)
	if t != nil && t.Kind() == reflect.Struct {
		f := fieldsOf(t)
		return members(data, func(name string, value []byte) error {
			_, err := f.member(seen, name, value)
			return err
		})
	}
	var elem reflect.Type
	if t != nil && t.Kind() == reflect.Map {
		elem = t.Elem()
	}
	return members(data, func(name string, value []byte) error {
		if seen[name] {
			return fmt.Errorf("duplicate name %q", name)
		}
		seen[name] = true
		return checkValue(elem, value)
	})
}

// strictStrings reports invalid UTF-8 and lone surrogates in data (see
// jsontext), as an *atError at their offset.
func strictStrings(data []byte) error {
	err := jsontext.CheckStrings(data)
	if e, ok := err.(*jsontext.Error); ok {
		return &atError{Offset: int64(e.Offset), Err: err}
	}
	return err
}
