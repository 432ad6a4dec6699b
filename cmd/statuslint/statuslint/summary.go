package statuslint

import (
	"fmt"
	"go/types"
	"slices"
	"strings"

	analysischecker "golang.org/x/tools/go/analysis/checker"
)

// Unfollowed returns, for a run of the standalone command, what the
// analysis did not follow in the packages it was asked about (the roots of
// the graph), one line each, looked up across the whole program: a call
// through an interface whose implementation, in a package the caller does
// not import, touches files; a call of a function value of the type of a
// loader the caller does not see; a file read in one package and written
// in another that does not import it; a document given to code with no
// implementation in the program. Places whose implementations touch no
// file are followed, and not listed. See gaps.go.
func Unfollowed(graph *analysischecker.Graph) []string {
	return newProgram(graph).items()
}

// A program is what the standalone command analysed: every action of the
// analyzer, by package.
type program struct {
	acts  map[*types.Package]*analysischecker.Action
	roots []*analysischecker.Action
}

func newProgram(graph *analysischecker.Graph) *program {
	p := &program{acts: make(map[*types.Package]*analysischecker.Action)}
	for act := range graph.All() {
		if act.Analyzer != Analyzer || act.Package == nil || act.Package.Types == nil {
			continue
		}
		p.acts[act.Package.Types] = act
		if act.IsRoot {
			p.roots = append(p.roots, act)
		}
	}
	slices.SortFunc(p.roots, func(a, b *analysischecker.Action) int { return strings.Compare(a.Package.ID, b.Package.ID) })
	return p
}

// A placed gap is a gap of a root package.
type placedGap struct {
	gap
	pkg *types.Package
}

// gaps returns the gaps of the root packages, once each (a package and its
// test variant share files).
func (p *program) gaps() []placedGap {
	var out []placedGap
	seen := make(map[string]bool)
	for _, act := range p.roots {
		var f gapsFact
		if !act.PackageFact(act.Package.Types, &f) {
			continue
		}
		for _, g := range f.Gaps {
			k := fmt.Sprint(g.Kind, g.What, g.Pos, act.Package.PkgPath)
			if !seen[k] {
				seen[k] = true
				out = append(out, placedGap{g, act.Package.Types})
			}
		}
	}
	return out
}

const maxSummary = 12

