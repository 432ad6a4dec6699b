package statuslint

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/buildssa"
	"golang.org/x/tools/go/analysis/passes/ctrlflow"
	"golang.org/x/tools/go/ssa"
)

// Analyzer reports bare read-modify-write cycles and in-place writes of JSON
// state files. See the package documentation.
var Analyzer = &analysis.Analyzer{
	Name: "statuslint",
	Doc: "report bare read-modify-write and in-place writes of JSON state files\n\n" +
		"A file that is read and decoded, then written back outside status.Mutate,\n" +
		"status.Transform or a file lock loses concurrent updates, also when the read\n" +
		"is at start-up and the write in a later command; each finding names the call\n" +
		"to use for the document's format. A JSON file written with os.WriteFile,\n" +
		"os.Create or O_TRUNC can be seen empty or half written; use fs.WriteAtomic.",
	Run: run,
	// buildssa is run by run itself, only for the packages analysed: as a
	// requirement it would build SSA for every package in the import graph,
	// the standard library included, whose functions are modelled instead.
	// Its own requirement (ctrlflow's facts on functions that never return)
	// is kept, so the SSA built is the same.
	Requires:  []*analysis.Analyzer{ctrlflow.Analyzer},
	FactTypes: []analysis.Fact{new(fnFact), new(varFact), new(typeFact), new(readsFact), new(gapsFact)},
}

var extra = struct {
	readers, writers, lockers nameList
	std, unfollowed           bool
}{}

func init() {
	Analyzer.Flags.Var(&extra.readers, "readers",
		"comma-separated functions that read and decode a document (pkg.Func, pkg.(*T).Method, pkg.Interface.Method, pkg.Var); "+
			"the document is named by the first string argument, or else by the receiver")
	Analyzer.Flags.Var(&extra.writers, "writers",
		"comma-separated functions that write a document, named like -readers")
	Analyzer.Flags.Var(&extra.lockers, "lockers",
		"comma-separated functions that take a lock on the documents the program changes (a lock of its own), named like -readers; "+
			"the lock is held until the function that calls one returns")
	Analyzer.Flags.BoolVar(&extra.unfollowed, "unfollowed", false,
		"report each place the analysis does not follow (a call through an interface or a function value whose "+
			"implementations are not in sight, a write of a file read nowhere in sight), as a finding")
	Analyzer.Flags.BoolVar(&extra.std, "std", false,
		"analyse the standard library's function bodies too (its file APIs are modelled, "+
			"so this changes no finding; the crash test uses it)")
}

// Packages whose functions are recognised by import path.
const (
	statusPkg = "github.com/agentstate/core/status"
	fsPkg     = "github.com/agentstate/core/fs"
)

// ignoreDirective silences a finding on its line or on the next line.
const ignoreDirective = "//statuslint:ignore"

// maxRounds bounds the rounds in which the functions of a package learn
// from each other's facts (a helper calling a helper calling a helper...).
const maxRounds = 8

func run(pass *analysis.Pass) (_ any, err error) {
	if isStd(pass.Pkg) && !extra.std {
		// The standard library's file APIs are modelled (models.go).
		return nil, nil
	}
	defer profile()()
	defer func() {
		// A bug here must not stop the analysis of other packages; it is
		// reported as this package's error (the crash test fails on it).
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error analysing %s: %v\n%s", pass.Pkg.Path(), r, debug.Stack())
		}
	}()
	res, err := buildssa.Analyzer.Run(pass)
	if err != nil {
		return nil, err
	}
	ir := res.(*buildssa.SSA)
	c := newChecker(pass, ir)
	c.solve()
	c.report()
	c.export()
	c.exportReads()
	c.exportGaps()
	return nil, nil
}

