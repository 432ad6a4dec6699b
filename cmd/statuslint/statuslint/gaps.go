package statuslint

import (
	"fmt"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// Where the analysis cannot connect a read to a write, a clean result
// means "not followed", not "nothing to report". Each package records
// where that happens, in its gapsFact:
//
//   - a call through an interface method whose implementations are not in
//     the package or its imports (a configuration's Write implemented by a
//     package that only main imports);
//   - a call of a function value whose functions are not in sight (a field
//     that another package fills), when it is given a document or returns
//     a value of a type the program defines (it may be a loader);
//   - a write of a file that the whole program names (see programKey), of
//     which no read is in the package or its imports: a read in another
//     package is not connected to it (most such writes are of fresh
//     documents: only the standalone command, which sees the reads of
//     every package, lists one, where another package reads the file);
//   - a package whose helpers did not settle in maxRounds rounds.
//
// With -unfollowed each is reported as a diagnostic where it is; the
// standalone command prints a summary of the packages it analysed, after
// looking for the implementations, functions and reads across the whole
// program (go vet's protocol carries findings only: a summary there would
// be a finding, and fail the build).

// A gapKind is a kind of place the analysis does not follow.
type gapKind uint8

const (
	gapIface   gapKind = iota + 1 // a call through an interface with no implementation in sight
	gapFuncVal                    // a call of a function value with no function in sight
	gapWrite                      // a write of a file read nowhere in sight
	gapRounds                     // helpers that did not settle
)

// A gap is one place of a gapKind.
type gap struct {
	Kind gapKind
	What string // the interface method (named as -readers names it), the function value's type, the file's key
	Call string // the call as written, for messages
	Pos  string // file.go:line
	Name string // gapWrite: the file, for messages
	Doc  bool   // given a document

	pos token.Pos
}

// A gapsFact lists a package's gaps, at most maxGaps of each kind, and
// how many there were.
type gapsFact struct {
	Gaps   []gap
	Counts map[gapKind]int
}

const maxGaps = 8

func (*gapsFact) AFact() {}

func (f *gapsFact) String() string {
	var parts []string
	for _, g := range f.Gaps {
		parts = append(parts, g.String())
	}
	return "not followed: " + strings.Join(parts, "; ")
}

func (g gap) String() string {
	switch g.Kind {
	case gapIface:
		return fmt.Sprintf("%s calls %s, whose implementations are not in this package or its imports", g.Call, g.What)
	case gapFuncVal:
		return fmt.Sprintf("%s calls a function value of type %s whose functions are not in sight", g.Call, g.What)
	case gapWrite:
		return fmt.Sprintf("%s writes %s, which this package and its imports do not read", g.Call, g.Name)
	case gapRounds:
		return fmt.Sprintf("the helpers of this package did not settle in %d rounds: calls of the deepest are not followed", maxRounds)
	}
	return "?"
}

// noteGap records, while a function is analysed, a call that is not
// followed; report keeps those of the last analysis.
func (s *fnState) noteGap(kind gapKind, instr ssa.CallInstruction, what string, doc bool) {
	s.gaps = append(s.gaps, gap{Kind: kind, What: what, Doc: doc, pos: s.c.callStart(instr),
		Call: s.c.callExpr(instr)})
}

// givenDocument reports whether a call is given a decoded document (or a
// viper instance, which stands for its document).
func (s *fnState) givenDocument(args []ssa.Value) bool {
	for _, a := range args {
		if a == nil {
			continue
		}
		for _, at := range s.atomsOf(a) {
			if at.Kind == aDecoded || at.Kind == aHandle && libraryDoc(at.Key) {
				return true
			}
		}
	}
	return false
}

// fromParam reports whether a function value may come from a parameter:
// the caller passes it, and follows it there.
func (s *fnState) fromParam(v ssa.Value) bool {
	return s.atomsOf(v).has(aParam) || slices.ContainsFunc(s.roots(v), func(o object) bool {
		_, ok := s.index[o.v]
		return ok
	})
}

// callExpr returns a call as written, shortened for messages.
func (c *checker) callExpr(instr ssa.CallInstruction) string {
	if call := c.calls[instr.Common().Pos()]; call != nil {
		if s := types.ExprString(call.Fun); len(s) <= 60 {
			return s
		}
	}
	return "a call"
}

// gaps collects the package's gaps after the last round: a call through
// an interface counts when no type in sight implements it (one that does,
// and has no fact, touches no file).
func (c *checker) gaps() []gap {
	var out []gap
	implemented := make(map[string]bool)
	for _, fn := range c.funcs {
		s := c.states[fn]
		if s == nil || fn.Synthetic != "" {
			continue
		}
		for _, g := range s.gaps {
			if g.Kind == gapIface {
				ok, seen := implemented[g.What]
				if !seen {
					ok = c.implementedInSight(g.What)
					implemented[g.What] = ok
				}
				if ok {
					continue
				}
			}
			out = append(out, g)
		}
	}
	if c.changed {
		out = append(out, gap{Kind: gapRounds, pos: c.pass.Files[0].Package})
	}
	out = append(out, c.unreadWrites()...)
	for i := range out {
		if out[i].pos.IsValid() {
			p := c.pass.Fset.Position(out[i].pos)
			out[i].Pos = filepath.Base(p.Filename) + ":" + strconv.Itoa(p.Line)
		}
	}
	return out
}

// unreadWrites returns the writes of files the whole program names that
// no function of the package, nor a package it imports, reads.
func (c *checker) unreadWrites() []gap {
	var out []gap
	seen := make(map[string]bool)
	for _, fn := range c.funcs {
		s := c.states[fn]
		if s == nil || fn.Synthetic != "" || c.exempt[fn] {
			continue
		}
		for _, e := range s.events {
			if e.kind != evWrite || e.maybe || !programKey(e.key) || seen[e.key] || libraryDoc(e.key) {
				continue
			}
			if _, ok := c.readSites[e.key]; ok {
				continue
			}
			if where, _ := c.importedRead(e.key); where != "" {
				continue
			}
			seen[e.key] = true
			out = append(out, gap{Kind: gapWrite, What: e.key, Name: s.fileName(e.key, e.desc), Call: c.callExpr(e.instr),
				pos: c.eventPos(e)})
		}
	}
	return out
}

// implementedInSight reports whether a named type of the package or of a
// package it imports implements the interface of method key (a
// types.ObjectString of the method).
func (c *checker) implementedInSight(method string) bool {
	iface := c.gapIfaces[method]
	if iface == nil {
		return true
	}
	if iface.NumMethods() > 0 {
		for _, tn := range c.typesWithMethod(iface.Method(0).Name()) {
			if implementsIface(tn.Type(), iface) {
				return true
			}
		}
		return false
	}
	for _, p := range c.imports {
		scope := p.Scope()
		for _, name := range scope.Names() {
			tn, ok := scope.Lookup(name).(*types.TypeName)
			if !ok || types.IsInterface(tn.Type()) {
				continue
			}
			if implementsIface(tn.Type(), iface) {
				return true
			}
		}
	}
	return false
}

// typesWithMethod returns the named types of the import graph, other than
// interfaces, that have a method of that name (a pointer to them does):
// the only ones that can implement an interface with that method. The
// index is built once, when a package has places not followed.
func (c *checker) typesWithMethod(name string) []*types.TypeName {
	if c.byMethod == nil {
		c.byMethod = make(map[string][]*types.TypeName)
		for _, p := range c.imports {
			scope := p.Scope()
			for _, n := range scope.Names() {
				tn, ok := scope.Lookup(n).(*types.TypeName)
				if !ok || types.IsInterface(tn.Type()) {
					continue
				}
				ms := types.NewMethodSet(types.NewPointer(tn.Type()))
				for i := range ms.Len() {
					m := ms.At(i).Obj().Name()
					c.byMethod[m] = append(c.byMethod[m], tn)
				}
			}
		}
	}
	return c.byMethod[name]
}

// implementsIface reports whether a value of type t, or a pointer to one,
// implements iface; a generic type does when it has methods of every name
// iface has (an instance of it may implement it).
func implementsIface(t types.Type, iface *types.Interface) bool {
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.TypeParams().Len() == 0 {
		return types.Implements(t, iface) || types.Implements(types.NewPointer(t), iface)
	}
	ms := types.NewMethodSet(types.NewPointer(t))
	for m := range iface.Methods() {
		if ms.Lookup(m.Pkg(), m.Name()) == nil {
			return false
		}
	}
	return true
}

// exportGaps records the package's gapsFact and, with -unfollowed,
// reports each gap.
func (c *checker) exportGaps() {
	gaps := c.gaps()
	if len(gaps) == 0 {
		return
	}
	f := &gapsFact{Counts: make(map[gapKind]int)}
	for _, g := range gaps {
		// a write of a file read nowhere in sight is most often a fresh
		// document: only the standalone command, which sees the reads of
		// the whole program, says so
		if extra.unfollowed && g.pos.IsValid() && g.Kind != gapWrite {
			c.reportf(g.pos, "not followed: %s", g)
		}
		if f.Counts[g.Kind] < maxGaps {
			f.Gaps = append(f.Gaps, g)
		}
		f.Counts[g.Kind]++
	}
	c.pass.ExportPackageFact(f)
}
