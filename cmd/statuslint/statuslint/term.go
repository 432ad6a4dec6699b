package statuslint

import (
	"go/constant"
	"go/token"
	"go/types"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// term returns the key of the file that v names as a path: two values
// with the same key denote the same path. Constants are keyed by value,
// parameters by position (paramMarker), package-level variables by name,
// fields and elements by the key of what holds them; a call of a function
// whose fact says which path it returns is keyed by that path, any other
// call by the callee and the keys of its arguments (the same helper called
// on the same path twice gives the same key). A value that several paths
// assign, a register of unknown origin, or a key beyond the bounds is
// local to the function (localMarker).
func (s *fnState) term(v ssa.Value) string {
	if t, ok := s.terms[v]; ok {
		return t
	}
	if s.busy[v] || s.depth > maxTermDeep {
		return s.localTerm(v)
	}
	s.busy[v] = true
	s.depth++
	t := s.makeTerm(v)
	s.depth--
	delete(s.busy, v)
	if len(t) > maxKeyLen {
		t = s.localTerm(v)
	}
	s.terms[v] = t
	return t
}

func (s *fnState) localTerm(v ssa.Value) string {
	return v.Name() + localMarker
}

func (s *fnState) makeTerm(v ssa.Value) string {
	switch v := v.(type) {
	case *ssa.Const:
		return constTerm(v)
	case *ssa.Parameter:
		return paramMarker(s.index[v])
	case *ssa.FreeVar:
		if _, ok := v.Type().Underlying().(*types.Pointer); ok {
			return "&" + paramMarker(s.index[v])
		}
		return paramMarker(s.index[v])
	case *ssa.Global:
		return "&" + globalKey(v)
	case *ssa.Function:
		return s.c.funcKeyOf(v)
	case *ssa.Alloc:
		// a local variable assigned once stands for its value (pointers
		// and what they point to share keys)
		if val := singleStore(v); val != nil {
			return s.term(val)
		}
	case *ssa.UnOp:
		if v.Op == token.MUL {
			return s.loadTerm(v.X)
		}
	case *ssa.FieldAddr:
		return s.term(v.X) + "." + fieldName(v.X.Type(), v.Field)
	case *ssa.Field:
		return s.term(v.X) + "." + fieldName(v.X.Type(), v.Field)
	case *ssa.IndexAddr:
		return s.term(v.X) + s.indexTerm(v.Index)
	case *ssa.Index:
		return s.term(v.X) + s.indexTerm(v.Index)
	case *ssa.Lookup:
		if !v.CommaOk {
			return s.term(v.X) + s.indexTerm(v.Index)
		}
	case *ssa.Convert:
		return s.term(v.X)
	case *ssa.ChangeType:
		return s.term(v.X)
	case *ssa.MakeInterface:
		return s.term(v.X)
	case *ssa.ChangeInterface:
		return s.term(v.X)
	case *ssa.MultiConvert:
		return s.term(v.X)
	case *ssa.SliceToArrayPointer:
		return s.term(v.X)
	case *ssa.TypeAssert:
		if !v.CommaOk {
			return s.term(v.X)
		}
	case *ssa.Slice:
		if t, ok := s.varargs(v); ok {
			return t
		}
		if v.Low == nil && v.High == nil && v.Max == nil {
			return s.term(v.X)
		}
	case *ssa.BinOp:
		return s.binTerm(v)
	case *ssa.Phi:
		return s.phiTerm(v)
	case *ssa.Extract:
		return s.extractTerm(v)
	case *ssa.Call:
		return s.callTerm(v, 0)
	}
	return s.localTerm(v)
}

// loadTerm is the key of the value loaded from addr.
func (s *fnState) loadTerm(addr ssa.Value) string {
	switch a := addr.(type) {
	case *ssa.Global:
		if t := s.c.globalTerm(a); t != "" {
			return t
		}
		return globalKey(a)
	case *ssa.FreeVar:
		return paramMarker(s.index[a]) // the captured variable's value
	case *ssa.Alloc:
		if val := singleStore(a); val != nil {
			return s.term(val)
		}
		return s.localTerm(a)
	}
	return s.term(addr)
}

// indexTerm keys an index: a constant by value, any other index as any
// element ([*]), so that the files of a list (read in one loop, written in
// another) meet.
func (s *fnState) indexTerm(i ssa.Value) string {
	if c, ok := i.(*ssa.Const); ok {
		return "[" + constTerm(c) + "]"
	}
	return "[*]"
}

// singleStore returns the value stored in a local variable that is
// assigned once, whose address goes nowhere else, and whose fields and
// elements are only read.
func singleStore(a *ssa.Alloc) ssa.Value {
	var val ssa.Value
	refs := a.Referrers()
	if refs == nil {
		return nil
	}
	for _, r := range *refs {
		switch r := r.(type) {
		case *ssa.Store:
			if r.Addr != a || val != nil {
				return nil
			}
			val = r.Val
		case *ssa.FieldAddr, *ssa.IndexAddr:
			if !onlyRead(r.(ssa.Value)) {
				return nil
			}
		case *ssa.MakeClosure:
			// captured by a function literal: still assigned once if the
			// literal does not assign it
			if assignsCaptured(r, a) {
				return nil
			}
		default:
			if !isRead(r) {
				return nil
			}
		}
	}
	return val
}

// onlyRead reports whether the address v is only loaded from.
func onlyRead(v ssa.Value) bool {
	refs := v.Referrers()
	if refs == nil {
		return true
	}
	for _, r := range *refs {
		if !isRead(r) {
			return false
		}
	}
	return true
}

func isRead(instr ssa.Instruction) bool {
	switch r := instr.(type) {
	case *ssa.UnOp:
		return r.Op == token.MUL
	case *ssa.DebugRef:
		return true
	}
	return false
}

func constTerm(c *ssa.Const) string {
	if c.Value == nil {
		return "nil"
	}
	if c.Value.Kind() == constant.String {
		return strconv.Quote(constant.StringVal(c.Value))
	}
	return c.Value.ExactString()
}

func globalKey(g *ssa.Global) string {
	path := ""
	if g.Pkg != nil {
		path = g.Pkg.Pkg.Path()
	}
	return path + "." + g.Name()
}

func fieldName(t types.Type, i int) string {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	if st, ok := t.Underlying().(*types.Struct); ok && i < st.NumFields() {
		return st.Field(i).Name()
	}
	return strconv.Itoa(i)
}

// varargs keys the slice a variadic call builds: {elem0, elem1...}.
func (s *fnState) varargs(sl *ssa.Slice) (string, bool) {
	a, ok := sl.X.(*ssa.Alloc)
	if !ok || sl.Low != nil || sl.High != nil {
		return "", false
	}
	ptr, ok := a.Type().Underlying().(*types.Pointer)
	if !ok {
		return "", false
	}
	arr, ok := ptr.Elem().Underlying().(*types.Array)
	if !ok || arr.Len() > 16 {
		return "", false
	}
	elems := make([]string, arr.Len())
	refs := a.Referrers()
	if refs == nil {
		return "", false
	}
	for _, r := range *refs {
		switch r := r.(type) {
		case *ssa.Slice:
			if r != sl {
				return "", false
			}
		case *ssa.IndexAddr:
			c, ok := r.Index.(*ssa.Const)
			if !ok {
				return "", false
			}
			i, ok := constant.Int64Val(c.Value)
			if !ok || i < 0 || i >= int64(len(elems)) {
				return "", false
			}
			stores := r.Referrers()
			if stores == nil || len(*stores) != 1 {
				return "", false
			}
			st, ok := (*stores)[0].(*ssa.Store)
			if !ok || elems[i] != "" {
				return "", false
			}
			elems[i] = s.term(st.Val)
		case *ssa.DebugRef:
		default:
			return "", false
		}
	}
	for _, e := range elems {
		if e == "" {
			return "", false
		}
	}
	return "{" + strings.Join(elems, ", ") + "}", true
}

// binTerm keys an operation; string concatenations are flattened, with
// adjacent constants merged, so that a + "/x" + ".json" and a + "/x.json"
// meet.
func (s *fnState) binTerm(b *ssa.BinOp) string {
	if b.Op != token.ADD || !isString(b.Type()) {
		return "(" + s.term(b.X) + b.Op.String() + s.term(b.Y) + ")"
	}
	var parts []string
	var flatten func(v ssa.Value, depth int)
	flatten = func(v ssa.Value, depth int) {
		if o, ok := v.(*ssa.BinOp); ok && o.Op == token.ADD && depth < maxTermDeep {
			flatten(o.X, depth+1)
			flatten(o.Y, depth+1)
			return
		}
		t := s.term(v)
		if n := len(parts); n > 0 {
			if a, err := strconv.Unquote(parts[n-1]); err == nil {
				if b, err := strconv.Unquote(t); err == nil && strings.HasPrefix(t, `"`) {
					parts[n-1] = strconv.Quote(a + b)
					return
				}
			}
		}
		parts = append(parts, t)
	}
	flatten(b, 0)
	if len(parts) == 1 {
		return parts[0]
	}
	return "(" + strings.Join(parts, "+") + ")"
}

// phiTerm keys a value assigned on several paths: the key they all give,
// if they agree. A field of a local structure (the path an error carries,
// say) stands for the file the others name, if any does. Paths that
// disagree (a variable set by a flag, else a default) give a local key;
// the keys they may have are kept (alts) for the function's fact and for
// a write-back of a document read elsewhere.
func (s *fnState) phiTerm(p *ssa.Phi) string {
	t := ""
	var keys []string
	agree := true
	for _, e := range p.Edges {
		if e == p || s.busy[e] {
			continue
		}
		et := s.term(e)
		switch {
		case strings.Contains(et, localMarker) && localField(e):
		case strings.Contains(et, localMarker):
			if alts, ok := s.alts[et]; ok {
				keys = append(keys, alts...)
				agree = false
				continue
			}
			return s.localTerm(p)
		case t == "":
			t = et
		case t != et:
			agree = false
		}
		if !strings.Contains(et, localMarker) && !slices.Contains(keys, et) {
			keys = append(keys, et)
		}
	}
	if !agree {
		l := s.localTerm(p)
		if isString(p.Type()) && len(keys) <= maxAlts {
			slices.Sort(keys)
			s.alts[l] = slices.Compact(keys)
		}
		return l
	}
	if t == "" {
		return s.localTerm(p)
	}
	return t
}

// maxAlts bounds the keys a path assigned on several paths may have.
const maxAlts = 4

// localField reports whether v is loaded from a field of a structure.
func localField(v ssa.Value) bool {
	u, ok := v.(*ssa.UnOp)
	if !ok || u.Op != token.MUL {
		return false
	}
	_, ok = u.X.(*ssa.FieldAddr)
	return ok
}

func (s *fnState) extractTerm(e *ssa.Extract) string {
	switch t := e.Tuple.(type) {
	case *ssa.Call:
		return s.callTerm(t, e.Index)
	case *ssa.TypeAssert:
		if e.Index == 0 {
			return s.term(t.X)
		}
	case *ssa.Lookup:
		if e.Index == 0 {
			return s.term(t.X) + s.indexTerm(t.Index)
		}
	}
	return s.localTerm(e)
}

// callTerm keys result i of a call.
func (s *fnState) callTerm(call *ssa.Call, i int) string {
	cc := call.Common()
	args := callArgs(cc)
	argTerm := func(n int) (string, bool) {
		if n < len(args) && args[n] != nil {
			return s.term(args[n]), true
		}
		return "", false
	}
	suffix := ""
	if _, ok := call.Type().(*types.Tuple); ok {
		suffix = "#" + strconv.Itoa(i)
	}
	var name string
	switch {
	case cc.IsInvoke():
		name = s.term(cc.Value) + "." + cc.Method.Name()
		args = cc.Args
	default:
		fn := cc.StaticCallee()
		if fn == nil {
			return s.localTerm(call)
		}
		if samePath[s.c.funcKeyOf(fn)] && i == 0 {
			if t, ok := argTerm(0); ok {
				return t
			}
		}
		if f := s.c.summaryOf(fn); f != nil && i < len(f.Paths) && f.Paths[i] != "" {
			if t, ok := substitute(f.Paths[i], argTerm); ok {
				return t
			}
		}
		if fn.Parent() != nil || (fn.Object() == nil && fn.Synthetic != "") {
			return s.localTerm(call)
		}
		name = s.c.funcKeyOf(fn)
	}
	parts := make([]string, len(args))
	for n, a := range args {
		parts[n] = s.term(a)
	}
	return name + "(" + strings.Join(parts, ", ") + ")" + suffix
}

// callArgs returns the arguments of a call, the receiver first for a
// method (for an interface method too).
func callArgs(cc *ssa.CallCommon) []ssa.Value {
	if cc.IsInvoke() {
		return append([]ssa.Value{cc.Value}, cc.Args...)
	}
	return cc.Args
}

func isString(t types.Type) bool {
	if t == nil {
		return false
	}
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsString != 0
}

// assignsCaptured reports whether the function literal that mc makes
// stores to (or passes on the address of) the variable a it captures.
func assignsCaptured(mc *ssa.MakeClosure, a *ssa.Alloc) bool {
	fn, ok := mc.Fn.(*ssa.Function)
	if !ok {
		return true
	}
	for i, b := range mc.Bindings {
		if b != a || i >= len(fn.FreeVars) {
			continue
		}
		refs := fn.FreeVars[i].Referrers()
		if refs == nil {
			continue
		}
		for _, r := range *refs {
			switch r := r.(type) {
			case *ssa.UnOp:
				if r.Op != token.MUL {
					return true
				}
			case *ssa.DebugRef:
			default:
				return true
			}
		}
	}
	return false
}

// globalTerm returns the key of the value a package-level variable is
// initialised with, if that is its only assignment in its package and the
// key is a template: var fs = agentic.LocalFs() is agentic's fs.
func (c *checker) globalTerm(g *ssa.Global) string {
	if g.Pkg != c.pkg {
		obj, ok := g.Object().(*types.Var)
		if !ok {
			return ""
		}
		var f varFact
		if c.pass.ImportObjectFact(obj, &f) {
			return f.Key
		}
		return ""
	}
	if t, ok := c.globalKeys[g]; ok {
		return t
	}
	c.globalKeys[g] = "" // a cycle ends here
	st := c.globalStores[g]
	t := ""
	if len(st) == 1 && st[0].Block().Parent().Synthetic == "package initializer" {
		t = newFnState(c, st[0].Block().Parent()).term(st[0].Val)
		if !isTemplate(t) || strings.Contains(t, paramDelim) {
			t = ""
		}
	}
	c.globalKeys[g] = t
	return t
}
