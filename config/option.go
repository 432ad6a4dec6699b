package config

import "errors"

// ErrUnknownKey is matched ([errors.Is]) by the error of a strict read
// ([RejectUnknownKeys]): an environment variable that names no stored key,
// or a stored key that no field of the type decoded into takes.
var ErrUnknownKey = errors.New("unknown key")

// An Option makes [Config.FromEnv], [Decode] or [DecodeAll] stricter. Each
// says which of them it applies to; the others ignore it, so one list of
// options can serve them all.
type Option func(*options)

type options struct {
	rejectUnknown bool
	ignore        []string
}

func optionsOf(opts []Option) options {
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

// RejectUnknownKeys makes a typo an error instead of a new or ignored key,
// as viper's UnmarshalExact and mapstructure's ErrorUnused do for decoding:
//
//   - [Config.FromEnv] refuses a variable whose name matches no key stored
//     before the call (FLEET_DISPATCH__MAX_CONCURENT when the key is
//     dispatch.max_concurrent) instead of creating the key; the *Error
//     names the variable in Key and the key it would create in Path.
//     Variables that name something else than a key (FLEET_CONFIG, the
//     file's own name) are left out with [IgnoreEnv].
//   - [Decode] and [DecodeAll] refuse a key of a section decoded into a
//     struct that no field takes (see the struct rule at Decode), at any
//     depth; each *Error names the key in Path.
//
// All the unknown variables or keys are reported, one *Error each, joined
// ([errors.Join]) in sorted order; every one matches ErrUnknownKey, and
// nothing is written or decoded.
func RejectUnknownKeys() Option {
	return func(o *options) { o.rejectUnknown = true }
}

// IgnoreEnv makes [Config.FromEnv] skip the variables with these exact
// names, which start with its prefix but are not overrides (FLEET_CONFIG
// naming the file to load, say). Decode and DecodeAll ignore it.
func IgnoreEnv(names ...string) Option {
	return func(o *options) { o.ignore = append(o.ignore, names...) }
}
