package slots

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/internal/jsontext"
	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/claim"
	"github.com/agentstate/core/status/internal/jsondoc"
)

// A Registry is the registry document: the active slots and the policy
// that admits new ones. Its JSON form is the format of docs/PROTOCOL.md
// (Registries of slots); a Store keeps the members it does not declare.
// Change it through this package's operations, which keep ActiveCount and
// TotalSpawned derived from Agents; set the policy with any writer (a
// Store's Mutate, corestate set).
type Registry struct {
	// Agents are the active slots, oldest first.
	Agents []Slot `json:"agents"`
	// ActiveCount is len(Agents), written by every operation, for readers.
	ActiveCount int `json:"active_count"`
	// TotalSpawned counts the slots ever admitted.
	TotalSpawned int `json:"total_spawned"`
	// MaxConcurrent caps the active slots; 0 admits nothing.
	MaxConcurrent int `json:"max_concurrent"`
	// MaxTotal caps TotalSpawned; 0 is no cap.
	MaxTotal int `json:"max_total,omitempty"`
	// MaxDepth is the greatest depth admitted; 0 admits roots only.
	MaxDepth int `json:"max_depth"`
}

// A Slot is one active slot of a [Registry].
type Slot struct {
	// ID names the slot in its registry, for as long as it exists.
	ID string
	// Key, if set, is held by no other active slot.
	Key string
	// Parent is the ID of the slot this one was spawned under ("" for a
	// root), which stays active as long as this one.
	Parent string
	// Depth is 0 for a root, else the parent's Depth + 1.
	Depth int
	// Owner holds the slot: its reserver, until the working process
	// adopts it or is handed it.
	Owner claim.Owner
	// ReservedAt is when the slot was admitted; AdoptedAt, when its working
	// process became its owner (zero until then).
	ReservedAt, AdoptedAt time.Time
	// Docs are the slot's other documents, as paths relative to the
	// registry's directory with forward slashes (see [DocPath]).
	Docs []string
	// Resources name what to remove when the slot ends (a prompt file, a
	// log directory, a session). This package never acts on them.
	Resources map[string]string
	// Members are the slot's other members (the program's own, such as an
	// agent's type), with their values as read.
	Members status.Document
}

// slotJSON is a Slot's declared members, as the file holds them: the
// order and the omissions of docs/PROTOCOL.md.
type slotJSON struct {
	ID         string            `json:"id"`
	Key        string            `json:"key,omitempty"`
	Parent     string            `json:"parent,omitempty"`
	Depth      int               `json:"depth"`
	Owner      claim.Owner       `json:"owner"`
	ReservedAt time.Time         `json:"reserved_at,omitzero"`
	AdoptedAt  time.Time         `json:"adopted_at,omitzero"`
	Docs       []string          `json:"docs,omitempty"`
	Resources  map[string]string `json:"resources,omitempty"`
}

// declared are slotJSON's names.
var declared = []string{"id", "key", "parent", "depth", "owner", "reserved_at", "adopted_at", "docs", "resources"}

// slotCodec encodes a slot's declared members as a Store encodes a
// document.
var slotCodec = jsondoc.For(reflect.TypeFor[slotJSON]())

