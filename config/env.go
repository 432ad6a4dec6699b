package config

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// FromEnv overrides keys with the environment variables in environ (as
// os.Environ returns them: "NAME=value") whose names start with prefix and
// an underscore. It is one write: all the overrides are published at once,
// or, on any error, none.
//
//	c.LoadFile("agents.yaml")
//	c.FromEnv("AGENTS", os.Environ()) // AGENTS_DISPATCH__MAX_WORKERS=8
//
// Names: after "PREFIX_", a double underscore separates key segments and a
// single one stays part of the segment, so AGENTS_DISPATCH__MAX_WORKERS
// names the key "dispatch.max_workers". Each segment matches an existing
// key case-insensitively (so AGENTS_DB__MAXCONNS overrides "db.maxConns");
// a segment that matches nothing is lowercased and creates the key, with
// any missing sections on the way, as Set does. A name that matches two
// keys differing only in case, an empty segment, or two variables naming
// the same key are errors.
//
// Values take the type of the value they override, so that the typed
// getters and [Decode] see what the file would have given:
//
//   - a value of a type with an UnmarshalText method (slog.Level, net.IP)
//     is parsed by it, as Decode parses a string ("DEBUG-2", not "-6", for
//     a slog.Level);
//   - a bool, integer, float or string of any Go type is parsed with
//     strconv into that same type;
//   - a time.Duration accepts time.ParseDuration ("30s") or integer
//     nanoseconds; a time.Time accepts RFC 3339;
//   - a section, list or other container accepts JSON of the same shape
//     (an object for a section, an array for a list), decoded as Load
//     decodes;
//   - a new key, or one holding nil, gets the string as it is.
//
// A value that does not parse, that [Config.Set] would refuse (NaN,
// say), or that holds bytes that are not UTF-8, a NUL, or (in JSON) a \u
// escape of a lone surrogate, is an error naming the variable and the key.
//
// Precedence is the order of writes: FromEnv overrides what is stored
// when it runs, so call it after LoadFile; a later Load replaces
// everything, overrides included. Within one call, variables are applied
// in the order of their keys, so AGENTS_DB='{"host":"a"}' is applied
// before AGENTS_DB__PORT=5433 and both take effect.
//
// By default any variable with the prefix is an override. The options
// [RejectUnknownKeys] (refuse a variable that names no stored key: a typo)
// and [IgnoreEnv] (skip named variables) make it strict:
//
//	c.FromEnv("AGENTS", os.Environ(), config.RejectUnknownKeys(), config.IgnoreEnv("AGENTS_CONFIG"))
func (c *Config) FromEnv(prefix string, environ []string, opts ...Option) error {
	prefix = strings.TrimSuffix(prefix, "_")
	if prefix == "" {
		return &Error{Op: "env", Err: fmt.Errorf("%w: empty prefix", ErrInvalidKey)}
	}
	c.mu.Lock()
	old := c.Snapshot()
	root, err := applyEnv(old.root, prefix+"_", environ, optionsOf(opts))
	if err != nil {
		c.mu.Unlock()
		return err
	}
	if root == nil || reflect.DeepEqual(old.root, root) {
		c.mu.Unlock()
		return nil
	}
	c.publishLocked(old, newSnapshot(root, old.features, old.featList, old.version+1))
	c.unlockAndDeliver()
	return nil
}

// envVar is one override: the variable, its key's segments and its value.
type envVar struct {
	name, value string
	segs        []string
}

// applyEnv returns root with the overrides applied, or nil if there are
// none.
func applyEnv(root map[string]any, prefix string, environ []string, o options) (map[string]any, error) {
	var vars []envVar
	var unknown []error
	seen := map[string]string{} // key -> variable
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, prefix) || slices.Contains(o.ignore, name) {
			continue
		}
		segs, known, err := envKey(root, name[len(prefix):])
		if err != nil {
			return nil, &Error{Op: "env", Key: name, Err: err}
		}
		key := strings.Join(segs, ".")
		if !known && o.rejectUnknown {
			unknown = append(unknown, &Error{Op: "env", Key: name, Path: key, Err: fmt.Errorf("%w: no key is stored there", ErrUnknownKey)})
			continue
		}
		if other, dup := seen[key]; dup {
			return nil, &Error{Op: "env", Key: name, Err: fmt.Errorf("%w: names the key %s as %s does", ErrInvalidKey, quote(key), clip(other))}
		}
		seen[key] = name
		vars = append(vars, envVar{name, value, segs})
	}
	if len(unknown) > 0 {
		slices.SortFunc(unknown, func(a, b error) int { return strings.Compare(a.(*Error).Key, b.(*Error).Key) })
		return nil, errors.Join(unknown...)
	}
	if len(vars) == 0 {
		return nil, nil
	}
	// Parents before children, then in key order: the result does not
	// depend on the order of environ.
	slices.SortFunc(vars, func(a, b envVar) int { return slices.Compare(a.segs, b.segs) })
	for _, ev := range vars {
		key := strings.Join(ev.segs, ".")
		if err := checkPath(root, ev.segs); err != nil {
			return nil, &Error{Op: "env", Key: ev.name, Path: key, Err: err}
		}
		cv, err := envValue(lookupPath(root, ev.segs), ev.value, len(ev.segs))
		if err != nil {
			return nil, &Error{Op: "env", Key: ev.name, Path: key, Err: err}
		}
		if _, verr := copyIn(cv, len(ev.segs)); verr != nil { // what Set refuses: NaN, say
			return nil, verr.toError("env", ev.name, key, ErrUnsupported)
		}
		root = setPath(root, ev.segs, cv)
	}
	return root, nil
}

