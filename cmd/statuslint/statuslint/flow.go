package statuslint

import (
	"go/types"
	"slices"

	"golang.org/x/tools/go/ssa"
)

// An fnState is the analysis of one function: what its values may hold
// of files (atoms), where they may point (objects), and the file accesses
// its calls make (events).
//
// Memory is modelled per object, without fields: a value reaches what
// the objects it may point into hold (roots), a store adds to them. Within
// a function the analysis does not follow the order of instructions (a
// value holds what any store gives its objects); the order matters only
// between events (check.go).
type fnState struct {
	c       *checker
	fn      *ssa.Function
	index   map[ssa.Value]int // parameters and free variables
	nparams int               // parameters (the receiver first)
	mem     map[object]atoms
	points  map[object][]object // objects whose address or reference an object holds
	rootsOf map[ssa.Value][]object
	terms   map[ssa.Value]string
	busy    map[ssa.Value]bool
	depth   int
	changed bool
	union   bool // applying the facts of every implementation of an interface method

	events  []event
	gaps    []gap                          // calls not followed (see gaps.go)
	readAt  map[string]ssa.CallInstruction // where each file's content was first read
	fills   map[int]bool
	renamed map[string]bool // temp files renamed over another file
	excl    map[string]bool // files created exclusively (lock files)

	cycleOrder *order            // for lockedCycle, made once per analysis
	descs      map[string]string // how a key is written in the source

	// what the function stores in this package's variables in terms of
	// its parameters (a loader given the path decodes into a variable):
	// its callers store it, with their arguments in place
	globalTpl map[*ssa.Global]atoms
	// the keys a path assigned on several paths may have (see phiTerm)
	alts map[string][]string
	// saves of objects that load themselves (see selfdoc.go)
	selfSaves []selfSave
}

// An object is something values point into: an allocation, a variable, a
// parameter, a call result (Index: which).
type object struct {
	v     ssa.Value
	index int
}

// maxPasses bounds the passes over a function's instructions.
const maxPasses = 8

func newFnState(c *checker, fn *ssa.Function) *fnState {
	s := &fnState{
		c:       c,
		fn:      fn,
		index:   make(map[ssa.Value]int),
		mem:     make(map[object]atoms),
		points:  make(map[object][]object),
		rootsOf: make(map[ssa.Value][]object),
		terms:   make(map[ssa.Value]string),
		busy:    make(map[ssa.Value]bool),
		readAt:  make(map[string]ssa.CallInstruction),
		fills:   make(map[int]bool),
		renamed: make(map[string]bool),
		excl:    make(map[string]bool),
		descs:   make(map[string]string),

		globalTpl: make(map[*ssa.Global]atoms),
		alts:      make(map[string][]string),
	}
	for i, p := range fn.Params {
		s.index[p] = i
		s.mem[object{v: p}] = atoms{{Kind: aParam, Param: i}}
	}
	s.nparams = len(fn.Params)
	for i, fv := range fn.FreeVars {
		s.index[fv] = s.nparams + i
		s.mem[object{v: fv}] = atoms{{Kind: aParam, Param: s.nparams + i}}
	}
	return s
}

// run makes passes over the function's instructions until what values
// hold stops growing. The events are those of the last pass.
func (s *fnState) run() {
	for range maxPasses {
		s.changed = false
		s.events = s.events[:0]
		s.gaps = s.gaps[:0]
		for _, b := range s.fn.Blocks {
			for _, instr := range b.Instrs {
				s.step(instr)
			}
		}
		if !s.changed {
			return
		}
	}
}

func (s *fnState) step(instr ssa.Instruction) {
	switch instr := instr.(type) {
	case *ssa.Store:
		s.link(instr.Addr, instr.Val)
		s.store(instr.Addr, s.atomsOf(instr.Val))
	case *ssa.MapUpdate:
		s.store(instr.Map, union(s.atomsOf(instr.Key), s.atomsOf(instr.Value)))
	case *ssa.Send:
		s.store(instr.Chan, s.atomsOf(instr.X))
	case ssa.CallInstruction:
		s.call(instr)
	}
}

// store adds as to the objects that addr points into, and to the objects
// that those hold references to (a decoder given &m fills the map m).
func (s *fnState) store(addr ssa.Value, as atoms) {
	if len(as) == 0 {
		return
	}
	seen := make(map[object]bool)
	var visit func(o object, depth int)
	visit = func(o object, depth int) {
		if seen[o] || depth > 4 {
			return
		}
		seen[o] = true
		s.addTo(o, as)
		for _, p := range s.points[o] {
			visit(p, depth+1)
		}
	}
	for _, o := range s.roots(addr) {
		visit(o, 0)
	}
}

