package statuslint

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// A fnFact records what a function does with files, in terms of its
// parameters, so that a call does what the body does, in the function's
// package and in every package that imports it. Keys in it are templates
// (see key.go). Every list is bounded, so facts are finite.
type fnFact struct {
	Recv      bool       // parameter 0 is the receiver (for display)
	Paths     []string   // Paths[i]: every return gives result i this key
	Results   []atoms    // Results[i]: what result i may hold
	Stores    []paramSet // what the function stores where parameter Param points
	Reads     []string   // files it reads and decodes
	Writes    []string   // files it writes
	MayWrites []string   // files that some implementation of an interface it calls writes
	Truncs    []trunc    // files it opens for writing with flags its caller may give
	InPlace   []trunc    // truncating whole-file writes whose file the caller names
	Locks     []lockOp   // file locks it takes or releases and keeps so
	Fills     []int      // parameters that code the analysis cannot see receives
	Moves     []int      // parameters naming files it renames over another file
	Cycles    []string   // files it reads and writes back itself (a read-modify-write of its own)
	Rereads   []string   // files it reads only after its writes, to refresh what it wrote (see fnState.reread)

	// Globals: what the function stores in its package's variables in
	// terms of its parameters. Only calls in the same package can store in
	// them, so this stays out of the fact other packages import.
	Globals []globalSet
}

// A globalSet is what a function stores in a package-level variable.
type globalSet struct {
	g     *ssa.Global
	Atoms atoms
}

// A paramSet is what a function stores where parameter Param points.
type paramSet struct {
	Param int
	Atoms atoms
}

// A trunc is a whole-file write that truncates the file first: os.WriteFile,
// os.Create, os.OpenFile with O_TRUNC (Flag), named What in messages.
type trunc struct {
	Key  string
	What string
	Flag intArg
}

// A lockOp is a file lock operation: flock(2) or fcntl(2) with How, which
// releases the lock when it equals Unlock.
type lockOp struct {
	How    intArg
	Unlock int64
}

func (*fnFact) AFact() {}

// A varFact records what a package-level variable holds: files' content,
// handles, and (for a variable of function type) what the functions it may
// hold do.
type varFact struct {
	Atoms atoms
	Call  *fnFact
	Key   string // the key of its only value (see checker.globalTerm)
}

func (*varFact) AFact() {}

func (f *varFact) String() string {
	var parts []string
	if len(f.Atoms) > 0 {
		parts = append(parts, "holds "+showAtoms(f.Atoms, false))
	}
	if f.Call != nil && !f.Call.empty() {
		parts = append(parts, f.Call.String())
	}
	if f.Key != "" {
		parts = append(parts, "is "+show(f.Key, false))
	}
	return strings.Join(parts, "; ")
}

func (f *varFact) empty() bool {
	return len(f.Atoms) == 0 && (f.Call == nil || f.Call.empty()) && f.Key == ""
}

func (f *fnFact) empty() bool {
	return !slices.ContainsFunc(f.Paths, func(p string) bool { return p != "" }) &&
		!slices.ContainsFunc(f.Results, func(a atoms) bool { return len(a) > 0 }) &&
		len(f.Stores) == 0 && len(f.Reads) == 0 && len(f.Writes) == 0 && len(f.MayWrites) == 0 && len(f.Truncs) == 0 &&
		len(f.InPlace) == 0 && len(f.Locks) == 0 && len(f.Fills) == 0 && len(f.Moves) == 0 && len(f.Cycles) == 0 &&
		len(f.Globals) == 0 && len(f.Rereads) == 0
}

func showAtoms(s atoms, recv bool) string {
	parts := make([]string, len(s))
	for i, a := range s {
		parts[i] = a.show(recv)
	}
	return strings.Join(parts, ", ")
}

// String renders the fact for people (and for the tests' want comments).
func (f *fnFact) String() string {
	var parts []string
	r := f.Recv
	for i, p := range f.Paths {
		if p != "" {
			parts = append(parts, fmt.Sprintf("path %d %s", i, show(p, r)))
		}
	}
	for i, a := range f.Results {
		if len(a) > 0 {
			parts = append(parts, fmt.Sprintf("result %d: %s", i, showAtoms(a, r)))
		}
	}
	for _, s := range f.Stores {
		parts = append(parts, fmt.Sprintf("stores in %s: %s", paramName(s.Param, r), showAtoms(s.Atoms, r)))
	}
	for _, k := range f.Reads {
		parts = append(parts, "reads "+show(k, r))
	}
	for _, k := range f.Writes {
		parts = append(parts, "writes "+show(k, r))
	}
	for _, k := range f.MayWrites {
		parts = append(parts, "may write "+show(k, r))
	}
	for _, t := range f.Truncs {
		parts = append(parts, fmt.Sprintf("opens %s with flags %s", show(t.Key, r), show(t.Flag.String(), r)))
	}
	for _, t := range f.InPlace {
		parts = append(parts, "in place "+show(t.Key, r))
	}
	for _, l := range f.Locks {
		parts = append(parts, "lock "+show(l.How.String(), r))
	}
	for _, p := range f.Fills {
		parts = append(parts, "fills "+paramName(p, r))
	}
	for _, p := range f.Moves {
		parts = append(parts, "renames "+paramName(p, r))
	}
	for _, k := range f.Cycles {
		parts = append(parts, "rewrites "+show(k, r))
	}
	for _, g := range f.Globals {
		parts = append(parts, fmt.Sprintf("stores in %s: %s", g.g.Name(), showAtoms(g.Atoms, r)))
	}
	for _, k := range f.Rereads {
		parts = append(parts, "rereads "+show(k, r))
	}
	return strings.Join(parts, "; ")
}

