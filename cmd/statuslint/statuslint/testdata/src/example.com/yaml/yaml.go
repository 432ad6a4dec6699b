// Package yaml stands in for a YAML library: it decodes by reflection,
// which statuslint does not follow, and is not one of the codecs it
// models; the shape of the call (text in, a pointer filled by code it
// cannot see) says that it decodes.
package yaml

import (
	"errors"
	"reflect"
	"strings"
)

func Unmarshal(in []byte, out any) error {
	v := reflect.ValueOf(out)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return errors.New("yaml: Unmarshal(non-pointer)")
	}
	return decode(strings.TrimSpace(string(in)), v.Elem())
}

func decode(text string, v reflect.Value) error {
	if v.Kind() == reflect.String {
		v.SetString(text)
	}
	return nil
}

func Marshal(in any) ([]byte, error) { return []byte(reflect.ValueOf(in).String()), nil }
