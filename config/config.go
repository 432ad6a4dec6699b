package config

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// A Config is a concurrency-safe store of configuration values addressed by
// dotted keys. The zero value is an empty Config ready to use; a Config must
// not be copied after first use.
//
// It is read through the [Snapshot] that [Config.Snapshot] returns (see
// Lock-free reads in the package doc). A write copies only the maps on its
// path and shares untouched subtrees with the previous snapshot, which is
// safe because published trees are never mutated.
type Config struct {
	mu  sync.Mutex // serialises writers; guards the fields below
	cur atomic.Pointer[Snapshot]

	subs     []*subscription // copy-on-write: a published slice is never modified
	queue    []change        // published changes not yet delivered, in order
	draining bool            // some goroutine is delivering queue
}

// New returns an empty [Config].
func New() *Config { return new(Config) }

// Snapshot returns the [Snapshot] current at the call. Read keys that must
// agree from one Snapshot.
func (c *Config) Snapshot() *Snapshot {
	if s := c.cur.Load(); s != nil {
		return s
	}
	return emptySnapshot
}

// Set stores a deep copy of v at key. A dotted key writes into a copy of
// the nested section, creating missing sections on the way: after
// Set("db.host", "x") on an empty [Config], [Snapshot.Get] of "db" gives
// map[string]any{"host": "x"}. If a segment on the way holds a value that
// is not a section, Set returns an error wrapping ErrNotSection and changes
// nothing. A map[string]any value becomes a section: its children are
// reachable by dotted keys (Set("db", map[string]any{"host": "x"}) makes
// "db.host" visible).
//
// Set stores what it can copy safely and [Config.Save] can write: nil,
// bools, integers, finite floats, strings, time.Time, time.Duration, and
// slices, arrays, maps with string or integer keys and structs (exported
// fields only) built from them, []any and map[string]any included. It
// refuses anything else: func, chan, pointer, unsafe.Pointer, complex
// numbers, NaN and ±Inf, a map keyed by bools or floats, a struct with an
// unexported field, a value that contains itself, a section key that is
// empty or contains '.', nesting deeper than 256 levels counting the key's
// segments, a time.Time that RFC 3339 cannot express, and a value whose
// own MarshalJSON or MarshalText fails. Then it returns an *Error wrapping
// ErrUnsupported whose Path names the offending element, and stores
// nothing. Setting a value equal to the stored one (reflect.DeepEqual)
// publishes nothing and notifies no one.
func (c *Config) Set(key string, v any) error {
	segs, err := splitKey(key)
	if err != nil {
		return &Error{Op: "set", Key: key, Err: err}
	}
	cv, verr := copyIn(v, len(segs))
	if verr != nil {
		return verr.toError("set", key, key, ErrUnsupported)
	}
	c.mu.Lock()
	old := c.Snapshot()
	if err := checkPath(old.root, segs); err != nil {
		c.mu.Unlock()
		return &Error{Op: "set", Key: key, Err: err}
	}
	if cur, ok := old.flat[key]; ok && reflect.DeepEqual(cur, cv) {
		c.mu.Unlock()
		return nil
	}
	c.publishLocked(old, newSnapshot(setPath(old.root, segs, cv), old.features, old.featList, old.version+1))
	c.unlockAndDeliver()
	return nil
}

// checkPath verifies that every segment before the last names a section
// or nothing, so that setPath cannot fail.
func checkPath(root map[string]any, segs []string) error {
	m := root
	for i, seg := range segs[:len(segs)-1] {
		v, ok := m[seg]
		if !ok {
			return nil // the rest of the path will be created
		}
		sub, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%w: %s holds %s", ErrNotSection, quote(strings.Join(segs[:i+1], ".")), describe(v))
		}
		m = sub
	}
	return nil
}

// setPath returns a copy of root with v at segs. Only the sections on the
// path are copied; checkPath has vetted the path.
func setPath(root map[string]any, segs []string, v any) map[string]any {
	out := maps.Clone(root)
	if out == nil {
		out = map[string]any{}
	}
	if len(segs) == 1 {
		out[segs[0]] = v
		return out
	}
	child, _ := out[segs[0]].(map[string]any)
	out[segs[0]] = setPath(child, segs[1:], v)
	return out
}

func describe(v any) string {
	if v == nil {
		return "nil"
	}
	return fmt.Sprintf("a %T", v)
}

// Delete removes key and everything under it. A dotted key removes the
// child from a copy of its section; the section stays, possibly empty.
// Delete reports whether something was removed; a missing or invalid key
// is not an error.
func (c *Config) Delete(key string) bool {
	segs, err := splitKey(key)
	if err != nil {
		return false
	}
	c.mu.Lock()
	old := c.Snapshot()
	if _, ok := old.flat[key]; !ok {
		c.mu.Unlock()
		return false
	}
	c.publishLocked(old, newSnapshot(deletePath(old.root, segs), old.features, old.featList, old.version+1))
	c.unlockAndDeliver()
	return true
}

// deletePath returns a copy of root without segs, which must exist.
func deletePath(root map[string]any, segs []string) map[string]any {
	out := maps.Clone(root)
	if len(segs) == 1 {
		delete(out, segs[0])
		return out
	}
	out[segs[0]] = deletePath(out[segs[0]].(map[string]any), segs[1:])
	return out
}

// Enable turns the feature flag name on. Feature flags are a namespace of
// their own: they are not keys, Save does not write them and OnChange does
// not report them.
func (c *Config) Enable(name string) { c.setFeature(name, true) }

// Disable turns the feature flag name off. Disabling an unknown flag does nothing.
func (c *Config) Disable(name string) { c.setFeature(name, false) }

func (c *Config) setFeature(name string, on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.Snapshot()
	if _, ok := old.features[name]; ok == on {
		return
	}
	features := maps.Clone(old.features)
	if features == nil {
		features = map[string]struct{}{}
	}
	if on {
		features[name] = struct{}{}
	} else {
		delete(features, name)
	}
	list := slices.Sorted(maps.Keys(features))
	s := *old // same tree and index; only the flags differ
	s.features, s.featList, s.version = features, list, old.version+1
	c.cur.Store(&s)
}
