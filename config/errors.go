package config

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentstate/core/fs"
)

// Sentinel errors, matched with [errors.Is]. The *Error that carries them
// names the operation and the key.
var (
	// ErrNotFound: no value is stored at the key.
	ErrNotFound = errors.New("not found")
	// ErrConversion: the stored value cannot be converted to the type asked for.
	ErrConversion = errors.New("cannot convert")
	// ErrInvalidKey: the key is empty, has an empty dotted segment, or has
	// more segments than a value may be nested deep (256).
	ErrInvalidKey = errors.New("invalid key")
	// ErrUnsupported: the value, or something inside it, is one the config
	// cannot copy safely or Save cannot write (see [Config.Set]).
	ErrUnsupported = errors.New("unsupported value")
	// ErrNotSection: a dotted key goes through a value that is not a
	// section (a map[string]any), so there is nowhere to put the child.
	ErrNotSection = errors.New("not a section")
)

// Error describes a failed operation on a key, a file or an environment
// variable. Its message names each once: "config: set db.hooks[2]:
// unsupported value: ...", "config: load agents.yaml: open: no such file
// or directory". A key or path longer than 256 bytes is shortened in the
// message, keeping its start and end; the fields hold it whole.
type Error struct {
	Op   string // "set", "get", "decode", "load", "save", "env"
	Key  string // the key; the file path for load and save; the variable for env
	Path string // where inside the value the problem is, if any (e.g. "db.hosts[2]")
	Err  error  // wraps one of the sentinels above, or the cause (an I/O error)
}

func (e *Error) Error() string {
	name, at := e.Key, e.Path
	if within(at, name) {
		name, at = at, "" // the path starts with the key: show it alone
	}
	var b strings.Builder
	b.WriteString("config: ")
	b.WriteString(e.Op)
	if name != "" {
		b.WriteString(" ")
		b.WriteString(clip(name))
	}
	if at != "" {
		b.WriteString(": at ")
		b.WriteString(clip(at))
	}
	b.WriteString(": ")
	b.WriteString(cause(e.Key, e.Err))
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// within reports whether path is key or a place inside the value at key.
func within(path, key string) bool {
	if key == "" || !strings.HasPrefix(path, key) {
		return false
	}
	rest := path[len(key):]
	return rest == "" || rest[0] == '.' || rest[0] == '['
}

// cause is the message of err without the file name that the *Error
// already shows: os and fs errors repeat it.
func cause(name string, err error) string {
	switch x := err.(type) {
	case nil:
		return "unknown error"
	case *os.PathError:
		if x.Path == name {
			return x.Op + ": " + x.Err.Error()
		}
	case *fs.PathError:
		if x.Path == name {
			return x.Op + ": " + x.Err.Error()
		}
	}
	return err.Error()
}

// maxShown bounds how much of one key, path or name a message shows, so
// that a hostile 80 KB key does not make an 80 KB message.
const maxShown = 256

// clip shortens s to less than maxShown bytes, keeping its start and its
// end (where a path names the innermost element).
func clip(s string) string {
	if len(s) <= maxShown {
		return s
	}
	head, tail := maxShown*5/8, len(s)-maxShown/4 // and at most 22 bytes between
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return s[:head] + "...(" + strconv.Itoa(tail-head) + " bytes)..." + s[tail:]
}

func quote(s string) string { return `"` + clip(s) + `"` }

// splitKey validates a dotted key and returns its segments. The messages
// do not repeat the key: the *Error shows it.
func splitKey(key string) ([]string, error) {
	if err := checkDotted(key); err != nil {
		return nil, err
	}
	return strings.Split(key, "."), nil
}

// checkDotted says why key is not a key, or nil, in one pass that does
// not allocate: a hostile key costs no more than its length.
func checkDotted(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	dots, empty := 0, key[len(key)-1] == '.'
	for i := 0; i < len(key); i++ {
		if key[i] == '.' {
			dots++
			empty = empty || i == 0 || key[i-1] == '.'
		}
	}
	switch {
	case dots >= maxDepth:
		return fmt.Errorf("%w: more than %d segments", ErrInvalidKey, maxDepth)
	case empty:
		return fmt.Errorf("%w: empty segment", ErrInvalidKey)
	}
	return nil
}

// checkSegment reports why k cannot be a key inside a section, or "". The
// path of the error names k.
func checkSegment(k string) string {
	if k == "" {
		return "empty key inside a section"
	}
	if strings.Contains(k, ".") {
		return "key inside a section contains '.', which dotted lookup cannot reach"
	}
	return ""
}
