package config

import (
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"time"
)

// The conversions below read a stored value and never return a reference
// into it: results are scalars or freshly built slices and maps. Each
// returns ok=false for a nil (missing) value or an impossible conversion;
// the common case is the first case of each type switch, so a getter on a
// value of the expected type costs one map lookup and one type check.

func toString(v any) (string, bool) {
	if s, ok := v.(string); ok {
		return s, true
	}
	if v == nil {
		return "", false
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.String {
		return rv.String(), true
	}
	return "", false
}

func toInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int64:
		return x, true
	case float64:
		return floatToInt64(x)
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint:
		return uintToInt64(uint64(x))
	case uint64:
		return uintToInt64(x)
	case float32:
		return floatToInt64(float64(x))
	case time.Duration:
		return int64(x), true
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil { // ParseInt gives the nearest int64 out of range
			return 0, false
		}
		return n, true
	case nil:
		return 0, false
	}
	switch rv := reflect.ValueOf(v); {
	case rv.CanInt():
		return rv.Int(), true
	case rv.CanUint():
		return uintToInt64(rv.Uint())
	case rv.CanFloat():
		return floatToInt64(rv.Float())
	case rv.Kind() == reflect.String:
		return toInt64(rv.String())
	}
	return 0, false
}

func toUint64(v any) (uint64, bool) {
	if u, ok := v.(uint64); ok {
		return u, true
	}
	if v == nil {
		return 0, false
	}
	switch rv := reflect.ValueOf(v); {
	case rv.CanUint():
		return rv.Uint(), true
	case rv.CanFloat(): // a file's number beyond int64 is a float64
		f := rv.Float()
		if f != math.Trunc(f) || f < 0 || f >= 1<<64 {
			return 0, false
		}
		return uint64(f), true
	case rv.Kind() == reflect.String:
		u, err := strconv.ParseUint(rv.String(), 10, 64)
		if err != nil {
			return 0, false
		}
		return u, true
	}
	n, ok := toInt64(v)
	if !ok || n < 0 {
		return 0, false
	}
	return uint64(n), true
}

func uintToInt64(u uint64) (int64, bool) {
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// floatToInt64 accepts only whole numbers in range: 3.0 is 3, 3.5 is not an
// integer and neither is 1e300.
func floatToInt64(f float64) (int64, bool) {
	if f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
		return 0, false
	}
	return int64(f), true
}

func toInt(v any) (int, bool) {
	if n, ok := v.(int); ok {
		return n, true
	}
	n, ok := toInt64(v)
	if !ok || int64(int(n)) != n {
		return 0, false
	}
	return int(n), true
}

func toFloat64(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case string:
		// NaN and ±Inf are refused here as everywhere else: Save could
		// not write them.
		f, err := strconv.ParseFloat(x, 64)
		if err != nil || finite(f) != nil {
			return 0, false
		}
		return f, true
	case nil:
		return 0, false
	}
	switch rv := reflect.ValueOf(v); {
	case rv.CanFloat(): // before toInt64, which would make -0 0
		return rv.Float(), true
	case rv.CanUint():
		return float64(rv.Uint()), true
	case rv.Kind() == reflect.String:
		return toFloat64(rv.String())
	}
	if n, ok := toInt64(v); ok {
		return float64(n), true
	}
	return 0, false
}

func toBool(v any) (bool, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		b, err := strconv.ParseBool(x)
		return b, err == nil
	case nil:
		return false, false
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Bool:
		return rv.Bool(), true
	case reflect.String:
		return toBool(rv.String())
	}
	return false, false
}

func toDuration(v any) (time.Duration, bool) {
	switch x := v.(type) {
	case time.Duration:
		return x, true
	case string:
		d, err := time.ParseDuration(x)
		return d, err == nil
	case nil:
		return 0, false
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.String {
		return toDuration(rv.String())
	}
	n, ok := toInt64(v)
	return time.Duration(n), ok
}

func toTime(v any) (time.Time, bool) {
	switch x := v.(type) {
	case time.Time:
		return x, true
	case string:
		t, err := time.Parse(time.RFC3339Nano, x)
		return t, err == nil
	case nil:
		return time.Time{}, false
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.String {
		return toTime(rv.String())
	}
	return time.Time{}, false
}

// toStringSlice and toStringMap take the common forms without reflection
// and leave the rest to the decoder, so that they convert as Decode does.
func toStringSlice(v any) ([]string, bool) {
	switch x := v.(type) {
	case nil:
		return nil, false
	case []string:
		return slices.Clone(x), true
	case []any:
		out := make([]string, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				return decodeAs[[]string](v)
			}
			out[i] = s
		}
		return out, true
	}
	if k := reflect.TypeOf(v).Kind(); k != reflect.Slice && k != reflect.Array {
		return nil, false // the decoder refuses it too
	}
	return decodeAs[[]string](v)
}

func toStringMap(v any) (map[string]string, bool) {
	switch x := v.(type) {
	case nil:
		return nil, false
	case map[string]string:
		return maps.Clone(x), true
	case map[string]any:
		out := make(map[string]string, len(x))
		for k, e := range x {
			s, ok := e.(string)
			if !ok {
				return decodeAs[map[string]string](v)
			}
			out[k] = s
		}
		return out, true
	}
	if t := reflect.TypeOf(v); t.Kind() != reflect.Map || t.Key().Kind() != reflect.String {
		return nil, false // the decoder refuses it too
	}
	return decodeAs[map[string]string](v)
}

// convertFast stores v, converted, into the variable dst points to, for
// the types the getters return, without reflection, and reports whether it
// did. It makes the conversions the decoder makes: whatever it does not
// take, a failure included, goes on to the decoder, which words the error.
func convertFast(dst, v any) bool {
	switch d := dst.(type) {
	case *string:
		return convertTo(d, v, toString)
	case *int:
		return convertTo(d, v, toInt)
	case *int64:
		return convertTo(d, v, toInt64)
	case *float64:
		return convertTo(d, v, toFloat64)
	case *bool:
		return convertTo(d, v, toBool)
	case *time.Duration:
		return convertTo(d, v, toDuration)
	case *time.Time:
		return convertTo(d, v, toTime)
	case *[]string:
		return convertTo(d, v, toStringSlice)
	case *map[string]string:
		return convertTo(d, v, toStringMap)
	}
	return false
}

func convertTo[T any](d *T, v any, conv func(any) (T, bool)) bool {
	if d == nil {
		return false
	}
	x, ok := conv(v)
	if ok {
		*d = x
	}
	return ok
}