// normalize sorts the lists, removes duplicates and applies the bounds.
func (f *fnFact) normalize() {
	sortBound(&f.Reads, strings.Compare)
	sortBound(&f.Writes, strings.Compare)
	sortBound(&f.MayWrites, strings.Compare)
	cmpTrunc := func(a, b trunc) int {
		return cmp.Or(strings.Compare(a.Key, b.Key), strings.Compare(a.What, b.What), cmp.Compare(a.Flag.String(), b.Flag.String()))
	}
	sortBound(&f.Truncs, cmpTrunc)
	sortBound(&f.InPlace, cmpTrunc)
	sortBound(&f.Locks, func(a, b lockOp) int {
		return cmp.Or(cmp.Compare(a.How.String(), b.How.String()), cmp.Compare(a.Unlock, b.Unlock))
	})
	sortBound(&f.Fills, cmp.Compare)
	sortBound(&f.Moves, cmp.Compare)
	sortBound(&f.Cycles, strings.Compare)
	sortBound(&f.Rereads, strings.Compare)
	slices.SortFunc(f.Stores, func(a, b paramSet) int { return cmp.Compare(a.Param, b.Param) })
	f.Stores = slices.DeleteFunc(f.Stores, func(s paramSet) bool { return len(s.Atoms) == 0 })
	if len(f.Stores) > maxList {
		f.Stores = f.Stores[:maxList]
	}
	slices.SortFunc(f.Globals, func(a, b globalSet) int { return strings.Compare(a.g.Name(), b.g.Name()) })
	if len(f.Globals) > maxList {
		f.Globals = f.Globals[:maxList]
	}
}

func sortBound[T any](s *[]T, compare func(a, b T) int) {
	slices.SortFunc(*s, compare)
	*s = slices.CompactFunc(*s, func(a, b T) bool { return compare(a, b) == 0 })
	if len(*s) > maxList {
		*s = (*s)[:maxList]
	}
	if len(*s) == 0 {
		*s = nil
	}
}

func (f *fnFact) equal(g *fnFact) bool {
	if f == nil || g == nil {
		return f == g
	}
	if f.Recv != g.Recv {
		return false
	}
	// Facts with the same fields print the same; only others are printed,
	// which is most of a round's cost once nothing changes.
	return f.sameFields(g) || f.String() == g.String()
}

// sameFields reports whether f and g hold the same values, field by field.
func (f *fnFact) sameFields(g *fnFact) bool {
	return slices.Equal(f.Paths, g.Paths) &&
		slices.EqualFunc(f.Results, g.Results, func(a, b atoms) bool { return slices.Equal(a, b) }) &&
		slices.EqualFunc(f.Stores, g.Stores, func(a, b paramSet) bool {
			return a.Param == b.Param && slices.Equal(a.Atoms, b.Atoms)
		}) &&
		slices.Equal(f.Reads, g.Reads) && slices.Equal(f.Writes, g.Writes) &&
		slices.Equal(f.MayWrites, g.MayWrites) &&
		slices.Equal(f.Truncs, g.Truncs) && slices.Equal(f.InPlace, g.InPlace) &&
		slices.Equal(f.Locks, g.Locks) && slices.Equal(f.Fills, g.Fills) && slices.Equal(f.Moves, g.Moves) &&
		slices.Equal(f.Cycles, g.Cycles) && slices.Equal(f.Rereads, g.Rereads) &&
		slices.EqualFunc(f.Globals, g.Globals, func(a, b globalSet) bool {
			return a.g == b.g && slices.Equal(a.Atoms, b.Atoms)
		})
}

// merge adds what g does to f (a variable that may hold either function).
func (f *fnFact) merge(g *fnFact) {
	for len(f.Paths) < len(g.Paths) {
		f.Paths = append(f.Paths, "")
	}
	for i, p := range g.Paths {
		if f.Paths[i] != p {
			f.Paths[i] = ""
		}
	}
	for len(f.Results) < len(g.Results) {
		f.Results = append(f.Results, nil)
	}
	for i, a := range g.Results {
		f.Results[i].add(a...)
	}
	for _, s := range g.Stores {
		i := slices.IndexFunc(f.Stores, func(t paramSet) bool { return t.Param == s.Param })
		if i < 0 {
			f.Stores = append(f.Stores, paramSet{Param: s.Param})
			i = len(f.Stores) - 1
		}
		f.Stores[i].Atoms.add(s.Atoms...)
	}
	f.Reads = append(f.Reads, g.Reads...)
	f.Writes = append(f.Writes, g.Writes...)
	f.MayWrites = append(f.MayWrites, g.MayWrites...)
	f.Truncs = append(f.Truncs, g.Truncs...)
	f.InPlace = append(f.InPlace, g.InPlace...)
	f.Locks = append(f.Locks, g.Locks...)
	f.Fills = append(f.Fills, g.Fills...)
	f.Moves = append(f.Moves, g.Moves...)
	f.Cycles = append(f.Cycles, g.Cycles...)
	for _, s := range g.Globals {
		i := slices.IndexFunc(f.Globals, func(t globalSet) bool { return t.g == s.g })
		if i < 0 {
			f.Globals = append(f.Globals, globalSet{g: s.g})
			i = len(f.Globals) - 1
		}
		f.Globals[i].Atoms.add(s.Atoms...)
	}
	f.Rereads = append(f.Rereads, g.Rereads...)
	f.normalize()
}
