package config

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// normalize turns a freshly decoded document (from JSON or YAML) into the
// one data model that Load produces, in place, and validates it: integers
// that fit become int64, other numbers float64; sections must have valid
// key segments; strings, keys included, must pass checkString; nothing may
// nest deeper than maxDepth. depth is the number of levels above v.
// Decoded data cannot hold cycles, so none are checked.
func normalize(v any, depth int) (any, *valueError) {
	switch x := v.(type) {
	case string:
		return v, checkString(x)
	case nil, bool, int64:
		return v, nil
	case int:
		return int64(x), nil
	case uint64: // YAML integers beyond int64: a float64, as for JSON
		return float64(x), nil
	case float64:
		return x, finite(x)
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return n, nil
		}
		// A number beyond the float64 range (1e400) would silently become
		// ±Inf, which Save then cannot write.
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return nil, &valueError{msg: "number " + string(x) + " is out of the float64 range"}
		}
		return f, nil
	case map[string]any:
		if depth++; depth > maxDepth {
			return nil, &valueError{msg: fmt.Sprintf("nested deeper than %d levels", maxDepth)}
		}
		for k, e := range x {
			if msg := checkSegment(k); msg != "" {
				return nil, &valueError{msg: msg, segs: []string{"." + k}}
			}
			if err := checkKey(k); err != nil {
				return nil, err
			}
			n, err := normalize(e, depth)
			if err != nil {
				return nil, err.push("." + k)
			}
			x[k] = n
		}
		return x, nil
	case []any:
		if len(x) == 0 {
			return x, nil
		}
		if depth++; depth > maxDepth {
			return nil, &valueError{msg: fmt.Sprintf("nested deeper than %d levels", maxDepth)}
		}
		for i, e := range x {
			n, err := normalize(e, depth)
			if err != nil {
				return nil, err.push("[" + strconv.Itoa(i) + "]")
			}
			x[i] = n
		}
		return x, nil
	}
	return nil, &valueError{msg: fmt.Sprintf("unsupported type %T", v)}
}
