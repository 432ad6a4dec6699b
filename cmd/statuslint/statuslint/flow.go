package statuslint

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"

	"golang.org/x/tools/go/types/typeutil"
)

// A srcKind says what a value holds of a file.
type srcKind uint8

const (
	content srcKind = iota + 1 // bytes or text read from the file, or a handle open for reading
	decoded                    // a value decoded from the file's content
	writer                     // a handle open for writing the file
)

// A src is a file a value comes from (or, for writer, goes to).
type src struct {
	kind srcKind
	key  string    // the file's path, as a key
	desc string    // the path as written, for messages
	pos  token.Pos // where the file was read or opened
}

// An access is a decoded read of, or a write to, a path.
type access struct {
	key  string
	desc string
	pos  token.Pos // read: where the file was read; write: the writing call
	end  token.Pos // write: the end of the writing call (its arguments run before it)
}

// A unit is the data flow of one function body (function literals inside
// it included). Values are tracked per variable, without regard to order
// (a variable holds whatever any of its assignments gives it); reads and
// writes are ordered by their position in the source.
type unit struct {
	*checker
	info    *types.Info
	fn      *function
	params  map[*types.Var]int // parameters (receiver: recvIndex)
	assigns map[*types.Var]int // how often each variable is assigned
	defs    map[*types.Var]def // the value of a variable assigned once
	taint   map[*types.Var][]src

	exempt      []*ast.FuncLit // function literals run under status.Mutate's lock
	calls       []*ast.CallExpr
	assignments []assignment // assignments and declarations
	ranges      []*ast.RangeStmt
	returns     []*ast.ReturnStmt

	memo map[*ast.CallExpr]*effect

	results    [][]src  // what each result may hold
	resultKeys []string // the key of result 0 in each return statement
	reads      []access
	writes     []access
	renamed    []string // temp files renamed over the file written
}

// An assignment is lhs = rhs (or var lhs = rhs).
type assignment struct{ lhs, rhs []ast.Expr }

// def is the value of a variable assigned exactly once: expr, or result
// index of the multi-value call expr.
type def struct {
	expr  ast.Expr
	index int
}

func newUnit(c *checker, f *function) *unit {
	u := &unit{
		checker: c,
		info:    c.pass.TypesInfo,
		fn:      f,
		params:  make(map[*types.Var]int),
		assigns: make(map[*types.Var]int),
		defs:    make(map[*types.Var]def),
		taint:   make(map[*types.Var][]src),
	}
	if f.sig != nil {
		if r := f.sig.Recv(); r != nil {
			u.params[r] = recvIndex
		}
		for i := range f.sig.Params().Len() {
			u.params[f.sig.Params().At(i)] = i
		}
	}
	return u
}

// run computes the function's data flow, then its reads and writes.
func (u *unit) run() {
	u.seed()
	u.collect()
	for range 10 {
		u.memo = make(map[*ast.CallExpr]*effect)
		if !u.propagate() {
			break
		}
	}
	u.memo = make(map[*ast.CallExpr]*effect)
	u.returned()
	u.events()
}

// seed gives each parameter that can carry content (text, bytes, a
// reader) a label, so that a decoder of a parameter is seen as one.
func (u *unit) seed() {
	for v, i := range u.params {
		if i != recvIndex && contentType(v.Type()) {
			u.taint[v] = []src{{kind: content, key: labelKey(i)}}
		}
	}
}