// link records that the objects addr points into hold a reference to
// val's objects, when val is a reference (a pointer, map, slice...).
func (s *fnState) link(addr, val ssa.Value) {
	if !reference(val.Type()) {
		return
	}
	if _, ok := val.Type().Underlying().(*types.Struct); ok {
		return
	}
	targets := s.roots(val)
	for _, o := range s.roots(addr) {
		for _, t := range targets {
			if t != o && !slices.Contains(s.points[o], t) && len(s.points[o]) < maxAtoms {
				s.points[o] = append(s.points[o], t)
				s.changed = true
			}
		}
	}
}

func (s *fnState) addTo(o object, as atoms) {
	if g, ok := o.v.(*ssa.Global); ok {
		if g.Pkg != s.c.pkg {
			return // another package's variable: its fact is fixed
		}
		// what a parameter holds is the storing function's to know: read
		// back in another function, it would stand for that one's parameter
		as = as.filter(func(a atom) bool { return a.Kind != aParam && a.Kind != aDecParam })
		// a file named by a parameter is the caller's to name
		if tpl := as.filter(paramFile); len(tpl) > 0 {
			set := s.globalTpl[g]
			if set.add(tpl...) {
				s.globalTpl[g] = set
				s.changed = true
			}
			as = as.filter(func(a atom) bool { return !paramFile(a) })
		}
		set := s.c.globals[g]
		if set.add(as...) {
			s.c.globals[g] = set
			s.changed = true
			s.c.changed = true
		}
		return
	}
	set := s.mem[o]
	if set.add(as...) {
		s.mem[o] = set
		s.changed = true
	}
}

// paramFile reports whether a is a file's content, document or handle
// whose key depends on a parameter.
func paramFile(a atom) bool {
	return (a.Kind == aContent || a.Kind == aDecoded || a.Kind == aHandle) && hasParam(a.Key)
}

// setResult adds as to result i of a call.
func (s *fnState) setResult(instr ssa.CallInstruction, i int, as atoms) {
	if call, ok := instr.(*ssa.Call); ok && len(as) > 0 {
		if i < resultCount(call) && !noContent(resultType(call, i)) {
			s.addTo(object{v: call, index: i}, s.c.fitting(as, resultType(call, i)))
		}
	}
}

func resultCount(call *ssa.Call) int {
	if t, ok := call.Type().(*types.Tuple); ok {
		return t.Len()
	}
	if call.Type() == nil {
		return 0
	}
	return 1
}

func resultType(call *ssa.Call, i int) types.Type {
	if t, ok := call.Type().(*types.Tuple); ok {
		return t.At(i).Type()
	}
	return call.Type()
}

// fitting drops the handles from as when a value of type t cannot hold
// one (a []string of paths computed from a struct that holds a handle).
func (c *checker) fitting(as atoms, t types.Type) atoms {
	if !as.has(aHandle) && !as.has(aParam) || c.holdsHandle(t) {
		return as
	}
	return c.withoutHandles(as)
}