func (p *program) items() []string {
	var out []string
	ifaces := make(map[string][]placedGap) // by interface method
	var order []string
	for _, g := range p.gaps() {
		switch g.Kind {
		case gapIface:
			if ifaces[g.What] == nil {
				order = append(order, g.What)
			}
			ifaces[g.What] = append(ifaces[g.What], g)
		case gapFuncVal:
			if it := p.funcValItem(g); it != "" {
				out = append(out, it)
			}
		case gapWrite:
			if it := p.writeItem(g); it != "" {
				out = append(out, it)
			}
		case gapRounds:
			out = append(out, fmt.Sprintf("%s: its helpers did not settle in %d rounds; calls of the deepest are not followed",
				g.pkg.Path(), maxRounds))
		}
	}
	for _, m := range order {
		if it := p.ifaceItem(m, ifaces[m]); it != "" {
			out = append(out, it)
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > maxSummary {
		out = append(out[:maxSummary], fmt.Sprintf("and %d more (-unfollowed reports each place)", len(out)-maxSummary))
	}
	return out
}

// places writes where gaps are: "file.go:12, other.go:3 and 2 more".
func places(gs []placedGap) string {
	var ps []string
	for _, g := range gs {
		if !slices.Contains(ps, g.Pos) {
			ps = append(ps, g.Pos)
		}
	}
	if len(ps) > 3 {
		return strings.Join(ps[:3], ", ") + fmt.Sprintf(" and %d more", len(ps)-3)
	}
	return strings.Join(ps, ", ")
}

// ifaceItem says what calls of interface method m are not followed: an
// implementation that touches files in a package the callers do not
// import, or, given a document, none in the program.
func (p *program) ifaceItem(m string, gs []placedGap) string {
	iface, name := p.lookupMethod(m)
	if iface == nil {
		return ""
	}
	var impls []string
	found := false
	for pkg, act := range p.acts {
		scope := pkg.Scope()
		for _, tn := range scope.Names() {
			obj, ok := scope.Lookup(tn).(*types.TypeName)
			if !ok || types.IsInterface(obj.Type()) || !implementsIface(obj.Type(), iface) {
				continue
			}
			found = true
			meth, _, _ := types.LookupFieldOrMethod(types.NewPointer(obj.Type()), true, pkg, name)
			fn, ok := meth.(*types.Func)
			if !ok {
				continue
			}
			if f := p.fact(act, fn); f != nil && (f.writes() || len(f.Reads) > 0 || f.returnsContent()) {
				impls = append(impls, shortPaths(objectName(fn)))
			}
		}
	}
	doc := slices.ContainsFunc(gs, func(g placedGap) bool { return g.Doc })
	switch {
	case len(impls) > 0:
		slices.Sort(impls)
		return fmt.Sprintf("%s (called at %s) is implemented by %s, which reads or writes files, in a package that the callers' packages do not import",
			shortPaths(m), places(gs), strings.Join(impls, ", "))
	case !found && doc:
		return fmt.Sprintf("%s (called at %s) is given a document and has no implementation in the program", shortPaths(m), places(gs))
	}
	return ""
}

// lookupMethod finds the interface and method an objectName names among
// the program's packages.
func (p *program) lookupMethod(m string) (*types.Interface, string) {
	i := strings.LastIndexByte(m, '.')
	if i < 0 {
		return nil, ""
	}
	method := m[i+1:]
	rest := m[:i]
	j := strings.LastIndexByte(rest, '.')
	if j < 0 {
		return nil, ""
	}
	pkgPath, typ := rest[:j], rest[j+1:]
	for pkg := range p.acts {
		if pkg.Path() != pkgPath {
			continue
		}
		tn, _ := pkg.Scope().Lookup(typ).(*types.TypeName)
		if tn == nil {
			return nil, ""
		}
		iface, _ := tn.Type().Underlying().(*types.Interface)
		return iface, method
	}
	return nil, ""
}

// fact returns the fact of fn, a function of act's package.
func (p *program) fact(act *analysischecker.Action, fn *types.Func) *fnFact {
	if tn := funcRecvTypeName(fn.Origin()); tn != nil {
		var tf typeFact
		if !act.ObjectFact(tn, &tf) {
			return nil
		}
		return tf.method(fn.Name())
	}
	var f fnFact
	if !act.ObjectFact(fn.Origin(), &f) {
		return nil
	}
	return &f
}

// funcValItem says what a call of a function value whose functions were
// not in sight is not followed to: the program's functions of its type
// that read files (or, given a document, touch them); given a document,
// the absence of any function of its type. Functions of its type that
// read no file (given a document: write none) are followed.
func (p *program) funcValItem(g placedGap) string {
	var touch []string
	found := false
	for pkg, act := range p.acts {
		scope := pkg.Scope()
		for _, name := range scope.Names() {
			fn, ok := scope.Lookup(name).(*types.Func)
			if !ok || fn.Type().String() != g.What {
				continue
			}
			found = true
			if f := p.fact(act, fn); f != nil && (isLoader(fn, f) || g.Doc && f.writes()) {
				touch = append(touch, shortPaths(objectName(fn)))
			}
		}
	}
	switch {
	case len(touch) > 0:
		slices.Sort(touch)
		return fmt.Sprintf("%s (%s) calls a function value of type %s, whose functions are not in sight there; it may hold %s, which %s files",
			g.Call, g.Pos, shortPaths(g.What), strings.Join(touch, ", "), map[bool]string{true: "writes", false: "reads"}[g.Doc])
	case g.Doc && !found:
		return fmt.Sprintf("%s (%s) gives a document to a function value of type %s, and the program has no function of that type",
			g.Call, g.Pos, shortPaths(g.What))
	}
	return ""
}

// writeItem says where a file written by g's package, which neither it nor
// its imports read, is read: in another root package that it does not
// import.
//
// Of the packages that read it, the one named is one that imports none of
// the others: where the read is made, rather than a caller of it.
func (p *program) writeItem(g placedGap) string {
	imported := imports(g.pkg)
	type reader struct {
		pkg  *types.Package
		site string
	}
	var readers []reader
	for _, act := range p.roots {
		pkg := act.Package.Types
		var f readsFact
		if imported[pkg] || !act.PackageFact(pkg, &f) {
			continue
		}
		if i := slices.Index(f.Keys, g.What); i >= 0 && i < len(f.Sites) {
			readers = append(readers, reader{pkg, f.Sites[i]})
		}
	}
	for _, r := range readers {
		below := imports(r.pkg)
		if slices.ContainsFunc(readers, func(o reader) bool { return o.pkg != r.pkg && below[o.pkg] }) {
			continue // a caller of another reader
		}
		return fmt.Sprintf("%s is read in %s (%s) and written in %s (%s, %s), which does not import it",
			g.Name, r.pkg.Path(), r.site, g.pkg.Path(), g.Pos, g.Call)
	}
	return ""
}

// imports returns pkg and the packages it imports, directly or not.
func imports(pkg *types.Package) map[*types.Package]bool {
	seen := make(map[*types.Package]bool)
	var walk func(*types.Package)
	walk = func(p *types.Package) {
		if seen[p] {
			return
		}
		seen[p] = true
		for _, imp := range p.Imports() {
			walk(imp)
		}
	}
	walk(pkg)
	return seen
}

// writes reports whether a fact says that the function writes a file.
func (f *fnFact) writes() bool {
	return len(f.Writes) > 0 || len(f.MayWrites) > 0 || len(f.Truncs) > 0 || len(f.InPlace) > 0 || len(f.Cycles) > 0
}

// returnsContent reports whether a fact says that the function returns a
// file's content, raw or decoded, or a handle on it.
func (f *fnFact) returnsContent() bool {
	return slices.ContainsFunc(f.Results, func(as atoms) bool {
		return as.has(aContent) || as.has(aDecoded) || as.has(aHandle)
	})
}
