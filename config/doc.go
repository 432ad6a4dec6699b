// Package config stores configuration values that many goroutines read and
// a few write, without ever sharing mutable state with its callers.
//
// # Examples
//
// Runnable examples with their output, checked by go test (example_test.go,
// example_formats_test.go): dotted keys and sections (Example); getters
// returning copies (ExampleSnapshot_Get); values Set refuses
// (ExampleConfig_Set_unsupported); a wrongly typed or missing key
// (ExampleSnapshot_Lookup); snapshots (ExampleConfig_Snapshot); change
// callbacks (ExampleConfig_OnChange); JSON and YAML files
// (ExampleConfig_Load, ExampleConfig_Save, ExampleConfig_LoadYAML);
// environment overrides (ExampleConfig_FromEnv); a section into a struct
// (ExampleDecode), the whole configuration (ExampleDecodeAll); typos
// refused (ExampleRejectUnknownKeys); feature flags
// (ExampleSnapshot_Enabled).
//
// # Guarantees
//
//   - Copy in, copy out. Set stores a deep copy of its value; every getter
//     returns a deep copy of maps and slices (scalars are returned as they
//     are: they cannot be mutated). Mutating a value passed to Set, or one
//     a getter returned, never changes what is stored or what another
//     goroutine sees. Copies are made by a type switch and reflection,
//     never through JSON, so an int stays an int.
//   - Lock-free reads. A [Config] is written through its methods and read
//     through the getters of the immutable [Snapshot] it holds behind an
//     atomic pointer: c.Snapshot().Int("db.port") is one atomic load plus
//     one map lookup in a flattened index of dotted keys built at write
//     time; scalar getters do not allocate. Writers serialise on a mutex
//     and publish a new snapshot (copy-on-write).
//   - Consistency. A [Snapshot] never changes; reading several keys from one
//     Snapshot never mixes two versions. Every write is atomic: readers see
//     all of a Set, Delete or Load or none of it.
//   - Bad input is refused whole: an invalid key, or a value that cannot
//     be copied safely or that Save could not write (a func, a pointer, a
//     cycle, NaN, a complex number: the list is at [Config.Set]), makes
//     Set return an [*Error] naming the key and the path inside the value,
//     and nothing is stored. Load and FromEnv refuse the same, so Save
//     can write whatever is stored.
//   - Getters never panic, a nil *Snapshot's included: a missing key or
//     an impossible conversion gives the zero value; Lookup says which of
//     the two happened, or that the key is not one.
//   - OnChange callbacks run once per write that really changed a watched
//     key, with no lock held, in publication order, in a writer's goroutine.
//     The package starts no goroutines.
//
// # Keys
//
// A key is a non-empty dotted path such as "db.host"; no segment may be
// empty, and no key has more than 256 segments: every section and
// non-empty list on the way to a value counts one level, the sections a
// dotted key passes through included, and nothing is stored deeper than
// 256 levels. A map[string]any value is a section: its children are reachable
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
// # Files and the environment
//
// [Config.LoadFile] reads JSON, or YAML for a name ending in .yaml or .yml,
// and [Config.SaveFile] writes the same format back. Both formats load into one data
// model, the one JSON gives: sections (map[string]any), lists ([]any),
// strings, bools, nil, int64 for integers that fit and float64 for other
// numbers; a YAML file and its JSON translation load into equal values.
// What that model cannot hold (non-string mapping keys, .inf and .nan, a
// number beyond the float64 range such as 1e400, !!binary, custom tags) is
// refused with the file, the key and the line. So is, in either format and
// in environment values, a string that another program would read
// differently: bytes that are not UTF-8, a \u escape of a lone surrogate
// (encoding/json reads both as U+FFFD) and NUL.
// YAML goes through go.yaml.in/yaml/v3, the YAML organisation's maintained
// module (no dependencies of its own, anchors, merge keys, a guard against
// alias bombs); it is this package's only dependency outside the standard
// library.
//
// [Config.FromEnv] then overrides keys from environment variables
// (AGENTS_DISPATCH__MAX_WORKERS for "dispatch.max_workers"), each typed
// like the value it replaces, all in one write. [Decode] turns a section,
// and [DecodeAll] the whole configuration, into a struct, or any other
// type, as a copy. By default a misspelt variable creates a key and a
// misspelt key in a file is ignored by Decode; with [RejectUnknownKeys]
// both are errors naming them ([ErrUnknownKey]), and [IgnoreEnv] leaves
// out variables that are not overrides. [Config.WatchFile] reloads the
// file (and, with [WithEnv], its overrides) whenever it, or the target of
// a symbolic link at its path, changes.
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
//   - Files do not keep Go types: an int, a map[string]string, a []string
//     or a time.Duration come back from Save then Load as int64,
//     map[string]any, []any and int64 nanoseconds, a time.Time as an RFC
//     3339 string; SaveYAML writes the same values. The typed getters and
//     Decode read those forms back. What Load produces comes back exactly.
//   - Without [RejectUnknownKeys], keys of a section that no struct field
//     names are ignored by Decode, and a variable that names no key
//     creates one, so a typo in either is not reported.
package config