// A checker holds what one pass knows.
type checker struct {
	pass            *analysis.Pass
	pkg             *ssa.Package
	funcs           []*ssa.Function               // the package's functions, literals included
	local           map[*ssa.Function]*fnFact     // summaries of this package's functions
	globals         map[*ssa.Global]atoms         // what this package's variables hold
	states          map[*ssa.Function]*fnState    // the last analysis of each function
	exempt          map[*ssa.Function]bool        // run under status.Mutate's lock
	goes            map[*ssa.Function]bool        // started by a go statement
	keyed           map[string]*ssa.Function      // this package's functions by funcKey
	calls           map[token.Pos]*ast.CallExpr   // call expressions by Lparen
	files           map[*token.File]*ast.File     // for the ignore directive and _test.go
	imports         map[string]*types.Package     // every package in the import graph
	globalStores    map[*ssa.Global][]*ssa.Store  // assignments of this package's variables
	globalKeys      map[*ssa.Global]string        // memo of globalTerm
	methods         map[string][]*types.Func      // this package's methods with facts, by name
	imported        map[string][]*types.Func      // the same, of other packages; see importedMethods
	impls           map[*types.Func][]*types.Func // memo of implementations
	loaders         []*types.Func                 // this package's loaders; see indexMethods
	importedLoaders []*types.Func                 // the same, of other packages; see importedMethods
	handles         map[types.Type]bool           // memo of holdsHandle
	streams         map[types.Type]bool           // memo of stream
	types           map[*types.TypeName]*typeFact // memo of importedMethodFact
	facts           map[*types.Func]*fnFact       // memo of importedFact
	gapIfaces       map[string]*types.Interface   // the interfaces of gapIface's methods, by name
	byMethod        map[string][]*types.TypeName  // see typesWithMethod
	readSites       map[string]readSite           // where this package reads each file a whole program names (see programKey)
	importedReads   map[string]importedSite       // the same, read in packages this one imports; see importedRead
	os              osConsts
	round           int
	changed         bool
	wrappers        []*ssa.Function // analysed on demand this round
}

func newChecker(pass *analysis.Pass, ir *buildssa.SSA) *checker {
	c := &checker{
		pass:         pass,
		pkg:          ir.Pkg,
		local:        make(map[*ssa.Function]*fnFact),
		globals:      make(map[*ssa.Global]atoms),
		states:       make(map[*ssa.Function]*fnState),
		exempt:       make(map[*ssa.Function]bool),
		goes:         make(map[*ssa.Function]bool),
		keyed:        make(map[string]*ssa.Function),
		calls:        make(map[token.Pos]*ast.CallExpr),
		files:        make(map[*token.File]*ast.File),
		imports:      make(map[string]*types.Package),
		globalStores: make(map[*ssa.Global][]*ssa.Store),
		globalKeys:   make(map[*ssa.Global]string),
		handles:      make(map[types.Type]bool),
		streams:      make(map[types.Type]bool),
		types:        make(map[*types.TypeName]*typeFact),
		facts:        make(map[*types.Func]*fnFact),
		gapIfaces:    make(map[string]*types.Interface),
	}
	seen := make(map[*ssa.Function]bool)
	var add func(fn *ssa.Function)
	add = func(fn *ssa.Function) {
		if fn == nil || seen[fn] || fn.Blocks == nil {
			return
		}
		seen[fn] = true
		c.funcs = append(c.funcs, fn)
		c.keyed[c.funcKeyOf(fn)] = fn
		for _, anon := range fn.AnonFuncs {
			add(anon)
		}
	}
	for _, fn := range ir.SrcFuncs {
		add(fn)
	}
	add(c.pkg.Func("init")) // variables' initial values
	c.funcs = calleesFirst(c.funcs)
	for _, f := range pass.Files {
		c.files[pass.Fset.File(f.Pos())] = f
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				c.calls[call.Lparen] = call
			}
			return true
		})
	}
	var walk func(p *types.Package)
	walk = func(p *types.Package) {
		if c.imports[p.Path()] != nil {
			return
		}
		c.imports[p.Path()] = p
		for _, imp := range p.Imports() {
			walk(imp)
		}
	}
	walk(pass.Pkg)
	c.os = findOSConsts(c.imports)
	c.markClosures()
	for _, fn := range c.funcs {
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				if st, ok := instr.(*ssa.Store); ok {
					if g, ok := st.Addr.(*ssa.Global); ok && g.Pkg == c.pkg {
						c.globalStores[g] = append(c.globalStores[g], st)
					}
				}
			}
		}
	}
	return c
}