// envKey maps the part of a variable's name after the prefix to key
// segments, matching existing keys case-insensitively, and reports
// whether the key is stored.
func envKey(root map[string]any, rest string) (segs []string, known bool, err error) {
	parts := strings.Split(rest, "__")
	if len(parts) > maxDepth {
		return nil, false, fmt.Errorf("%w: more than %d segments", ErrInvalidKey, maxDepth)
	}
	segs = make([]string, len(parts))
	var v any = root
	for i, p := range parts {
		if p == "" {
			return nil, false, fmt.Errorf("%w: empty segment (a double underscore separates segments)", ErrInvalidKey)
		}
		m, _ := v.(map[string]any) // nil: nothing below to match
		seg, err := matchSegment(m, p)
		if err != nil {
			return nil, false, err
		}
		if msg := checkSegment(seg); msg != "" {
			return nil, false, fmt.Errorf("%w: %s", ErrInvalidKey, msg)
		}
		segs[i] = seg
		v, known = m[seg]
	}
	return segs, known, nil
}

// matchSegment returns the key of m that p names case-insensitively, or
// p lowercased if there is none.
func matchSegment(m map[string]any, p string) (string, error) {
	if _, ok := m[p]; ok {
		return p, nil
	}
	var found []string
	for k := range m {
		if strings.EqualFold(k, p) {
			found = append(found, k)
		}
	}
	switch len(found) {
	case 0:
		return strings.ToLower(p), nil
	case 1:
		return found[0], nil
	}
	slices.Sort(found)
	return "", fmt.Errorf("%w: %s matches several keys: %s", ErrInvalidKey, clip(p), clip(strings.Join(found, ", ")))
}

// lookupPath returns the value at segs in root, or nil.
func lookupPath(root map[string]any, segs []string) any {
	var v any = root
	for _, s := range segs {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[s]
	}
	return v
}

// envValue parses s as a value of the same type as old (see FromEnv).
// depth is the number of segments of its key.
func envValue(old any, s string, depth int) (any, error) {
	if verr := checkString(s); verr != nil {
		return nil, fmt.Errorf("%w: %s", ErrUnsupported, verr.msg)
	}
	switch o := old.(type) {
	case nil, string:
		return s, nil
	case time.Duration:
		if d, err := time.ParseDuration(s); err == nil {
			return d, nil
		}
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return time.Duration(n), nil
		}
		return nil, fmt.Errorf("%w: want a duration such as 30s, or integer nanoseconds", ErrConversion)
	case time.Time:
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return nil, fmt.Errorf("%w: want an RFC 3339 time", ErrConversion)
		}
		return t, nil
	case map[string]any:
		return envJSON(s, depth, "an object", isSection)
	case []any:
		return envJSON(s, depth, "an array", isList)
	default:
		return envScalar(reflect.ValueOf(o), s, depth)
	}
}

// envScalar parses s into a new value of old's type: through UnmarshalText
// for a type that has one (see envText), else by its kind, and for typed
// containers as JSON.
func envScalar(old reflect.Value, s string, depth int) (any, error) {
	t := old.Type()
	if reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return envText(t, s)
	}
	out := reflect.New(t).Elem()
	var err error
	switch t.Kind() {
	case reflect.String:
		out.SetString(s)
	case reflect.Bool:
		var b bool
		if b, err = strconv.ParseBool(s); err == nil {
			out.SetBool(b)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		var n int64
		if n, err = strconv.ParseInt(s, 10, t.Bits()); err == nil {
			out.SetInt(n)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		var n uint64
		if n, err = strconv.ParseUint(s, 10, t.Bits()); err == nil {
			out.SetUint(n)
		}
	case reflect.Float32, reflect.Float64:
		var f float64
		if f, err = strconv.ParseFloat(s, t.Bits()); err == nil {
			out.SetFloat(f)
		}
	case reflect.Slice, reflect.Array:
		return envJSON(s, depth, "an array", isList)
	case reflect.Map, reflect.Struct:
		return envJSON(s, depth, "an object", isSection)
	default:
		return nil, fmt.Errorf("%w: cannot override a %s", ErrConversion, t)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: want %s: %v", ErrConversion, t, errors.Unwrap(err))
	}
	return out.Interface(), nil
}

// envText parses s through the UnmarshalText of t, as Decode parses a
// string into a t: the type's own rules apply, not its kind's.
func envText(t reflect.Type, s string) (any, error) {
	x, err := parseText(t, s)
	if err != nil {
		return nil, fmt.Errorf("%w: want %s: %v", ErrConversion, t, err)
	}
	return x.Interface(), nil
}

// envJSON decodes s as JSON of the shape want describes, for a key of
// depth segments.
func envJSON(s string, depth int, want string, ok func(any) bool) (any, error) {
	v, err := decodeJSONValue(strings.NewReader(s))
	if err != nil || !ok(v) {
		return nil, fmt.Errorf("%w: want JSON: %s", ErrConversion, want)
	}
	verr := checkJSONStrings([]byte(s))
	if verr == nil {
		_, verr = normalize(v, depth)
	}
	if verr != nil {
		return nil, fmt.Errorf("%w: %s%s", ErrUnsupported, at(verr), verr.msg)
	}
	return v, nil
}

func isSection(v any) bool { _, ok := v.(map[string]any); return ok }
func isList(v any) bool    { _, ok := v.([]any); return ok }

// at is "at PATH: " for an error inside a JSON value, or "".
func at(e *valueError) string {
	if p := e.path(""); p != "" {
		return "at " + p + ": "
	}
	return ""
}
