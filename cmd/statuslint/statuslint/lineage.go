package statuslint

import (
	"go/constant"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// A path helper may return one of the files a package-level variable
// lists rather than the variable itself: kubecm's SelectKubeconfigFile
// splits the --config flag's value into files and returns the one the user
// picks (the first when there is one), while its writers write the flag's
// variable. The helper's result and the variable then name one file: the
// helper's fact says that its result is the variable's path when every
// value it returns is derived from that one variable by operations that
// keep the file (a split into a list and an element of it, filepath.Clean,
// Abs or EvalSymlinks, a filepath.Dir and a filepath.Base joined again),
// through the fields of the structures the function fills and the helpers
// of its package. A constant put on the path (a Join with a file name, a
// suffix) makes another file.

// A lineage says how a value derives from a package-level variable's path.
type lineage struct {
	g    *ssa.Global
	role linRole
}

type linRole uint8

const (
	linNone linRole = iota
	linFile         // the path, or one of the paths it lists
	linDir          // filepath.Dir of it
	linBase         // filepath.Base of it
	linList         // the list of paths it splits into
	linBad          // derived from something else too
)

var noLineage = lineage{}

func (l lineage) ok() bool { return l.role != linNone && l.role != linBad }

// join is the lineage of a value that may be either of two.
func (l lineage) join(m lineage) lineage {
	switch {
	case l.role == linNone:
		return m
	case m.role == linNone:
		return l
	case l == m:
		return l
	}
	return lineage{role: linBad}
}

type fieldKey struct {
	t     types.Type
	field int
}

// A lineageEval computes lineages within one function; params are what
// its parameters derive from, at the call being followed.
type lineageEval struct {
	c      *checker
	fn     *ssa.Function
	params map[*ssa.Parameter]lineage
	fields map[fieldKey]lineage
	busy   map[ssa.Value]bool
	depth  int
}

const maxLineageDepth = 4

func newLineageEval(c *checker, fn *ssa.Function, depth int) *lineageEval {
	return &lineageEval{c: c, fn: fn, params: make(map[*ssa.Parameter]lineage), busy: make(map[ssa.Value]bool), depth: depth}
}

// returnedFile returns the package-level variable whose path, or one of
// whose listed paths, every value returned as result i is, or nil.
func (c *checker) returnedFile(fn *ssa.Function, i int) *ssa.Global {
	l := newLineageEval(c, fn, 0).result(i)
	if l.role != linFile || l.g.Pkg != c.pkg {
		return nil
	}
	return l.g
}

// result joins the lineages of the values returned as result i.
func (e *lineageEval) result(i int) lineage {
	out := noLineage
	for _, b := range e.fn.Blocks {
		ret, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return)
		if !ok || i >= len(ret.Results) {
			continue
		}
		v := ret.Results[i]
		if isZero(v) {
			continue // an error's return
		}
		l := e.of(v)
		if l.role == linNone {
			return lineage{role: linBad}
		}
		out = out.join(l)
	}
	return out
}

// of returns the lineage of v.
func (e *lineageEval) of(v ssa.Value) lineage {
	if e.busy[v] {
		return noLineage
	}
	e.busy[v] = true
	defer delete(e.busy, v)
	switch v := v.(type) {
	case *ssa.Parameter:
		return e.params[v]
	case *ssa.Const:
		return lineage{role: linBad}
	case *ssa.UnOp:
		if v.Op != token.MUL {
			return noLineage
		}
		switch x := v.X.(type) {
		case *ssa.Global:
			if isString(v.Type()) {
				return lineage{g: x, role: linFile}
			}
		case *ssa.FieldAddr:
			return e.field(x.X.Type(), x.Field)
		case *ssa.IndexAddr:
			return e.element(e.of(x.X))
		}
	case *ssa.Field:
		return e.field(v.X.Type(), v.Field)
	case *ssa.Index:
		return e.element(e.of(v.X))
	case *ssa.Slice:
		return e.of(v.X)
	case *ssa.Phi:
		out := noLineage
		for _, ed := range v.Edges {
			if c, ok := ed.(*ssa.Const); ok && c.IsNil() {
				continue // an empty list, before it is filled
			}
			out = out.join(e.of(ed))
		}
		return out
	case *ssa.Extract:
		if call, ok := v.Tuple.(*ssa.Call); ok && v.Index == 0 {
			return e.call(call)
		}
	case *ssa.Call:
		return e.call(v)
	}
	return noLineage
}

// element is the lineage of an element of a list of lineage l.
func (e *lineageEval) element(l lineage) lineage {
	switch l.role {
	case linList:
		return lineage{g: l.g, role: linFile}
	case linNone:
		// a list of structures: the fields say
		return noLineage
	}
	return lineage{role: linBad}
}