// markClosures finds the function literals that run under status.Mutate's
// lock and those that a go statement starts.
func (c *checker) markClosures() {
	for _, fn := range c.funcs {
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				call, ok := instr.(ssa.CallInstruction)
				if !ok {
					continue
				}
				cc := call.Common()
				if _, ok := instr.(*ssa.Go); ok {
					if f := closureFunc(cc.Value); f != nil {
						c.goes[f] = true
					}
				}
				if callee := staticObject(cc); callee != nil && pkgPath(callee) == statusPkg {
					for _, a := range cc.Args {
						if f := closureFunc(a); f != nil {
							c.exempt[f] = true
						}
					}
				}
			}
		}
	}
	// literals inside exempt or started literals are so too
	for _, fn := range c.funcs {
		for p := fn.Parent(); p != nil; p = p.Parent() {
			if c.exempt[p] {
				c.exempt[fn] = true
			}
			if c.goes[p] {
				c.goes[fn] = true
			}
		}
	}
}

// calleesFirst orders fns so that each comes after its function literals
// and the functions of fns it calls statically, where no cycle prevents
// it: a round of solve then sees most callees' facts of the same round,
// and fewer rounds settle a package (the facts they settle on are the
// same).
func calleesFirst(fns []*ssa.Function) []*ssa.Function {
	in := make(map[*ssa.Function]bool, len(fns))
	for _, fn := range fns {
		in[fn] = true
	}
	done := make(map[*ssa.Function]bool, len(fns))
	out := make([]*ssa.Function, 0, len(fns))
	var visit func(fn *ssa.Function)
	visit = func(fn *ssa.Function) {
		if done[fn] {
			return
		}
		done[fn] = true
		for _, anon := range fn.AnonFuncs {
			if in[anon] {
				visit(anon)
			}
		}
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				if call, ok := instr.(ssa.CallInstruction); ok {
					if callee := call.Common().StaticCallee(); callee != nil && in[callee] {
						visit(callee)
					}
				}
			}
		}
		out = append(out, fn)
	}
	for _, fn := range fns {
		visit(fn)
	}
	return out
}

// closureFunc returns the function literal that v is, if it is one.
func closureFunc(v ssa.Value) *ssa.Function {
	switch v := v.(type) {
	case *ssa.MakeClosure:
		f, _ := v.Fn.(*ssa.Function)
		return f
	case *ssa.Function:
		if v.Parent() != nil {
			return v
		}
	}
	return nil
}

// solve computes the summaries of the package's functions: each round
// analyses every function with what the previous rounds learnt, until
// nothing changes.
func (c *checker) solve() {
	for c.round = 0; c.round < maxRounds; c.round++ {
		c.changed = false
		for _, w := range c.wrappers {
			delete(c.local, w)
		}
		c.wrappers = c.wrappers[:0]
		c.indexMethods()
		for _, fn := range c.funcs {
			s := c.analyse(fn)
			c.states[fn] = s
			f := s.summary()
			if !f.equal(c.local[fn]) {
				if debugRounds && c.round >= maxRounds-2 {
					fmt.Fprintf(os.Stderr, "round %d: %s: %v\n   was %v\n", c.round, fn, f, c.local[fn])
				}
				c.local[fn] = f
				c.changed = true
			}
		}
		if !c.changed {
			return
		}
	}
}

