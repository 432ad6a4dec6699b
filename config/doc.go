// Package config stores configuration values that many goroutines read and
// a few write, without ever sharing mutable state with its callers.
//
// # Guarantees
//
//   - Copy in, copy out. Set stores a deep copy of its value; every getter
//     returns a deep copy of maps and slices (scalars are returned as they
//     are: they cannot be mutated). Mutating a value passed to Set, or one
//     a getter returned, never changes what is stored or what another
//     goroutine sees. Copies are made by a type switch and reflection,
//     never through JSON, so an int stays an int.
//   - Lock-free reads. The content is an immutable *Snapshot behind an
//     atomic pointer. A read is one atomic load plus one map lookup in a
//     flattened index of dotted keys built at write time; scalar getters
//     do not allocate. Writers serialise on a mutex and publish a new
//     snapshot (copy-on-write).
//   - Consistency. A Snapshot never changes; reading several keys from one
//     Snapshot never mixes two versions. Every write is atomic: readers see
//     all of a Set, Delete or Load or none of it.
//   - Bad input is refused whole: an unsupported value (func, chan,
//     pointer, cycle, ...) or an invalid key makes Set return an *Error
//     naming the key and the path inside the value, and nothing is stored.
//   - Getters never panic: a missing key or an impossible conversion gives
//     the zero value; Lookup says which of the two happened.
//   - OnChange callbacks run once per write that really changed a watched
//     key, with no lock held, in publication order, in a writer's goroutine.
//     The package starts no goroutines.
//
// # Keys
//
// A key is a non-empty dotted path such as "db.host"; no segment may be
// empty. A map[string]any value is a section: its children are reachable
// by dotted keys, for reading and for writing. Other maps
// (map[string]string, ...) are plain values; dotted keys do not reach into
// them, nor into slices.
//
//   - Get of a section returns a deep copy of the whole map[string]any.
//   - Set of a map[string]any makes its children visible by dotted key.
//   - Set("db.host", v) writes into a copy of the "db" section (creating
//     it if missing); if "db" holds a non-section value, Set fails with
//     ErrNotSection and nothing changes.
//   - Delete("db.host") removes host from a copy of "db"; "db" stays, even
//     if it becomes empty. Delete("db") removes the whole section.
//   - Keys lists, sorted, every key whose value is not a section, plus
//     empty sections.
//
// # Not guaranteed
//
//   - Values inside a time.Time (its *time.Location) are shared, as package
//     time treats them as immutable.
//   - Writes cost O(size of the config): each one rebuilds the flat index.
//     The package is built for configuration, read far more than written,
//     not as a general-purpose key-value store.
//   - Feature flags (Enable, Disable, Enabled) are not keys: Save does not
//     write them and OnChange does not report them.
//   - JSON does not keep Go types: a map[string]string, a []string or a
//     time.Duration come back from Save then Load as map[string]any, []any
//     and int64 nanoseconds. The typed getters read those forms back.
package config