// field is the lineage of field i of the structures of type t (or that t
// points to) that this function fills: every value it stores there, other
// than constants (an entry of its own, such as a menu's "exit").
func (e *lineageEval) field(t types.Type, i int) lineage {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	if e.fields == nil {
		e.fields = make(map[fieldKey]lineage)
		for _, b := range e.fn.Blocks {
			for _, instr := range b.Instrs {
				st, ok := instr.(*ssa.Store)
				if !ok {
					continue
				}
				fa, ok := st.Addr.(*ssa.FieldAddr)
				if !ok {
					continue
				}
				if _, isConst := st.Val.(*ssa.Const); isConst || !isString(st.Val.Type()) {
					continue
				}
				k := fieldKey{t: types.Unalias(fa.X.Type().Underlying().(*types.Pointer).Elem()), field: fa.Field}
				e.fields[k] = e.fields[k].join(e.of(st.Val))
			}
		}
	}
	for k, l := range e.fields {
		if k.field == i && types.Identical(k.t, types.Unalias(t)) {
			return l
		}
	}
	return noLineage
}

// call is the lineage of a call's first result: the operations that keep
// a file, and the helpers of this package, followed with what their
// arguments derive from.
func (e *lineageEval) call(call *ssa.Call) lineage {
	cc := call.Common()
	fn := cc.StaticCallee()
	if fn == nil {
		return noLineage
	}
	args := cc.Args
	arg := func(i int) lineage {
		if i < len(args) {
			return e.of(args[i])
		}
		return noLineage
	}
	if obj, ok := fn.Object().(*types.Func); ok && obj.Pkg() != nil {
		key := funcKey(obj)
		if samePath[key] {
			return arg(0)
		}
		if op, ok := pathOps[key]; ok {
			return e.pathOp(op, args)
		}
	}
	if fn.Pkg != e.c.pkg || fn.Blocks == nil || e.depth >= maxLineageDepth {
		return noLineage
	}
	inner := newLineageEval(e.c, fn, e.depth+1)
	for i, p := range fn.Params {
		inner.params[p] = arg(i)
	}
	return inner.result(0)
}

// pathOp is the lineage of the result of a call of a function of pathOps.
func (e *lineageEval) pathOp(op pathOp, args []ssa.Value) lineage {
	first := noLineage
	if len(args) > 0 {
		first = e.of(args[0])
	}
	switch op {
	case opSplit:
		if first.role == linFile {
			return lineage{g: first.g, role: linList}
		}
	case opDir:
		return e.part(first, linDir)
	case opBase:
		return e.part(first, linBase)
	case opJoin:
		return e.rejoin(e.varargs(args, 0))
	case opFormat:
		if len(args) == 2 && isConstString(args[0], pathFormat) {
			return e.rejoin(e.varargs(args, 1))
		}
	}
	return lineage{role: linBad}
}

// isConstString reports whether v is the string constant s.
func isConstString(v ssa.Value, s string) bool {
	c, ok := v.(*ssa.Const)
	return ok && c.Value != nil && c.Value.Kind() == constant.String && constant.StringVal(c.Value) == s
}

// part is the lineage of filepath.Dir or Base of a path of lineage l.
func (e *lineageEval) part(l lineage, role linRole) lineage {
	if l.role == linFile {
		return lineage{g: l.g, role: role}
	}
	return lineage{role: linBad}
}

// rejoin is the lineage of a directory and a base joined again.
func (e *lineageEval) rejoin(parts []lineage) lineage {
	if len(parts) == 2 && parts[0].role == linDir && parts[1].role == linBase && parts[0].g == parts[1].g {
		return lineage{g: parts[0].g, role: linFile}
	}
	return lineage{role: linBad}
}

// varargs returns the lineages of the elements of the variadic slice that
// is argument i of a call (a ...string or ...any built at the call).
func (e *lineageEval) varargs(args []ssa.Value, i int) []lineage {
	if i >= len(args) {
		return nil
	}
	sl, ok := args[i].(*ssa.Slice)
	if !ok {
		return nil
	}
	a, ok := sl.X.(*ssa.Alloc)
	if !ok || a.Referrers() == nil {
		return nil
	}
	ptr, ok := a.Type().Underlying().(*types.Pointer)
	if !ok {
		return nil
	}
	arr, ok := ptr.Elem().Underlying().(*types.Array)
	if !ok || arr.Len() > 16 {
		return nil
	}
	out := make([]lineage, arr.Len())
	for _, r := range *a.Referrers() {
		ia, ok := r.(*ssa.IndexAddr)
		if !ok || ia.Referrers() == nil {
			continue
		}
		c, ok := ia.Index.(*ssa.Const)
		if !ok {
			return nil
		}
		n, ok := constInt(c)
		if !ok || n < 0 || n >= int64(len(out)) {
			return nil
		}
		for _, u := range *ia.Referrers() {
			if st, ok := u.(*ssa.Store); ok {
				v := st.Val
				if mi, ok := v.(*ssa.MakeInterface); ok {
					v = mi.X
				}
				out[n] = e.of(v)
			}
		}
	}
	return out
}