// analyse computes the data flow and the file accesses of one function.
func (c *checker) analyse(fn *ssa.Function) *fnState {
	s := newFnState(c, fn)
	s.run()
	if debugHook != nil {
		debugHook(s)
	}
	return s
}

// debugHook, set by tests, sees each function analysed.
var debugHook func(*fnState)

// export records the facts of the package's functions and variables.
func (c *checker) export() {
	methods := c.exportMethods()
	for _, fn := range c.funcs {
		obj, ok := fn.Object().(*types.Func)
		if !ok || fn.Parent() != nil || isWrapper(fn) || fn.Synthetic != "" || methods[fn] {
			continue
		}
		if f := c.local[fn]; f != nil && !f.empty() {
			c.pass.ExportObjectFact(obj, f)
		}
	}
	seen := make(map[*ssa.Global]bool)
	for g := range c.globals {
		seen[g] = true
	}
	for g := range c.globalStores {
		seen[g] = true
	}
	for g := range seen {
		obj, ok := g.Object().(*types.Var)
		if !ok {
			continue
		}
		if f := c.globalFact(g); !f.empty() {
			c.pass.ExportObjectFact(obj, f)
		}
	}
}

// globalFact is what a variable of this package holds, for other packages.
func (c *checker) globalFact(g *ssa.Global) *varFact {
	f := &varFact{Atoms: c.globals[g].filter(func(a atom) bool {
		return a.Kind != aParam && a.Kind != aDecParam && a.exportable()
	})}
	// function literals have no key other packages can use: their facts
	f.Call = c.mergedCall(c.globals[g].filter(func(a atom) bool { return !a.exportable() }))
	f.Key = c.globalTerm(g)
	return f
}

// mergedCall is what a call of any of the functions among as does.
func (c *checker) mergedCall(as atoms) *fnFact {
	var out *fnFact
	for _, a := range as {
		if a.Kind != aFunc {
			continue
		}
		f := c.funcFact(a.Key)
		if f == nil {
			continue
		}
		if out == nil {
			cp := *f
			cp.Paths = append([]string(nil), f.Paths...)
			cp.Results = append([]atoms(nil), f.Results...)
			out = &cp
			continue
		}
		out.merge(f)
	}
	return out
}

// funcFact returns the fact of the function a func atom names.
func (c *checker) funcFact(key string) *fnFact {
	if fn := c.keyed[key]; fn != nil {
		return c.local[fn]
	}
	if v, ok := strings.CutPrefix(key, varKeyPrefix); ok {
		if g := c.lookupVar(v); g != nil {
			var f varFact
			if c.pass.ImportObjectFact(g, &f) {
				return f.Call
			}
		}
		return nil
	}
	if obj := c.lookupFunc(key); obj != nil {
		return c.importedFact(obj)
	}
	return nil
}

// varKeyPrefix marks the func atom of a variable of another package: what
// its fact says it may hold.
const varKeyPrefix = "var:"

// importedFact returns the fact of a function of another package.
func (c *checker) importedFact(obj *types.Func) *fnFact {
	obj = obj.Origin()
	if obj.Pkg() == c.pass.Pkg {
		if fn := c.keyed[funcKey(obj)]; fn != nil {
			return c.local[fn]
		}
		return nil
	}
	if isMethod(obj) {
		return c.importedMethodFact(obj)
	}
	if f, ok := c.facts[obj]; ok {
		return f
	}
	var f *fnFact
	var imported fnFact
	if c.pass.ImportObjectFact(obj, &imported) {
		f = &imported
	}
	c.facts[obj] = f
	return f
}

