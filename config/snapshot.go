package config

import (
	"slices"
	"time"
)

// A Snapshot is an immutable view of a [Config] at one moment, and its
// getters are how a Config is read (see Consistency in the package doc).
// A Snapshot is safe for concurrent use and costs nothing to hold:
// writers publish new snapshots and never touch old ones. A nil *Snapshot
// reads as an empty one, as [Decode] reads it: getters return zero values
// and Lookup ErrNotFound.
type Snapshot struct {
	root     map[string]any      // the tree; never mutated after publication
	flat     map[string]any      // every dotted key (sections too) -> value in root
	features map[string]struct{} // enabled feature flags
	featList []string            // sorted names in features
	version  uint64
}

var emptySnapshot = &Snapshot{root: map[string]any{}, flat: map[string]any{}}

// newSnapshot indexes root. Building the dotted index here, at write time,
// is what lets a read be one map lookup with no string splitting.
func newSnapshot(root map[string]any, features map[string]struct{}, featList []string, version uint64) *Snapshot {
	flat := make(map[string]any, len(root))
	flatten(flat, "", root)
	return &Snapshot{root: root, flat: flat, features: features, featList: featList, version: version}
}

func flatten(dst map[string]any, prefix string, m map[string]any) {
	for k, v := range m {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		dst[key] = v
		if sub, ok := v.(map[string]any); ok {
			flatten(dst, key, sub)
		}
	}
}

// lookup returns the value at key and whether one is stored.
func (s *Snapshot) lookup(key string) (any, bool) {
	if s == nil {
		return nil, false
	}
	v, ok := s.flat[key]
	return v, ok
}

// value returns the value at key, or nil.
func (s *Snapshot) value(key string) any {
	if s == nil {
		return nil
	}
	return s.flat[key]
}

// Version counts the changes published before this snapshot: it grows by
// one with every write that changed something.
func (s *Snapshot) Version() uint64 {
	if s == nil {
		return 0
	}
	return s.version
}

// Get returns a deep copy of the value at key and whether it exists.
// A key naming a section returns a copy of the whole map[string]any.
func (s *Snapshot) Get(key string) (any, bool) {
	v, ok := s.lookup(key)
	if !ok {
		return nil, false
	}
	return copyOut(v), true
}

// Has reports whether a value is stored at key.
func (s *Snapshot) Has(key string) bool {
	_, ok := s.lookup(key)
	return ok
}

// String returns the string at key, or "" if it is missing or not a string.
func (s *Snapshot) String(key string) string { x, _ := toString(s.value(key)); return x }

// Int returns the value at key as an int, or 0 if it is missing or cannot
// be converted. This getter and the others convert as [Decode] does.
func (s *Snapshot) Int(key string) int { x, _ := toInt(s.value(key)); return x }

// Int64 returns the value at key as an int64, or 0.
func (s *Snapshot) Int64(key string) int64 { x, _ := toInt64(s.value(key)); return x }

// Float64 returns the value at key as a float64, or 0.
func (s *Snapshot) Float64(key string) float64 { x, _ := toFloat64(s.value(key)); return x }

// Bool returns the value at key as a bool, or false.
func (s *Snapshot) Bool(key string) bool { x, _ := toBool(s.value(key)); return x }

// Duration returns the value at key as a time.Duration, or 0.
func (s *Snapshot) Duration(key string) time.Duration { v, _ := toDuration(s.value(key)); return v }

// Time returns the value at key as a time.Time, or the zero Time.
func (s *Snapshot) Time(key string) time.Time { v, _ := toTime(s.value(key)); return v }

// StringSlice returns a new []string with the strings at key, or nil.
func (s *Snapshot) StringSlice(key string) []string { v, _ := toStringSlice(s.value(key)); return v }

// StringMap returns a new map[string]string with the strings at key, or nil.
func (s *Snapshot) StringMap(key string) map[string]string {
	v, _ := toStringMap(s.value(key))
	return v
}

// Lookup converts the value at key into the variable dst points to, as
// [Decode] converts it to a T, except that decoding starts from the
// current *dst: struct fields whose keys are missing keep their values, so
// a struct of defaults can be overlaid with what is stored. Maps and slices
// are replaced, not merged, and a pointer field is given a new value
// rather than written through.
//
// It returns an *Error wrapping ErrNotFound if the key is missing (or
// ErrInvalidKey if it is not a key), ErrConversion if the value cannot be
// converted (dst is then unchanged), or ErrUnsupported for a dst that is
// not a non-nil pointer, or points to a type that Decode cannot fill from
// this value.
func (s *Snapshot) Lookup(key string, dst any) error {
	v, ok := s.lookup(key)
	if !ok {
		return missing("get", key)
	}
	if convertFast(dst, v) {
		return nil
	}
	if err := decodeInto(dst, v); err != nil {
		return err.toError("get", key, key, ErrConversion)
	}
	return nil
}

// missing is the error of op on a key that is not in the index: an
// invalid key, or a valid one with no value. Only valid keys are indexed,
// so a key that is found needs no check.
func missing(op, key string) *Error {
	if err := checkDotted(key); err != nil {
		return &Error{Op: op, Key: key, Err: err}
	}
	return &Error{Op: op, Key: key, Err: ErrNotFound}
}

// Keys returns the stored keys in sorted order, flattened to dotted form:
// every key whose value is not a section, plus every empty section (so no
// stored value is invisible). Sections that have children are not listed
// themselves; their children are. Keys returns a new slice.
func (s *Snapshot) Keys() []string {
	if s == nil {
		return []string{}
	}
	keys := make([]string, 0, len(s.flat))
	for k, v := range s.flat {
		if listed(v) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// listed says whether Keys shows a key with this value.
func listed(v any) bool {
	m, ok := v.(map[string]any)
	return !ok || len(m) == 0
}

// All returns a deep copy of the whole tree.
func (s *Snapshot) All() map[string]any {
	if s == nil {
		return nil
	}
	out, _ := copyOut(s.root).(map[string]any)
	return out
}

// Enabled reports whether the feature flag name is enabled. An unknown
// flag is not enabled; Enabled never fails.
func (s *Snapshot) Enabled(name string) bool {
	if s == nil {
		return false
	}
	_, ok := s.features[name]
	return ok
}

// EnabledFeatures returns the enabled feature flags, sorted, in a new slice.
func (s *Snapshot) EnabledFeatures() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.featList)
}