// collect records assignments, calls, returns and the function literals
// passed to Mutate.
func (u *unit) collect() {
	depth := 0 // function literals nested in the body
	var stack []ast.Node
	ast.Inspect(u.fn.body, func(n ast.Node) bool {
		if n == nil {
			if _, ok := stack[len(stack)-1].(*ast.FuncLit); ok {
				depth--
			}
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		switch n := n.(type) {
		case *ast.FuncLit:
			depth++
		case *ast.AssignStmt:
			// x += y changes x but is no definition of it
			u.define(n.Lhs, n.Rhs, n.Tok == token.DEFINE || n.Tok == token.ASSIGN)
		case *ast.ValueSpec:
			lhs := make([]ast.Expr, len(n.Names))
			for i, id := range n.Names {
				lhs[i] = id
			}
			u.define(lhs, n.Values, true)
		case *ast.RangeStmt:
			u.ranges = append(u.ranges, n)
			u.bump(n.Key, 2)
			u.bump(n.Value, 2)
		case *ast.IncDecStmt:
			u.bump(n.X, 1)
		case *ast.UnaryExpr:
			if n.Op == token.AND { // &v: may be assigned through the pointer
				u.bump(n.X, 2)
			}
		case *ast.ReturnStmt:
			if depth == 0 {
				u.returns = append(u.returns, n)
			}
		case *ast.CallExpr:
			u.calls = append(u.calls, n)
			if u.isMutate(n) {
				for _, a := range n.Args {
					if lit, ok := unparen(a).(*ast.FuncLit); ok {
						u.exempt = append(u.exempt, lit)
					}
				}
			}
		}
		return true
	})
}

// define records an assignment lhs = rhs; if it is a definition, each
// variable assigned stands for its value until it is assigned again.
func (u *unit) define(lhs, rhs []ast.Expr, isDef bool) {
	u.assignments = append(u.assignments, assignment{lhs, rhs})
	for i, l := range lhs {
		u.bump(l, 1)
		v := u.localVar(l)
		switch {
		case v == nil || !isDef:
		case len(lhs) == len(rhs):
			u.defs[v] = def{rhs[i], 0}
		case len(rhs) == 1:
			u.defs[v] = def{rhs[0], i}
		}
	}
}

// localVar returns the variable (local, parameter or package-level) that
// an identifier denotes.
func (u *unit) localVar(e ast.Expr) *types.Var {
	id, ok := unparen(e).(*ast.Ident)
	if !ok || id.Name == "_" {
		return nil
	}
	v, _ := u.info.ObjectOf(id).(*types.Var)
	if v == nil || v.IsField() || v.Pkg() == nil {
		return nil
	}
	return v
}

func (u *unit) bump(e ast.Expr, n int) {
	if v := u.localVar(e); v != nil {
		u.assigns[v] += n
	}
}

// def returns the value of a local variable assigned exactly once.
func (u *unit) def(v *types.Var) (def, bool) {
	if u.assigns[v] != 1 || isPackageLevel(v) {
		return def{}, false
	}
	d, ok := u.defs[v]
	return d, ok
}

// propagate makes one pass over the assignments and calls and reports
// whether any variable learnt something.
func (u *unit) propagate() bool {
	changed := false
	flow := func(lhs ast.Expr, srcs []src) {
		if v := u.root(lhs); v != nil && u.add(v, srcs) {
			changed = true
		}
	}
	for _, a := range u.assignments {
		u.assign(a.lhs, a.rhs, flow)
	}
	for _, r := range u.ranges {
		t := u.taintOf(r.X)
		if r.Key != nil {
			flow(r.Key, t)
		}
		if r.Value != nil {
			flow(r.Value, t)
		}
	}
	for _, call := range u.calls {
		for _, o := range u.effects(call).outs {
			flow(o.arg, o.srcs)
		}
	}
	return changed
}

func (u *unit) assign(lhs, rhs []ast.Expr, flow func(ast.Expr, []src)) {
	switch {
	case len(lhs) == len(rhs):
		for i := range lhs {
			flow(lhs[i], u.taintOf(rhs[i]))
		}
	case len(rhs) == 1:
		if call, ok := unparen(rhs[0]).(*ast.CallExpr); ok {
			res := u.effects(call).results
			for i := range lhs {
				if i < len(res) {
					flow(lhs[i], res[i])
				}
			}
			return
		}
		// v, ok := x.(T) / m[k] / <-ch
		flow(lhs[0], u.taintOf(rhs[0]))
	}
}

// root returns the variable that an assignment to e changes: x for x,
// x.f, x[i], *x and &x.
func (u *unit) root(e ast.Expr) *types.Var {
	for {
		switch x := unparen(e).(type) {
		case *ast.Ident:
			return u.localVar(x)
		case *ast.SelectorExpr:
			if _, ok := u.info.Selections[x]; !ok {
				return u.localVar(x.Sel) // a qualified package-level variable
			}
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.UnaryExpr:
			if x.Op != token.AND {
				return nil
			}
			e = x.X
		default:
			return nil
		}
	}
}

func (u *unit) add(v *types.Var, srcs []src) bool {
	changed := false
	for _, s := range srcs {
		if !slices.ContainsFunc(u.taint[v], s.same) {
			u.taint[v] = append(u.taint[v], s)
			changed = true
		}
	}
	return changed
}

func (s src) same(t src) bool { return s.kind == t.kind && s.key == t.key && s.pos == t.pos }

func union(a []src, more ...[]src) []src {
	out := slices.Clone(a)
	for _, m := range more {
		for _, s := range m {
			if !slices.ContainsFunc(out, s.same) {
				out = append(out, s)
			}
		}
	}
	return out
}

// taintOf returns what the value of e may hold of files.
func (u *unit) taintOf(e ast.Expr) []src {
	if t := u.info.TypeOf(e); t != nil && (isError(t) || isBool(t)) {
		return nil
	}
	switch e := unparen(e).(type) {
	case *ast.Ident:
		if v := u.localVar(e); v != nil {
			return u.taint[v]
		}
	case *ast.SelectorExpr:
		if _, ok := u.info.Selections[e]; !ok {
			if v := u.localVar(e.Sel); v != nil {
				return u.taint[v]
			}
			return nil
		}
		return u.taintOf(e.X)
	case *ast.IndexExpr:
		return u.taintOf(e.X)
	case *ast.SliceExpr:
		return u.taintOf(e.X)
	case *ast.StarExpr:
		return u.taintOf(e.X)
	case *ast.UnaryExpr:
		return u.taintOf(e.X)
	case *ast.TypeAssertExpr:
		return u.taintOf(e.X)
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			return union(u.taintOf(e.X), u.taintOf(e.Y))
		}
	case *ast.CompositeLit:
		var out []src
		for _, el := range e.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				el = kv.Value
			}
			out = union(out, u.taintOf(el))
		}
		return out
	case *ast.CallExpr:
		if res := u.effects(e).results; len(res) > 0 {
			return res[0]
		}
	}
	return nil
}