// indexMethods lists this package's methods that have facts, by name, for
// calls through interfaces. The list is taken at the start of each round,
// so that what a call through an interface does within a round does not
// depend on the order in which the round analyses the functions.
func (c *checker) indexMethods() {
	// Maps are iterated in random order, and what a call through an
	// interface does is the union of its implementations, in bounded sets:
	// the lists are sorted so that the result does not depend on the run.
	c.methods = make(map[string][]*types.Func)
	c.impls = make(map[*types.Func][]*types.Func)
	c.loaders = nil
	for fn, f := range c.local {
		obj, ok := fn.Object().(*types.Func)
		if ok && fn.Parent() == nil && fn.Synthetic == "" && f != nil && !f.empty() {
			index(obj, f, c.methods, &c.loaders)
		}
	}
	sortIndex(c.methods, c.loaders)
}

// importedMethods lists the methods of other packages that have facts, by
// name, and their loaders. It is built on the first call through an
// interface or an unknown function value: it reads every fact of the
// import graph, which most packages never need.
func (c *checker) importedMethods() map[string][]*types.Func {
	if c.imported == nil {
		c.imported = make(map[string][]*types.Func)
		for _, of := range c.pass.AllObjectFacts() {
			// this package's own facts, once exported, are not imported
			if of.Object.Pkg() == c.pass.Pkg {
				continue
			}
			switch f := of.Fact.(type) {
			case *typeFact:
				tn, _ := of.Object.(*types.TypeName)
				if tn == nil {
					continue
				}
				for _, m := range typeMethods(tn, f) {
					c.imported[m.Name()] = append(c.imported[m.Name()], m)
				}
			case *fnFact:
				if fn, ok := of.Object.(*types.Func); ok && isLoader(fn, f) {
					c.importedLoaders = append(c.importedLoaders, fn)
				}
			}
		}
		sortIndex(c.imported, c.importedLoaders)
	}
	return c.imported
}

// index adds fn, a function with fact f, to methods by name if it is a
// method, or else to loaders if it is one.
func index(fn *types.Func, f *fnFact, methods map[string][]*types.Func, loaders *[]*types.Func) {
	switch {
	case isMethod(fn):
		methods[fn.Name()] = append(methods[fn.Name()], fn)
	case isLoader(fn, f):
		*loaders = append(*loaders, fn)
	}
}

// sortIndex orders the lists of index.
func sortIndex(methods map[string][]*types.Func, loaders []*types.Func) {
	for _, fns := range methods {
		sortFuncs(fns)
	}
	sortFuncs(loaders)
}

// isLoader reports whether fn, a function with fact f, returns a file's
// content as a value of a type the program defines (see [programResult]):
// a function value of its signature whose functions are not known may be
// it (see [fnState.likeLoaders]).
func isLoader(fn *types.Func, f *fnFact) bool {
	sig, _ := fn.Type().(*types.Signature)
	return sig != nil && sig.TypeParams().Len() == 0 && programResult(sig) &&
		slices.ContainsFunc(f.Results, func(as atoms) bool {
			return slices.ContainsFunc(as, func(a atom) bool { return a.Kind == aDecoded || a.Kind == aContent })
		})
}

// programResult reports whether a result of sig has a named type (or a
// pointer to one) that is defined outside the standard library: a
// signature such as func() error or func() ([]byte, error) says nothing
// of what a function value of it does.
func programResult(sig *types.Signature) bool {
	for v := range sig.Results().Variables() {
		t := v.Type()
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		if n, ok := types.Unalias(t).(*types.Named); ok && n.Obj().Pkg() != nil && !isStd(n.Obj().Pkg()) {
			return true
		}
	}
	return false
}

// sortFuncs orders functions by package path, position and full name. The
// full name, which is built on each call, is compared only on a tie.
func sortFuncs(fns []*types.Func) {
	slices.SortFunc(fns, func(a, b *types.Func) int {
		if c := strings.Compare(pkgPath(a), pkgPath(b)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Pos(), b.Pos()); c != 0 {
			return c
		}
		return strings.Compare(a.FullName(), b.FullName())
	})
}