// MarshalJSON writes the slot as docs/PROTOCOL.md lays it out: the
// declared members in order, empty optional ones left out, then Members
// sorted by name.
func (s Slot) MarshalJSON() ([]byte, error) {
	v := slotJSON{s.ID, s.Key, s.Parent, s.Depth, s.Owner, s.ReservedAt, s.AdoptedAt, s.Docs, s.Resources}
	b, err := slotCodec.Marshal(&v)
	if err != nil || s.Members.Len() == 0 {
		return b, err
	}
	b = b[:len(b)-1] // "}"
	for name, value := range s.Members.All() {
		if isDeclared(name) {
			return nil, fmt.Errorf("slot %s: Members holds %q, a member Slot declares", s.ID, name)
		}
		key, _ := json.Marshal(name) // a string always encodes
		b = append(append(append(append(b, ','), key...), ':'), value...)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads a slot as every implementation reads it, by the rules
// a Store applies to a document: a name repeated in the object, a name that
// differs from a declared member's only in case, and a string that is not
// UTF-8 or holds a lone surrogate are refused; the members the slot does not
// declare go to Members with their values. It reads the object once.
func (s *Slot) UnmarshalJSON(data []byte) error {
	*s = Slot{}
	var seen uint16
	var others []string // the other members' names and values, in pairs
	err := jsondoc.Members(data, func(name string, v []byte) error {
		i := slices.Index(declared, name)
		if i < 0 {
			for _, d := range declared {
				if strings.EqualFold(d, name) {
					return fmt.Errorf("name %q differs from %q only in case (Go would read it as %q, other languages would not)", name, d, d)
				}
			}
			for j := 0; j < len(others); j += 2 {
				if others[j] == name {
					return fmt.Errorf("duplicate name %q", name)
				}
			}
			others = append(others, name, string(v))
			return nil
		}
		if seen&(1<<i) != 0 {
			return fmt.Errorf("duplicate name %q", name)
		}
		seen |= 1 << i
		if string(v) == "null" {
			return nil // as encoding/json reads it: the zero value
		}
		return s.decode(name, v)
	})
	if err != nil {
		return fmt.Errorf("slot: %w", err)
	}
	for j := 0; j < len(others); j += 2 {
		if err := s.Members.Set(others[j], json.RawMessage(others[j+1])); err != nil {
			return fmt.Errorf("slot: %w", err)
		}
	}
	return nil
}

// decode decodes the value v of the declared member name.
func (s *Slot) decode(name string, v []byte) error {
	var err error
	switch name {
	case "id":
		s.ID, err = jsondoc.String(v)
	case "key":
		s.Key, err = jsondoc.String(v)
	case "parent":
		s.Parent, err = jsondoc.String(v)
	case "depth":
		s.Depth, err = strconv.Atoi(string(v))
	case "reserved_at":
		err = s.ReservedAt.UnmarshalJSON(v)
	case "adopted_at":
		err = s.AdoptedAt.UnmarshalJSON(v)
	default:
		if err = jsontext.CheckStrings(v); err == nil {
			err = json.Unmarshal(v, s.field(name))
		}
	}
	if err != nil {
		return fmt.Errorf("member %s: %w", name, err)
	}
	return nil
}

// field returns a pointer to the field of a declared member of another
// type than a string, a number or a time.
func (s *Slot) field(name string) any {
	switch name {
	case "owner":
		return &s.Owner
	case "docs":
		return &s.Docs
	}
	return &s.Resources
}

func isDeclared(name string) bool { return slices.Contains(declared, name) }

// clone returns a copy of s that shares nothing with it.
func (s Slot) clone() Slot {
	s.Docs = append([]string(nil), s.Docs...)
	s.Resources = maps.Clone(s.Resources)
	s.Members = s.Members.Clone()
	return s
}

// maxName is the longest ID or key, in bytes.
const maxName = 256

// checkName reports whether s may be an ID or a key: 1 to maxName bytes
// of UTF-8 without control characters, so that it fits one line of
// corestate's output.
func checkName(what, s string) error {
	switch {
	case s == "":
		return fmt.Errorf("empty %s", what)
	case len(s) > maxName:
		return fmt.Errorf("%s of %d bytes (at most %d)", what, len(s), maxName)
	case !utf8.ValidString(s):
		return fmt.Errorf("%s %q is not UTF-8", what, s)
	case strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return fmt.Errorf("%s %q holds a control character", what, s)
	}
	return nil
}

// checkDocPath reports whether p has the shape of a slot's document: a
// relative path with forward slashes, no empty, "." or ".." element, in
// UTF-8 without control characters.
func checkDocPath(p string) error {
	if err := checkName("document path", p); err != nil {
		return err
	}
	if strings.HasPrefix(p, "/") || strings.Contains(p, `\`) {
		return fmt.Errorf("document path %q is not relative with forward slashes", p)
	}
	for _, e := range strings.Split(p, "/") {
		if e == "" || e == "." || e == ".." {
			return fmt.Errorf("document path %q has an element %q", p, e)
		}
	}
	return nil
}

// DocPath returns the path of a document that a slot of reg names (an
// element of [Slot.Docs]): name resolved against the directory of reg's
// path, after checking that name has the shape docs/PROTOCOL.md requires and
// that its directory, if it exists, stays inside that directory with its
// symbolic links followed. A name that leads out through a link is refused
// with an error matching ErrInvalid and [fs.ErrOutsideRoot]. Use it to open a
// slot's documents for [Reap]; see Security in the package doc.
func DocPath(reg *status.Store[Registry], name string) (string, error) {
	if err := checkDocPath(name); err != nil {
		return "", fmt.Errorf("slots: %w: %w", ErrInvalid, err)
	}
	dir := filepath.Dir(reg.Name())
	if err := inside(dir, path.Dir(name)); err != nil {
		return "", fmt.Errorf("slots: %w: document %s of %s: %w", ErrInvalid, name, reg.Name(), err)
	}
	return filepath.Join(dir, filepath.FromSlash(name)), nil
}

// inside reports an error matching fs.ErrOutsideRoot if the directory sub
// of dir exists and leads out of dir through a symbolic link. Other errors
// are left to the open of the document, which meets them too.
func inside(dir, sub string) error {
	if sub == "." {
		return nil
	}
	root, err := fs.New(dir)
	if err != nil {
		return nil
	}
	defer root.Close()
	if _, err := root.Stat(sub); errors.Is(err, fs.ErrOutsideRoot) {
		return err
	}
	return nil
}

// docName returns the name a slot records for the document at path: path
// relative to the directory of the registry at reg, with forward slashes.
func docName(reg, path string) (string, error) {
	dir, err := filepath.Abs(filepath.Dir(reg))
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(dir, abs)
	if err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("document %s is not inside the registry's directory %s", path, dir)
	}
	name := filepath.ToSlash(rel)
	if err := checkDocPath(name); err != nil {
		return "", err
	}
	return name, nil
}

// maxDocs is the most documents a slot may name: with the registry, the
// documents one transaction may commit (docs/PROTOCOL.md), so that a reaper
// locks no more than one transaction takes, whatever a registry says.
const maxDocs = 1023

// check applies the registry rules of docs/PROTOCOL.md.
func (r *Registry) check() error {
	switch {
	case r.MaxConcurrent < 0:
		return fmt.Errorf("%w: max_concurrent %d", ErrInvalid, r.MaxConcurrent)
	case r.MaxTotal < 0:
		return fmt.Errorf("%w: max_total %d", ErrInvalid, r.MaxTotal)
	case r.MaxDepth < 0:
		return fmt.Errorf("%w: max_depth %d", ErrInvalid, r.MaxDepth)
	}
	byID := make(map[string]*Slot, len(r.Agents))
	keys := make(map[string]bool, len(r.Agents))
	for i := range r.Agents {
		s := &r.Agents[i]
		if err := checkName("id", s.ID); err != nil {
			return fmt.Errorf("%w: slot %d: %w", ErrInvalid, i, err)
		}
		if byID[s.ID] != nil {
			return fmt.Errorf("%w: two slots with the id %q", ErrInvalid, s.ID)
		}
		byID[s.ID] = s
		if s.Key != "" {
			if err := checkName("key", s.Key); err != nil {
				return fmt.Errorf("%w: slot %s: %w", ErrInvalid, s.ID, err)
			}
			if keys[s.Key] {
				return fmt.Errorf("%w: two slots with the key %q", ErrInvalid, s.Key)
			}
			keys[s.Key] = true
		}
		if len(s.Docs) > maxDocs {
			return fmt.Errorf("%w: slot %s: %d documents, limit %d", ErrInvalid, s.ID, len(s.Docs), maxDocs)
		}
		for _, d := range s.Docs {
			if err := checkDocPath(d); err != nil {
				return fmt.Errorf("%w: slot %s: %w", ErrInvalid, s.ID, err)
			}
		}
		for name := range s.Resources {
			if name == "" {
				return fmt.Errorf("%w: slot %s: a resource without a name", ErrInvalid, s.ID)
			}
		}
	}
	for _, s := range r.Agents {
		want := 0
		if s.Parent != "" {
			p := byID[s.Parent]
			if p == nil || s.Parent == s.ID {
				return fmt.Errorf("%w: slot %s: parent %q is not another active slot", ErrInvalid, s.ID, s.Parent)
			}
			want = p.Depth + 1
		}
		if s.Depth != want {
			return fmt.Errorf("%w: slot %s: depth %d, want %d", ErrInvalid, s.ID, s.Depth, want)
		}
	}
	return nil
}

// settle writes the counts from the slots.
func (r *Registry) settle() {
	if r.Agents == nil {
		r.Agents = []Slot{}
	}
	r.ActiveCount = len(r.Agents)
	r.TotalSpawned = max(r.TotalSpawned, len(r.Agents))
}

// find returns the index of the slot with the given ID, or -1.
func (r *Registry) find(id string) int {
	for i := range r.Agents {
		if r.Agents[i].ID == id {
			return i
		}
	}
	return -1
}

// parents returns the IDs that slots name as their parent.
func (r *Registry) parents() map[string]bool {
	p := map[string]bool{}
	for i := range r.Agents {
		if r.Agents[i].Parent != "" {
			p[r.Agents[i].Parent] = true
		}
	}
	return p
}

// hasChildren reports whether a slot names id as its parent.
func (r *Registry) hasChildren(id string) bool {
	for i := range r.Agents {
		if r.Agents[i].Parent == id {
			return true
		}
	}
	return false
}
