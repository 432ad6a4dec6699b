package statuslint

import (
	"go/token"
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
	if !handled {
		s.likeLoaders(instr, callee, args)
	}
	return handled
}

// likeLoaders applies, to a call of a function value whose functions are
// not known (one kept in a struct field that another package sets, such as
// a command factory's loader of its configuration), the reads and results
// of every function of the program with the same signature that returns a
// file's content as a value of a type the program defines (see
// [isLoader]). What else the call does stays opaque.
func (s *fnState) likeLoaders(instr ssa.CallInstruction, callee ssa.Value, args []ssa.Value) {
	sig, _ := callee.Type().Underlying().(*types.Signature)
	if sig == nil || !programResult(sig) {
		return
	}
	s.c.importedMethods() // builds the imported loaders
	for _, fn := range slices.Concat(s.c.loaders, s.c.importedLoaders) {
		if !types.Identical(fn.Type(), sig) {
			continue
		}
		if f := s.c.importedFact(fn); f != nil {
			s.apply(instr, &fnFact{Results: f.Results, Reads: f.Reads}, args, len(args), nil)
		}
	}
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
	for _, impl := range s.c.implementations(cc.Method) {
		if f := s.c.importedFact(impl); f != nil {
			s.apply(instr, f, args, len(args), nil)
			handled = true
		}
	}
	s.union = false
	return handled
}

// decodable reports whether argument i, by its type, can be a document to
// decode: text, bytes, or a file-like value.
func (s *fnState) decodable(args []ssa.Value, i int) bool {
	if i >= len(args) || args[i] == nil {
		return false
	}
	t := args[i].Type()
	return contentType(t) || fileLike(t, make(map[types.Type]bool))
}

// skipVia reports whether, in a call through an interface, an access to
// the file behind an argument is to be ignored: every implementation in
// sight is applied, so such an access counts only where the argument is
// a file-like value (a reader or writer, an *os.File), not for any
// interface whose implementations include one that writes what it is
// given.
func (s *fnState) skipVia(k string, args []ssa.Value) bool {
	i, via := viaIndex(k)
	if !via || !s.union {
		return false
	}
	return i >= len(args) || args[i] == nil || !fileLike(args[i].Type(), make(map[types.Type]bool))
}

