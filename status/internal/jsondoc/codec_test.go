package jsondoc

import (
	"reflect"
	"testing"
	"time"
)

// Status itself is checked by status's TestLastEncodingReuse.
func TestFlatType(t *testing.T) {
	type inner struct{ A [2]int }
	for _, tc := range []struct {
		v    any
		flat bool
	}{
		{struct{ A, B inner }{}, true},
		{struct{ T time.Time }{}, true},
		{struct{ P *int }{}, false},
		{struct{ M map[string]int }{}, false},
		{struct{ S []int }{}, false},
		{struct{ I any }{}, false},
		{struct{ unexported int }{}, false},
		{struct {
			A int `json:"-"`
		}{}, false},
		{struct{ inner }{}, false},
		{struct{ D time.Duration }{}, true},
		{struct{ K reflect.Kind }{}, true}, // a String method is not a JSON or text marshaler
		{struct{ C complex128 }{}, false},
	} {
		if got := flatType(reflect.TypeOf(tc.v)); got != tc.flat {
			t.Errorf("flatType(%T) = %v, want %v", tc.v, got, tc.flat)
		}
	}
}
