package config

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors, matched with errors.Is. The *Error that carries them
// names the operation and the key.
var (
	// ErrNotFound: no value is stored at the key.
	ErrNotFound = errors.New("not found")
	// ErrConversion: the stored value cannot be converted to the type asked for.
	ErrConversion = errors.New("cannot convert")
	// ErrInvalidKey: the key is empty, has an empty dotted segment, or has
	// more segments than a value may be nested deep (256).
	ErrInvalidKey = errors.New("invalid key")
	// ErrUnsupported: the value (or something inside it) is of a type the
	// config cannot copy safely: func, chan, pointer, unsafe pointer, a
	// struct with unexported fields, a cycle, or a section key with a dot.
	ErrUnsupported = errors.New("unsupported value")
	// ErrNotSection: a dotted key goes through a value that is not a
	// section (a map[string]any), so there is nowhere to put the child.
	ErrNotSection = errors.New("not a section")
)

// Error describes a failed operation on a key, a file or an environment variable.
type Error struct {
	Op   string // "set", "delete", "get", "decode", "load", "save", "env"
	Key  string // the key; the file path for load and save; the variable for env
	Path string // where inside the value the problem is, if any (e.g. "db.hosts[2]")
	Err  error  // one of the sentinels above, possibly wrapped with detail
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("config: ")
	b.WriteString(e.Op)
	if e.Key != "" {
		b.WriteString(" ")
		b.WriteString(e.Key)
	}
	if e.Path != "" && e.Path != e.Key {
		b.WriteString(": at ")
		b.WriteString(e.Path)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// detail wraps a sentinel with a human-readable reason, keeping errors.Is.
type detail struct {
	sentinel error
	msg      string
}

func (d *detail) Error() string { return d.sentinel.Error() + ": " + d.msg }
func (d *detail) Unwrap() error { return d.sentinel }

// splitKey validates a dotted key and returns its segments.
func splitKey(key string) ([]string, error) {
	if key == "" {
		return nil, &detail{ErrInvalidKey, "empty key"}
	}
	// Counted before splitting: a hostile key must cost no more than its length.
	if strings.Count(key, ".") >= maxDepth {
		return nil, &detail{ErrInvalidKey, fmt.Sprintf("more than %d segments", maxDepth)}
	}
	segs := strings.Split(key, ".")
	for _, s := range segs {
		if s == "" {
			return nil, &detail{ErrInvalidKey, "empty segment in " + quote(key)}
		}
	}
	return segs, nil
}

// checkSegment reports why k cannot be a key inside a section, or "".
func checkSegment(k string) string {
	if k == "" {
		return "empty key inside a section"
	}
	if strings.Contains(k, ".") {
		return "key " + quote(k) + " inside a section contains '.', which dotted lookup cannot reach"
	}
	return ""
}

func quote(s string) string { return `"` + s + `"` }