// fileLike reports whether a value of type t is a file handle or an
// interface through which one is read or written.
func fileLike(t types.Type, seen map[types.Type]bool) bool {
	if t == nil || seen[t] {
		return false
	}
	seen[t] = true
	if isOSFile(t) || isViper(t) {
		return true
	}
	switch tt := t.Underlying().(type) {
	case *types.Interface:
		for i := range tt.NumMethods() {
			if k := fileMethods[tt.Method(i).Name()]; k == fmWrite || k == fmRead {
				return true
			}
		}
	case *types.Pointer:
		return fileLike(tt.Elem(), seen)
	case *types.Struct:
		for i := range tt.NumFields() {
			if tt.Field(i).Embedded() && fileLike(tt.Field(i).Type(), seen) {
				return true
			}
		}
	}
	return false
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

// apply makes a call do what the callee's fact f says, with args in place
// of the callee's parameters (nil where unknown). n is the number of
// arguments the call passes (the rest are free variables of a closure).
func (s *fnState) apply(instr ssa.CallInstruction, f *fnFact, args []ssa.Value, n int, inner *fnState) {
	for i, res := range f.Results {
		as := s.substAtoms(instr, res, args)
		s.noteReads(instr, as)
		s.setResult(instr, i, as)
	}
	for _, st := range f.Stores {
		if st.Param < len(args) && args[st.Param] != nil {
			s.store(args[st.Param], s.substAtoms(instr, st.Atoms, args))
		}
	}
	for _, k := range f.Reads {
		if s.skipVia(k, args) {
			continue
		}
		for _, key := range s.substKeys(k, args, evRead) {
			s.event(evRead, key, instr, s.describe(instr, k, args, f.Recv))
			s.within(inner, evRead, k)
		}
	}
	for _, k := range f.Writes {
		if s.skipVia(k, args) {
			continue
		}
		// through an interface, a write of what a file-like argument holds
		// is made whatever the implementation; one by name may not be
		union := s.union
		if _, via := viaIndex(k); via {
			s.union = false
		}
		for _, key := range s.substKeys(k, args, evWrite) {
			s.event(evWrite, key, instr, s.describe(instr, k, args, f.Recv))
			s.within(inner, evWrite, k)
		}
		s.ownFile(instr, f, k, args)
		s.union = union
	}
	union := s.union
	s.union = true
	for _, k := range f.MayWrites {
		if s.skipVia(k, args) {
			continue
		}
		for _, key := range s.substKeys(k, args, evWrite) {
			s.event(evWrite, key, instr, s.describe(instr, k, args, f.Recv))
		}
	}
	s.union = union
	for _, t := range f.Truncs {
		flag := s.substFlag(t.Flag, args)
		for _, key := range s.substKeys(t.Key, args, evWrite) {
			s.truncate(instr, key, s.c.callWhat(instr, t.What), flag, s.describe(instr, t.Key, args, f.Recv))
		}
	}
	for _, t := range f.InPlace {
		for _, key := range s.substKeys(t.Key, args, evWrite) {
			what := t.What
			if inner == nil {
				what = s.c.callWhat(instr, t.What)
			}
			s.inPlace(instr, key, what, s.describe(instr, t.Key, args, f.Recv))
			s.within(inner, evInPlace, t.Key)
		}
	}
	for _, l := range f.Locks {
		s.lock(instr, lockOp{How: s.substFlag(l.How, args), Unlock: l.Unlock})
	}
	for _, p := range f.Fills {
		if p < n && p < len(args) && args[p] != nil {
			s.fill(instr, args, p)
		}
	}
	for _, p := range f.Moves {
		if p < len(args) && args[p] != nil {
			s.renamed[s.argTerm(args[p])] = true
		}
	}
}

// ownFile records, for a method's write to a path that its receiver keeps
// in a field of its own (template k is $recv.Field), a write of the file
// the receiver was decoded from: a configuration that remembers where it
// was loaded from is saved there. A path deeper in a value, or in a
// parameter that is not the receiver, is another file that the value
// names (a container's ID file named in its options).
func (s *fnState) ownFile(instr ssa.CallInstruction, f *fnFact, k string, args []ssa.Value) {
	if !f.Recv || len(args) == 0 || args[0] == nil || !ownField(k) {
		return
	}
	for _, a := range s.atomsOf(args[0]) {
		if a.Kind == aDecoded && isTemplate(a.Key) {
			s.event(evWrite, a.Key, instr, "")
		}
	}
}

// within makes the last event recorded point where the function literal
// whose analysis is inner makes it.
func (s *fnState) within(inner *fnState, kind eventKind, key string) {
	if inner == nil || len(s.events) == 0 {
		return
	}
	for _, e := range inner.events {
		if e.kind == kind && e.key == key {
			last := &s.events[len(s.events)-1]
			last.pos = s.c.eventPos(e)
			if last.desc == "" {
				last.desc = e.desc
			}
			return
		}
	}
}

// noteReads remembers where the content of files among as was read.
func (s *fnState) noteReads(instr ssa.CallInstruction, as atoms) {
	for _, a := range as {
		switch a.Kind {
		case aContent, aDecoded, aHandle:
			if _, ok := s.readAt[a.Key]; !ok {
				s.readAt[a.Key] = instr
			}
		}
	}
}

// substAtoms returns what atoms of a fact stand for at a call.
func (s *fnState) substAtoms(instr ssa.CallInstruction, in atoms, args []ssa.Value) atoms {
	var out atoms
	for _, a := range in {
		switch a.Kind {
		case aParam:
			if a.NoHandle {
				out.add(s.c.withoutHandles(s.argAtoms(args, a.Param))...)
				continue
			}
			out.add(s.argAtoms(args, a.Param)...)
		case aDecParam:
			if s.union && !s.decodable(args, a.Param) {
				// some implementation decodes what it is given, but this
				// argument is no text, bytes or file
				out.add(s.argAtoms(args, a.Param)...)
				continue
			}
			out.add(s.decode(instr, s.argAtoms(args, a.Param))...)
		case aFunc:
			out.add(a)
		default:
			key, ok := s.substKey(a.Key, args)
			if !ok {
				continue
			}
			out.add(atom{Kind: a.Kind, Key: key, Flag: s.substFlag(a.Flag, args)})
		}
	}
	return out
}

// substKey fills in a template with the keys of a call's arguments.
func (s *fnState) substKey(t string, args []ssa.Value) (string, bool) {
	return substitute(t, func(i int) (string, bool) {
		if i < 0 || i >= len(args) || args[i] == nil {
			return "", false
		}
		return s.argTerm(args[i]), true
	})
}

// argTerm keys an argument; a captured variable (an allocation passed as
// a closure's binding) stands for its value.
func (s *fnState) argTerm(v ssa.Value) string {
	if a, ok := v.(*ssa.Alloc); ok && a.Heap {
		return s.loadTerm(a)
	}
	return s.term(v)
}

// substKeys returns the keys a template stands for at a call: a via key
// stands for the files whose handles (for a write) or content (for a read)
// the argument holds.
func (s *fnState) substKeys(t string, args []ssa.Value, kind eventKind) []string {
	if i, ok := viaIndex(t); ok {
		return s.viaKeys(s.argAtoms(args, i), kind)
	}
	if k, ok := s.substKey(t, args); ok {
		return []string{k}
	}
	return nil
}

// viaKeys returns the files that as gives access to: for a write, the
// writable handles; for a read, content and readable handles; and the
// parameters that may bring either.
func (s *fnState) viaKeys(as atoms, kind eventKind) []string {
	var out []string
	for _, a := range as {
		switch {
		case a.Kind == aHandle && kind == evWrite && s.c.writable(a.Flag),
			a.Kind == aHandle && kind == evRead && s.c.readable(a.Flag),
			a.Kind == aContent && kind == evRead:
			out = append(out, a.Key)
		case a.Kind == aParam:
			if s.mayHoldHandle(a.Param) && (kind == evRead || !a.NoHandle) || kind == evRead && contentType(s.paramType(a.Param)) {
				out = append(out, viaMarker(a.Param))
			}
		}
	}
	return out
}

// substFlag resolves an integer argument at a call.
func (s *fnState) substFlag(a intArg, args []ssa.Value) intArg {
	if !a.FromParam {
		return a
	}
	if a.Param >= len(args) || args[a.Param] == nil {
		return intArg{}
	}
	return s.intArg(args[a.Param])
}

// intArg returns what is known of an integer value: a constant, or the
// value of a parameter.
func (s *fnState) intArg(v ssa.Value) intArg {
	for range maxTermDeep {
		switch x := v.(type) {
		case *ssa.Const:
			if i, ok := constInt(x); ok {
				return intArg{Known: true, Val: i}
			}
			return intArg{}
		case *ssa.Parameter, *ssa.FreeVar:
			return intArg{FromParam: true, Param: s.index[x]}
		case *ssa.Convert:
			v = x.X
		case *ssa.ChangeType:
			v = x.X
		case *ssa.BinOp:
			l, r := s.intArg(x.X), s.intArg(x.Y)
			if l.Known && r.Known {
				switch x.Op.String() {
				case "|":
					return intArg{Known: true, Val: l.Val | r.Val}
				case "&":
					return intArg{Known: true, Val: l.Val & r.Val}
				case "&^":
					return intArg{Known: true, Val: l.Val &^ r.Val}
				}
			}
			return intArg{}
		default:
			return intArg{}
		}
	}
	return intArg{}
}

// describe returns how the path of template t is written at the call: the
// source of the argument it names first.
func (s *fnState) describe(instr ssa.CallInstruction, t string, args []ssa.Value, recv bool) string {
	i, ok := firstParam(t, recv)
	if v, via := viaIndex(t); via {
		i, ok = v, true
	}
	if !ok {
		return ""
	}
	return s.c.argSource(instr, i, len(args))
}

// fill decodes, at a call of a function whose parameter p reaches code the
// analysis cannot see, text or bytes the call is given into argument p.
func (s *fnState) fill(instr ssa.CallInstruction, args []ssa.Value, p int) {
	for _, a := range s.atomsOf(args[p]) {
		if a.Kind == aParam {
			s.fills[a.Param] = true
		}
	}
	if !decodeTarget(valueType(args[p])) {
		return
	}
	var in atoms
	for i, a := range args {
		if i != p && a != nil && contentType(a.Type()) {
			in.add(contentOf(s.atomsOf(a), s.c).filter(func(a atom) bool { return a.Kind == aContent })...)
		}
	}
	if len(in) > 0 {
		s.store(args[p], s.decode(instr, in))
	}
}

// decode returns the decoded form of the content among in, and records
// each file decoded as read at instr.
func (s *fnState) decode(instr ssa.CallInstruction, in atoms) atoms {
	var out atoms
	for _, a := range in {
		switch a.Kind {
		case aContent, aDecoded:
			out.add(atom{Kind: aDecoded, Key: a.Key})
			if a.Kind == aContent {
				s.event(evRead, a.Key, instr, s.descs[a.Key])
			}
		case aHandle:
			if s.c.readable(a.Flag) {
				out.add(atom{Kind: aDecoded, Key: a.Key})
				s.event(evRead, a.Key, instr, s.descs[a.Key])
			}
		case aParam:
			out.add(atom{Kind: aDecParam, Param: a.Param})
			if s.mayHoldContent(a.Param) {
				s.event(evRead, viaMarker(a.Param), instr, "")
			}
		case aDecParam:
			out.add(a)
		}
	}
	return out
}

// opaque handles a call of code the analysis cannot see (the standard
// library beyond its models, an interface method with no implementation
// in sight, a function value of unknown origin): its results hold what it
// is given (a handle's content among it); it writes a handle it is given
// as an io.Writer; it fills buffers it is given with the content it is
// given; it decodes text or bytes it is given into a pointer, map or
// empty interface it is also given (a decoder such as yaml.Unmarshal).
func (s *fnState) opaque(instr ssa.CallInstruction, args []ssa.Value, sig *types.Signature) {
	var in atoms
	for _, a := range args {
		for _, at := range s.atomsOf(a) {
			switch at.Kind {
			case aFunc:
				continue
			case aHandle:
				if s.c.readable(at.Flag) {
					in.add(atom{Kind: aContent, Key: at.Key})
				}
			}
			in.add(at)
		}
	}
	if call, ok := instr.(*ssa.Call); ok {
		for i := range resultCount(call) {
			s.setResult(instr, i, in)
		}
	}
	params := paramTypes(sig, instr.Common().IsInvoke() || isMethodSig(sig), len(args))
	var text, targets []int
	for i, a := range args {
		if a == nil {
			continue
		}
		variadic := sig != nil && sig.Variadic() && i >= len(params)-1
		if i < len(params) && s.c.writerType(params[i]) {
			s.writeVia(instr, s.atomsOf(a), s.c.argSource(instr, i, len(args)))
		}
		for _, at := range s.atomsOf(a) {
			if at.Kind == aParam {
				s.fills[at.Param] = true
			}
		}
		if variadic {
			continue
		}
		switch {
		case contentType(a.Type()) && bufferType(a.Type()):
			s.store(a, contentOf(in, s.c))
		case contentType(a.Type()):
			text = append(text, i)
		case decodeTarget(valueType(a)):
			targets = append(targets, i)
		}
	}
	if len(text) == 0 || len(targets) == 0 {
		return
	}
	var content atoms
	for _, i := range text {
		content.add(contentOf(s.atomsOf(args[i]), s.c).filter(func(a atom) bool { return a.Kind == aContent })...)
	}
	if len(content) == 0 {
		return
	}
	dec := s.decode(instr, content)
	for _, i := range targets {
		s.store(args[i], dec)
	}
}

// contentOf returns the content among as: text or bytes of files, readable
// handles as their content, and parameters.
func contentOf(as atoms, c *checker) atoms {
	var out atoms
	for _, a := range as {
		switch a.Kind {
		case aContent, aParam:
			out.add(a)
		case aHandle:
			if c.readable(a.Flag) {
				out.add(atom{Kind: aContent, Key: a.Key})
			}
		}
	}
	return out
}

// writeVia records a write of the files whose writable handles as holds.
func (s *fnState) writeVia(instr ssa.CallInstruction, as atoms, desc string) {
	for _, a := range as {
		switch a.Kind {
		case aHandle:
			if s.c.writable(a.Flag) {
				s.event(evWrite, a.Key, instr, firstNonEmpty(s.descs[a.Key], desc))
			}
		case aParam:
			// what a parameter holds reaches this write: the file, if any,
			// is the caller's to name
			if s.mayHoldHandle(a.Param) && !a.NoHandle {
				s.event(evWrite, viaMarker(a.Param), instr, desc)
			}
		}
	}
}

// paramType returns the type of parameter (or free variable) i.
func (s *fnState) paramType(i int) types.Type {
	switch {
	case i < 0:
		return nil
	case i < len(s.fn.Params):
		return s.fn.Params[i].Type()
	case i-len(s.fn.Params) < len(s.fn.FreeVars):
		return s.fn.FreeVars[i-len(s.fn.Params)].Type()
	}
	return nil
}

// mayHoldContent reports whether parameter i can bring a file's content:
// text, bytes, or a handle.
func (s *fnState) mayHoldContent(i int) bool {
	t := s.paramType(i)
	return t != nil && (contentType(t) || s.mayHoldHandle(i))
}

// mayHoldHandle reports whether what parameter i holds can include a file
// handle: an interface, an *os.File, or a value with one in it.
func (s *fnState) mayHoldHandle(i int) bool {
	return s.c.holdsHandle(s.paramType(i))
}

// isOSFile reports whether t is os.File.
func isOSFile(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "os" && n.Obj().Name() == "File"
}

// holdsHandle reports whether a value of type t can hold an open file: an
// *os.File, or an interface, anywhere in it. The answer depends on t alone,
// and the same types are asked about again in every round: it is kept.
func (c *checker) holdsHandle(t types.Type) bool {
	if t == nil {
		return false
	}
	h, ok := c.handles[t]
	if !ok {
		h = holdsHandle(t, make(map[types.Type]bool))
		c.handles[t] = h
	}
	return h
}

func holdsHandle(t types.Type, seen map[types.Type]bool) bool {
	if t == nil || seen[t] {
		return false
	}
	seen[t] = true
	if isOSFile(t) {
		return true
	}
	switch tt := t.Underlying().(type) {
	case *types.Interface:
		return true
	case *types.Pointer:
		return holdsHandle(tt.Elem(), seen)
	case *types.Slice:
		return holdsHandle(tt.Elem(), seen)
	case *types.Array:
		return holdsHandle(tt.Elem(), seen)
	case *types.Map:
		return holdsHandle(tt.Key(), seen) || holdsHandle(tt.Elem(), seen)
	case *types.Chan:
		return holdsHandle(tt.Elem(), seen)
	case *types.Struct:
		for i := range tt.NumFields() {
			if holdsHandle(tt.Field(i).Type(), seen) {
				return true
			}
		}
	}
	return false
}

// readVia stores the content of the readable handles as holds into dst.
func (s *fnState) readVia(dst ssa.Value, as atoms) {
	s.store(dst, contentOf(as, s.c))
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// fileMethod handles a call of a method of a file handle through an
// interface (io.Writer, an afero or billy File): what *os.File's method of
// that name does, for the handles the receiver holds.
func (s *fnState) fileMethod(instr ssa.CallInstruction, name string, args []ssa.Value) bool {
	if len(args) == 0 {
		return false
	}
	recv := s.atomsOf(args[0])
	if !recv.has(aHandle) && !recv.has(aParam) {
		return false
	}
	switch fileMethods[name] {
	case fmWrite:
		s.writeVia(instr, recv, s.c.argSource(instr, 0, len(args)))
	case fmRead:
		if len(args) > 1 {
			s.readVia(args[1], recv)
		}
	case fmSame:
		s.setResult(instr, 0, recv)
	default:
		return false
	}
	return true
}

// paramTypes returns the types of a call's parameters in the order of its
// arguments (the receiver first for a method).
func paramTypes(sig *types.Signature, method bool, n int) []types.Type {
	if sig == nil {
		return nil
	}
	var out []types.Type
	if method && sig.Recv() != nil {
		out = append(out, sig.Recv().Type())
	} else if method {
		out = append(out, nil)
	}
	for i := range sig.Params().Len() {
		out = append(out, sig.Params().At(i).Type())
	}
	return out
}

func isMethodSig(sig *types.Signature) bool { return sig != nil && sig.Recv() != nil }

// valueType returns the type of the value an argument carries: for a
// value converted to an interface, its concrete type.
func valueType(v ssa.Value) types.Type {
	if mi, ok := v.(*ssa.MakeInterface); ok {
		return mi.X.Type()
	}
	return v.Type()
}

// decodeTarget reports whether a value of type t can receive a decoded
// document: a pointer to something other than a number, text, bytes, a
// function or a type of the standard library (a parser's token.FileSet is
// no document), that is not itself a reader or writer; a map; an empty
// interface.
func decodeTarget(t types.Type) bool {
	if t == nil {
		return false
	}
	switch tt := t.Underlying().(type) {
	case *types.Pointer:
		if n, ok := types.Unalias(tt.Elem()).(*types.Named); ok && n.Obj().Pkg() != nil && isStd(n.Obj().Pkg()) {
			return false
		}
		switch elem := tt.Elem().Underlying().(type) {
		case *types.Basic, *types.Signature, *types.Chan:
			return false
		case *types.Slice:
			if isByte(elem.Elem()) {
				return false
			}
		}
		return !implements(t, readerIface) && !implements(t, writerIface)
	case *types.Map:
		return true
	case *types.Interface:
		return tt.Empty()
	}
	return false
}

// contentType reports whether a value of type t can carry a file's content
// into a decoder: text or bytes (a reader's content is read by a model or
// a body the analysis sees).
func contentType(t types.Type) bool {
	if t == nil {
		return false
	}
	switch tt := t.Underlying().(type) {
	case *types.Basic:
		return tt.Info()&types.IsString != 0
	case *types.Slice:
		return isByte(tt.Elem())
	case *types.Pointer:
		return bufferType(t)
	}
	return false
}

// bufferType reports whether t is a buffer a call can fill: bytes, or a
// pointer to a struct that is an io.Writer and a fmt.Stringer
// (bytes.Buffer, strings.Builder).
func bufferType(t types.Type) bool {
	if t == nil {
		return false
	}
	switch tt := t.Underlying().(type) {
	case *types.Slice:
		return isByte(tt.Elem())
	case *types.Pointer:
		_, isStruct := tt.Elem().Underlying().(*types.Struct)
		return isStruct && implements(t, writerIface) && implements(t, stringerIface)
	}
	return false
}

// implements reports whether a value of type t, or an addressable one, has
// the methods of iface (io.Reader, io.Writer, fmt.Stringer below): what a
// value can do is told by its method set, signatures included.
func implements(t types.Type, iface *types.Interface) bool {
	if types.Implements(t, iface) {
		return true
	}
	_, isPtr := t.Underlying().(*types.Pointer)
	return !isPtr && !types.IsInterface(t) && types.Implements(types.NewPointer(t), iface)
}

// The interfaces io.Reader, io.Writer and fmt.Stringer, built here because
// the package analysed need not import io or fmt.
var (
	readerIface   = oneMethod("Read", bytesParam, intErrResults)
	writerIface   = oneMethod("Write", bytesParam, intErrResults)
	stringerIface = oneMethod("String", nil, types.NewTuple(types.NewParam(token.NoPos, nil, "", types.Typ[types.String])))

	bytesParam    = types.NewTuple(types.NewParam(token.NoPos, nil, "p", types.NewSlice(types.Typ[types.Byte])))
	intErrResults = types.NewTuple(
		types.NewParam(token.NoPos, nil, "n", types.Typ[types.Int]),
		types.NewParam(token.NoPos, nil, "err", types.Universe.Lookup("error").Type()))
)

func oneMethod(name string, params, results *types.Tuple) *types.Interface {
	sig := types.NewSignatureType(nil, nil, nil, params, results, false)
	return types.NewInterfaceType([]*types.Func{types.NewFunc(token.NoPos, nil, name, sig)}, nil).Complete()
}

func isByte(t types.Type) bool {
	if t == nil {
		return false
	}
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Kind() == types.Byte
}

func isError(t types.Type) bool {
	return t != nil && types.Identical(t, types.Universe.Lookup("error").Type())
}

// staticObject returns the function a call calls, if it is known.
func staticObject(cc *ssa.CallCommon) *types.Func {
	if cc.IsInvoke() {
		return nil
	}
	if fn := cc.StaticCallee(); fn != nil {
		obj, _ := fn.Object().(*types.Func)
		return obj
	}
	return nil
}

func pkgPath(obj types.Object) string {
	if obj == nil || obj.Pkg() == nil {
		return ""
	}
	return obj.Pkg().Path()
}

func isMethod(fn *types.Func) bool {
	sig, _ := fn.Type().(*types.Signature)
	return sig != nil && sig.Recv() != nil
}

// funcKey names a function or method: its package path, then the name of
// its receiver's type, then its name, separated by keySep.
func funcKey(fn *types.Func) string {
	prefix := pkgPath(fn) + keySep
	if sig, _ := fn.Type().(*types.Signature); sig != nil && sig.Recv() != nil {
		t := sig.Recv().Type()
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		switch n := types.Unalias(t).(type) {
		case *types.Named:
			prefix += n.Obj().Name() + "."
		case *types.Interface:
			prefix += "interface."
		}
	}
	return prefix + fn.Name()
}

// keySep separates a function's package path from its name in its key; it
// shows as a dot.
const keySep = "\x01"

func splitFuncKey(key string) (path, name, typ string) {
	path, rest, _ := strings.Cut(key, keySep)
	if t, n, ok := strings.Cut(rest, "."); ok {
		return path, n, t
	}
	return path, rest, ""
}

// funcKeyOf names a function value: a function or method by funcKey, a
// function literal or wrapper by a name local to this pass.
func (c *checker) funcKeyOf(fn *ssa.Function) string {
	if obj, ok := fn.Object().(*types.Func); ok && fn.Parent() == nil && !isWrapper(fn) {
		return funcKey(obj.Origin())
	}
	key := localMarker + "fn:" + fn.String()
	c.keyed[key] = fn
	return key
}