// returned records what the function's results may hold, and the key of
// result 0 in each return statement (for path helpers).
func (u *unit) returned() {
	if u.fn.sig == nil {
		return
	}
	res := u.fn.sig.Results()
	u.results = make([][]src, res.Len())
	for _, r := range u.returns {
		switch {
		case len(r.Results) == 0: // bare return of named results
			for i := range res.Len() {
				u.results[i] = union(u.results[i], u.taint[res.At(i)])
			}
			u.resultKeys = append(u.resultKeys, "")
		case len(r.Results) == res.Len():
			for i, e := range r.Results {
				u.results[i] = union(u.results[i], u.taintOf(e))
			}
			u.resultKeys = append(u.resultKeys, u.key(r.Results[0], 0))
		case len(r.Results) == 1:
			if call, ok := unparen(r.Results[0]).(*ast.CallExpr); ok {
				for i, s := range u.effects(call).results {
					if i < len(u.results) {
						u.results[i] = union(u.results[i], s)
					}
				}
			}
			u.resultKeys = append(u.resultKeys, "")
		}
	}
}

// events records, in source order, the decoded reads and the writes
// outside function literals run by Mutate.
func (u *unit) events() {
	for _, call := range u.calls {
		if u.inExempt(call) {
			continue
		}
		e := u.effects(call)
		u.reads = append(u.reads, e.reads...)
		u.writes = append(u.writes, e.writes...)
		if e.rename && len(call.Args) == 2 && u.renamesWritten(call.Args[0]) {
			u.writes = append(u.writes, u.write(call.Args[1], call))
			u.renamed = append(u.renamed, u.key(call.Args[0], 0))
		}
	}
}

// renamesWritten reports whether from is a file this function wrote (a
// temp file renamed over the destination: a hand-made atomic write).
func (u *unit) renamesWritten(from ast.Expr) bool {
	k := u.key(from, 0)
	if slices.ContainsFunc(u.writes, func(w access) bool { return w.key == k }) {
		return true
	}
	return slices.ContainsFunc(u.taintOf(from), func(s src) bool { return s.kind == writer })
}

func (u *unit) inExempt(n ast.Node) bool {
	for _, e := range u.exempt {
		if e.Pos() <= n.Pos() && n.End() <= e.End() {
			return true
		}
	}
	return false
}

func (u *unit) isMutate(call *ast.CallExpr) bool {
	fn := u.callee(call)
	return fn != nil && fn.Name() == "Mutate" && pkgPath(fn) == statusPkg
}

func (u *unit) callee(call *ast.CallExpr) *types.Func {
	fn, _ := typeutil.Callee(u.info, call).(*types.Func)
	return fn
}