// implementations returns the methods with facts that a call of the
// interface method m may run.
func (c *checker) implementations(m *types.Func) []*types.Func {
	if impls, ok := c.impls[m]; ok {
		return impls
	}
	var out []*types.Func
	sig, _ := m.Type().(*types.Signature)
	if sig != nil && sig.Recv() != nil {
		iface, _ := sig.Recv().Type().Underlying().(*types.Interface)
		cands := slices.Concat(c.importedMethods()[m.Name()], c.methods[m.Name()])
		for _, cand := range cands {
			recv := cand.Type().(*types.Signature).Recv()
			if iface == nil || recv == nil || hasTypeParams(recv.Type()) {
				continue
			}
			if types.Implements(recv.Type(), iface) {
				out = append(out, cand)
			}
		}
	}
	c.impls[m] = out
	return out
}

func hasTypeParams(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.TypeParams().Len() > 0
}

// lookupFunc finds the function or method a funcKey names.
func (c *checker) lookupFunc(key string) *types.Func {
	path, name, typ := splitFuncKey(key)
	p := c.imports[path]
	if p == nil {
		return nil
	}
	if typ == "" {
		fn, _ := p.Scope().Lookup(name).(*types.Func)
		return fn
	}
	tn, _ := p.Scope().Lookup(typ).(*types.TypeName)
	if tn == nil {
		return nil
	}
	obj, _, _ := types.LookupFieldOrMethod(types.NewPointer(tn.Type()), true, p, name)
	fn, _ := obj.(*types.Func)
	return fn
}

func (c *checker) lookupVar(key string) *types.Var {
	path, name, _ := splitFuncKey(key)
	if p := c.imports[path]; p != nil {
		v, _ := p.Scope().Lookup(name).(*types.Var)
		return v
	}
	return nil
}

// reporter returns the report function for the file that holds pos: it
// drops findings on lines that the ignore directive covers.
func (c *checker) reportf(pos token.Pos, format string, args ...any) {
	tf := c.pass.Fset.File(pos)
	if f := c.files[tf]; f != nil {
		line := tf.Line(pos)
		for _, cg := range f.Comments {
			for _, cm := range cg.List {
				if !strings.HasPrefix(cm.Text, ignoreDirective) {
					continue
				}
				if l := tf.Line(cm.Slash); l == line || l == line-1 {
					return
				}
			}
		}
	}
	c.pass.Reportf(pos, format, args...)
}

// isTestFile reports whether pos is in a _test.go file.
func (c *checker) isTestFile(pos token.Pos) bool {
	tf := c.pass.Fset.File(pos)
	return tf != nil && strings.HasSuffix(tf.Name(), "_test.go")
}

// isStd reports whether pkg belongs to the standard library: its path's
// first element has no dot (module paths have one; GOPATH-style test data
// of this analyzer uses names listed in stdPackages).
func isStd(pkg *types.Package) bool {
	first, _, _ := strings.Cut(pkg.Path(), "/")
	return !strings.Contains(first, ".") && stdPackages[first]
}

// stdPackages are the first path elements of the standard library's
// packages.
var stdPackages = map[string]bool{
	"archive": true, "bufio": true, "builtin": true, "bytes": true, "cmp": true, "compress": true,
	"container": true, "context": true, "crypto": true, "database": true, "debug": true,
	"embed": true, "encoding": true, "errors": true, "expvar": true, "flag": true, "fmt": true,
	"go": true, "hash": true, "html": true, "image": true, "index": true, "internal": true,
	"io": true, "iter": true, "log": true, "maps": true, "math": true, "mime": true, "net": true,
	"os": true, "path": true, "plugin": true, "reflect": true, "regexp": true, "runtime": true,
	"slices": true, "sort": true, "strconv": true, "strings": true, "structs": true, "sync": true,
	"syscall": true, "testing": true, "text": true, "time": true, "unicode": true, "unique": true,
	"unsafe": true, "weak": true, "vendor": true, "cmd": true,
}
