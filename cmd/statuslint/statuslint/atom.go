package statuslint

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// An atom is one thing a value may hold that matters here. A value's
// atoms are a set (see atoms), kept sorted and bounded.
type atom struct {
	Kind     atomKind
	Key      string // content, decoded, handle: the file's key; function: its key
	Param    int    // param, decParam: the parameter
	Flag     intArg // handle: the flags it was opened with
	NoHandle bool   // param: only what it holds other than handles (text, values)
}

type atomKind uint8

const (
	aContent  atomKind = iota + 1 // bytes or text read from the file
	aDecoded                      // a value decoded from the file's content
	aHandle                       // an open handle on the file
	aParam                        // what parameter Param holds (in a summary)
	aDecParam                     // the decoded form of what parameter Param holds
	aFunc                         // a function value (see checker.funcOf)
)

// An intArg is an integer argument of a file API (open flags, a lock
// operation): a constant, or the value of a parameter, which the caller
// knows.
type intArg struct {
	Known     bool
	Val       int64
	FromParam bool
	Param     int
}

func (a intArg) String() string {
	switch {
	case a.Known:
		return fmt.Sprint(a.Val)
	case a.FromParam:
		return paramMarker(a.Param)
	}
	return "?"
}

func compareAtoms(a, b atom) int {
	// The fields are compared in order, each only on a tie: this runs for
	// every atom added to a set.
	if c := cmp.Compare(a.Kind, b.Kind); c != 0 {
		return c
	}
	if c := strings.Compare(a.Key, b.Key); c != 0 {
		return c
	}
	return cmp.Or(cmp.Compare(a.Param, b.Param),
		boolCompare(a.NoHandle, b.NoHandle),
		boolCompare(a.Flag.Known, b.Flag.Known), cmp.Compare(a.Flag.Val, b.Flag.Val),
		boolCompare(a.Flag.FromParam, b.Flag.FromParam), cmp.Compare(a.Flag.Param, b.Flag.Param))
}

func boolCompare(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// atoms is a sorted set of at most maxAtoms atoms.
type atoms []atom

// add adds the atoms of more and reports whether s changed.
func (s *atoms) add(more ...atom) bool {
	if len(*s) == 0 && len(more) > 0 && isSet(more) {
		// the common case, a set copied into an empty one: what adding
		// its atoms one by one would make, in one copy
		*s = append((*s)[:0], more[:min(len(more), maxAtoms)]...)
		return true
	}
	changed := false
	for _, a := range more {
		i, found := slices.BinarySearchFunc(*s, a, compareAtoms)
		if found || len(*s) >= maxAtoms {
			continue
		}
		*s = slices.Insert(*s, i, a)
		changed = true
	}
	return changed
}

// isSet reports whether as is sorted and has no atom twice.
func isSet(as []atom) bool {
	for i := 1; i < len(as); i++ {
		if compareAtoms(as[i-1], as[i]) >= 0 {
			return false
		}
	}
	return true
}

func (s atoms) has(kind atomKind) bool {
	return slices.ContainsFunc(s, func(a atom) bool { return a.Kind == kind })
}

func union(sets ...atoms) atoms {
	var out atoms
	for _, s := range sets {
		out.add(s...)
	}
	return out
}

// without returns the atoms of s that keep says to keep.
func (s atoms) filter(keep func(atom) bool) atoms {
	var out atoms
	for _, a := range s {
		if keep(a) {
			out = append(out, a)
		}
	}
	return out
}

// exportable reports whether an atom can enter a fact: its key, if any,
// is a template.
func (a atom) exportable() bool {
	switch a.Kind {
	case aContent, aDecoded, aHandle, aFunc:
		return isTemplate(a.Key)
	}
	return true
}

func (a atom) String() string { return a.show(false) }

func (a atom) show(recv bool) string {
	switch a.Kind {
	case aContent:
		return "content of " + show(a.Key, recv)
	case aDecoded:
		return "decoded " + show(a.Key, recv)
	case aHandle:
		return fmt.Sprintf("handle of %s (flags %s)", show(a.Key, recv), show(a.Flag.String(), recv))
	case aParam:
		if a.NoHandle {
			return paramName(a.Param, recv) + " (no handle)"
		}
		return paramName(a.Param, recv)
	case aDecParam:
		return "decoded " + paramName(a.Param, recv)
	case aFunc:
		return "func " + show(a.Key, recv)
	}
	return "?"
}