// withoutHandles turns the handles in as into their content (a value
// computed from a handle holds what was read from it) and marks its
// parameters as bringing no handle.
func (c *checker) withoutHandles(as atoms) atoms {
	out := make(atoms, 0, len(as))
	for _, a := range as {
		switch a.Kind {
		case aHandle:
			if !c.readable(a.Flag) {
				continue
			}
			a = atom{Kind: aContent, Key: a.Key}
		case aParam:
			a.NoHandle = true
		}
		out.add(a)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// noContent reports whether a value of type t cannot carry a file's
// content, a handle or a function: errors, booleans and numbers, and the SSA
// builder's own types (such as the iterator of a range over a map), which
// go/types cannot compare.
func noContent(t types.Type) bool {
	if t == nil || !goType(t) {
		return true
	}
	if isError(t) {
		return true
	}
	b, ok := t.Underlying().(*types.Basic)
	// A number computed from a file's content is a value, not the
	// document (a one-value file read with strconv.Atoi is no document
	// either); a uintptr may be a file's descriptor (Fd).
	return ok && (b.Info()&types.IsBoolean != 0 || b.Info()&types.IsNumeric != 0 && b.Kind() != types.Uintptr)
}

// atomsOf returns what v may hold.
func (s *fnState) atomsOf(v ssa.Value) atoms {
	switch v := v.(type) {
	case nil:
		return nil
	case *ssa.Function:
		return atoms{{Kind: aFunc, Key: s.c.funcKeyOf(v)}}
	case *ssa.MakeClosure:
		fn, _ := v.Fn.(*ssa.Function)
		if fn == nil {
			return nil
		}
		return atoms{{Kind: aFunc, Key: s.c.funcKeyOf(fn)}}
	case *ssa.Const:
		return nil
	}
	if noContent(v.Type()) {
		return nil
	}
	var out atoms
	for _, o := range s.roots(v) {
		out.add(s.memOf(o)...)
	}
	return s.c.fitting(out, v.Type())
}

// memOf returns what an object holds.
func (s *fnState) memOf(o object) atoms {
	g, ok := o.v.(*ssa.Global)
	if !ok {
		return s.mem[o]
	}
	if g.Pkg == s.c.pkg {
		return s.c.globals[g]
	}
	obj, ok := g.Object().(*types.Var)
	if !ok {
		return nil
	}
	var f varFact
	if !s.c.pass.ImportObjectFact(obj, &f) {
		return nil
	}
	out := append(atoms(nil), f.Atoms...)
	if f.Call != nil {
		out.add(atom{Kind: aFunc, Key: varKeyPrefix + g.Pkg.Pkg.Path() + keySep + g.Name()})
	}
	return out
}

// roots returns the objects that v may point into (or, for a value that is
// no pointer, the objects whose content it was computed from).
func (s *fnState) roots(v ssa.Value) []object {
	if r, ok := s.rootsOf[v]; ok {
		return r
	}
	s.rootsOf[v] = nil // a cycle through phis adds nothing
	var r []object
	switch v := v.(type) {
	case *ssa.Extract:
		if call, ok := v.Tuple.(*ssa.Call); ok {
			r = []object{{v: call, index: v.Index}}
		} else {
			r = s.operandRoots(v.Tuple)
		}
	case *ssa.FieldAddr:
		r = s.roots(v.X)
	case *ssa.IndexAddr:
		r = s.roots(v.X)
	case *ssa.Field:
		r = s.roots(v.X)
	case *ssa.Index:
		r = s.roots(v.X)
	case *ssa.Lookup:
		r = s.roots(v.X)
	case *ssa.Slice:
		r = s.roots(v.X)
	case *ssa.Convert:
		r = s.roots(v.X)
	case *ssa.ChangeType:
		r = s.roots(v.X)
	case *ssa.MakeInterface:
		r = s.roots(v.X)
	case *ssa.ChangeInterface:
		r = s.roots(v.X)
	case *ssa.TypeAssert:
		r = s.roots(v.X)
	case *ssa.SliceToArrayPointer:
		r = s.roots(v.X)
	case *ssa.MultiConvert:
		r = s.roots(v.X)
	case *ssa.UnOp:
		r = s.roots(v.X)
	case *ssa.Range:
		r = s.roots(v.X)
	case *ssa.Next:
		r = s.roots(v.Iter)
	case *ssa.BinOp:
		r = append(append(r, s.roots(v.X)...), s.roots(v.Y)...)
	case *ssa.Phi:
		for _, e := range v.Edges {
			r = append(r, s.roots(e)...)
		}
		r = dedupObjects(r)
	default:
		r = []object{{v: v}}
	}
	s.rootsOf[v] = r
	return r
}

func (s *fnState) operandRoots(v ssa.Value) []object {
	if instr, ok := v.(ssa.Instruction); ok {
		var r []object
		for _, op := range instr.Operands(nil) {
			if op != nil && *op != nil {
				r = append(r, s.roots(*op)...)
			}
		}
		return dedupObjects(r)
	}
	return []object{{v: v}}
}

func dedupObjects(r []object) []object {
	seen := make(map[object]bool, len(r))
	out := r[:0]
	for _, o := range r {
		if !seen[o] {
			seen[o] = true
			out = append(out, o)
		}
	}
	return out
}

// paramAtoms returns what the caller gave parameter i, for a call whose
// arguments are args (nil where unknown).
func (s *fnState) argAtoms(args []ssa.Value, i int) atoms {
	if i < 0 || i >= len(args) || args[i] == nil {
		return nil
	}
	return s.atomsOf(args[i])
}

// goType reports whether t is one of go/types' types.
func goType(t types.Type) bool {
	switch t.(type) {
	case *types.Basic, *types.Pointer, *types.Array, *types.Slice, *types.Map, *types.Chan,
		*types.Struct, *types.Tuple, *types.Signature, *types.Named, *types.Interface,
		*types.TypeParam, *types.Union, *types.Alias:
		return true
	}
	return false
}
