package statuslint

import (
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// call applies what a call does: what the flags name, what a model of the
// standard library (or of this module) says, what the facts of the
// functions it may call say, and otherwise what any code that cannot be
// seen may do (opaque). Function values passed to it are taken to run
// during the call.
func (s *fnState) call(instr ssa.CallInstruction) {
	cc := instr.Common()
	if b, ok := cc.Value.(*ssa.Builtin); ok {
		s.builtin(instr, b, cc.Args)
		return
	}
	args := callArgs(cc)
	handled := false
	_, closure := cc.Value.(*ssa.MakeClosure)
	switch {
	case cc.IsInvoke():
		handled = s.invoke(instr, cc, args)
	case closure:
		handled = s.dynamic(instr, cc.Value, args)
	case cc.StaticCallee() != nil:
		handled = s.static(instr, cc.StaticCallee(), args, nil)
	default:
		handled = s.dynamic(instr, cc.Value, args)
	}
	if !handled {
		s.opaque(instr, args, s.signature(cc))
	}
	lockRunner := false
	if obj := staticObject(cc); obj != nil && pkgPath(obj) == statusPkg {
		lockRunner = true // status.Mutate runs fn under the document's lock
	}
	for _, a := range cc.Args {
		if lockRunner {
			break
		}
		s.runFuncArg(instr, a)
	}
}

// signature returns the signature of the function a call calls.
func (s *fnState) signature(cc *ssa.CallCommon) *types.Signature {
	if cc.IsInvoke() {
		return cc.Method.Type().(*types.Signature)
	}
	sig, _ := cc.Value.Type().Underlying().(*types.Signature)
	return sig
}

// static handles a call of a known function.
func (s *fnState) static(instr ssa.CallInstruction, fn *ssa.Function, args []ssa.Value, bindings []*ssa.Value) bool {
	obj, _ := fn.Object().(*types.Func)
	if obj != nil && s.flagged(instr, obj, args) {
		return true
	}
	if obj != nil {
		if m := models[funcKey(obj.Origin())]; m != nil {
			m(s, &modelCall{instr: instr, args: args, fn: obj})
			return true
		}
	}
	f := s.c.summaryOf(fn)
	if f == nil {
		// no fact: a function of the standard library (opaque), or one
		// that does nothing with files
		return obj == nil || !isStd(obj.Pkg())
	}
	full := args
	if len(fn.FreeVars) > 0 {
		full = append(append([]ssa.Value(nil), args...), make([]ssa.Value, len(fn.FreeVars))...)
		for i, b := range bindings {
			if i+len(args) < len(full) && b != nil {
				full[len(args)+i] = *b
			}
		}
	}
	s.apply(instr, f, full, len(args), s.c.literal(fn))
	if obj != nil && isMethod(obj) {
		s.noteSelfSave(instr, obj, fn, f, args)
	}
	return true
}

// summaryOf returns the fact of a function: computed in this pass for the
// package's own functions, imported for others.
func (c *checker) summaryOf(fn *ssa.Function) *fnFact {
	if f, ok := c.local[fn]; ok {
		return f
	}
	if o := fn.Origin(); o != nil && o != fn {
		return c.summaryOf(o)
	}
	if isWrapper(fn) && fn.Blocks != nil {
		return c.wrapper(fn)
	}
	if obj, ok := fn.Object().(*types.Func); ok {
		return c.importedFact(obj)
	}
	return nil
}

// isWrapper reports whether fn is a wrapper the SSA builder made (of a
// promoted or bound method, a method expression).
func isWrapper(fn *ssa.Function) bool {
	switch {
	case fn.Synthetic == "", fn.Synthetic == "package initializer", fn.Synthetic == "range-over-func yield",
		strings.HasPrefix(fn.Synthetic, "from type information"):
		return false
	}
	return true
}

// wrapper analyses a wrapper on demand, once a round.
func (c *checker) wrapper(fn *ssa.Function) *fnFact {
	c.local[fn] = nil // a cycle ends here
	c.wrappers = append(c.wrappers, fn)
	s := c.analyse(fn)
	f := s.summary()
	c.local[fn] = f
	return f
}

// dynamic handles a call of a function value: the functions it may hold.
func (s *fnState) dynamic(instr ssa.CallInstruction, callee ssa.Value, args []ssa.Value) bool {
	if mc, ok := callee.(*ssa.MakeClosure); ok {
		if fn, ok := mc.Fn.(*ssa.Function); ok {
			b := make([]*ssa.Value, len(mc.Bindings))
			for i := range mc.Bindings {
				b[i] = &mc.Bindings[i]
			}
			return s.static(instr, fn, args, b)
		}
	}
	if g := loadedGlobal(callee); g != nil {
		if v, ok := g.Object().(*types.Var); ok && s.flagged(instr, v, args) {
			return true
		}
	}
	handled := false
	for _, a := range s.atomsOf(callee) {
		if a.Kind != aFunc {
			continue
		}
		if m := models[a.Key]; m != nil {
			if fn := s.c.lookupFunc(a.Key); fn != nil {
				m(s, &modelCall{instr: instr, args: args, fn: fn})
				handled = true
				continue
			}
		}
		if f := s.c.funcFact(a.Key); f != nil {
			s.apply(instr, f, args, len(args), nil)
			handled = true
		}
	}
	if !handled && !s.likeLoaders(instr, callee, args) && !s.fromParam(callee) {
		sig, _ := callee.Type().Underlying().(*types.Signature)
		if doc := s.givenDocument(args); sig != nil && (doc || programResult(sig)) {
			s.noteGap(gapFuncVal, instr, sig.String(), doc)
		}
	}
	return handled
}

// likeLoaders applies, to a call of a function value whose functions are
// not known (one kept in a struct field that another package sets, such as
// a command factory's loader of its configuration), the reads and results
// of every function of the program with the same signature that returns a
// file's content as a value of a type the program defines (see
// [isLoader]). What else the call does stays opaque. It reports whether
// there was one.
func (s *fnState) likeLoaders(instr ssa.CallInstruction, callee ssa.Value, args []ssa.Value) bool {
	sig, _ := callee.Type().Underlying().(*types.Signature)
	if sig == nil || !programResult(sig) {
		return false
	}
	s.c.importedMethods() // builds the imported loaders
	applied := false
	for _, fn := range slices.Concat(s.c.loaders, s.c.importedLoaders) {
		if !types.Identical(fn.Type(), sig) {
			continue
		}
		if f := s.c.importedFact(fn); f != nil {
			s.apply(instr, &fnFact{Results: f.Results, Reads: f.Reads}, args, len(args), nil)
			applied = true
		}
	}
	return applied
}

// literal returns the last analysis of a function literal of this package.
func (c *checker) literal(fn *ssa.Function) *fnState {
	if fn == nil || fn.Parent() == nil {
		return nil
	}
	return c.states[fn]
}

func loadedGlobal(v ssa.Value) *ssa.Global {
	if u, ok := v.(*ssa.UnOp); ok {
		g, _ := u.X.(*ssa.Global)
		return g
	}
	return nil
}

// invoke handles a call of an interface method: on a file handle, what the
// handle's method does; for other receivers, what every method with a fact
// that implements it does.
func (s *fnState) invoke(instr ssa.CallInstruction, cc *ssa.CallCommon, args []ssa.Value) bool {
	if s.flagged(instr, cc.Method, args) {
		return true
	}
	if m := models[funcKey(cc.Method)]; m != nil {
		m(s, &modelCall{instr: instr, args: args, fn: cc.Method})
		return true
	}
	handled := s.fileMethod(instr, cc.Method.Name(), args)
	s.union = true
	impls := s.c.implementations(cc.Method)
	for _, impl := range impls {
		if f := s.c.importedFact(impl); f != nil {
			s.apply(instr, f, args, len(args), nil)
			s.noteSelfSave(instr, impl, nil, f, args)
			handled = true
		}
	}
	s.union = false
	if len(impls) == 0 && !handled && cc.Method.Pkg() != nil && !isStd(cc.Method.Pkg()) {
		// whether a type in sight implements it is asked once, in gaps
		name := objectName(cc.Method)
		if _, ok := s.c.gapIfaces[name]; !ok {
			iface, _ := cc.Value.Type().Underlying().(*types.Interface)
			s.c.gapIfaces[name] = iface
		}
		s.noteGap(gapIface, instr, name, s.givenDocument(args))
	}
	return handled
}

// runFuncArg applies, at a call, what a function passed to it does: the
// callee is taken to call it. Its free variables are those it was made
// with; its parameters are unknown.
func (s *fnState) runFuncArg(instr ssa.CallInstruction, a ssa.Value) {
	if mc, ok := a.(*ssa.MakeClosure); ok {
		if fn, ok := mc.Fn.(*ssa.Function); ok {
			if f := s.c.summaryOf(fn); f != nil {
				full := make([]ssa.Value, len(fn.Params)+len(mc.Bindings))
				copy(full[len(fn.Params):], mc.Bindings)
				s.apply(instr, f, full, 0, s.c.literal(fn))
			}
		}
		return
	}
	if fn, ok := a.(*ssa.Function); ok {
		if f := s.c.summaryOf(fn); f != nil {
			s.apply(instr, f, make([]ssa.Value, len(fn.Params)), 0, s.c.literal(fn))
		}
	}
}

// builtin handles append and copy.
func (s *fnState) builtin(instr ssa.CallInstruction, b *ssa.Builtin, args []ssa.Value) {
	switch b.Name() {
	case "append":
		var in atoms
		for _, a := range args {
			in.add(s.atomsOf(a)...)
		}
		s.setResult(instr, 0, in)
	case "copy":
		if len(args) == 2 {
			s.store(args[0], s.atomsOf(args[1]))
		}
	}
}
