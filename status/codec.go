package status

import (
	"encoding/json"
	"reflect"

	"github.com/agentstate/core/status/internal/jsondoc"
)

// codec is the JSON document layer for one T: see [jsondoc.Codec].
type codec = jsondoc.Codec

func codecFor[T any]() *codec { return jsondoc.For(reflect.TypeFor[T]()) }

// lookup returns the value, unknown members and compact encoding recorded
// for exactly the bytes cur, if any (see [jsondoc.Codec.Lookup]).
func lookup[T any](c *codec, cur []byte) (v T, unknown map[string]json.RawMessage, compact []byte, ok bool) {
	rv, unknown, compact, ok := c.Lookup(cur)
	if !ok {
		return v, nil, nil, false
	}
	return rv.(T), unknown, compact, true
}

// decode parses cur into a T plus the object members T does not declare.
// nil cur (no document) gives the zero T; an undecodable one a
// *CorruptError naming name.
func decode[T any](c *codec, name string, cur []byte) (T, map[string]json.RawMessage, error) {
	var v T
	unknown, err := c.Decode(cur, &v)
	if err != nil {
		return v, nil, corrupt(name, err)
	}
	return v, unknown, nil
}

func corrupt(name string, err error) *CorruptError {
	return &CorruptError{Path: name, Offset: jsondoc.Offset(err), Err: err}
}
