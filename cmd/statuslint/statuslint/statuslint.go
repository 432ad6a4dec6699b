package statuslint

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"
)

// Analyzer reports bare read-modify-write cycles and in-place writes of JSON
// state files. See the package documentation.
var Analyzer = &analysis.Analyzer{
	Name: "statuslint",
	Doc: "report bare read-modify-write and in-place writes of JSON state files\n\n" +
		"A JSON file that is read, decoded, then encoded and written back in one function\n" +
		"outside status.Mutate loses concurrent updates; use status.Mutate. A JSON file\n" +
		"written with os.WriteFile, os.Create or O_TRUNC can be seen empty or half written;\n" +
		"use fs.WriteAtomic.",
	Run: run,
}

// Packages whose functions are recognised by import path.
const (
	statusPkg = "github.com/agentstate/core/status"
	fsPkg     = "github.com/agentstate/core/fs"
)

// ignoreDirective silences a finding on its line or on the next line.
const ignoreDirective = "//statuslint:ignore"

func run(pass *analysis.Pass) (any, error) {
	var funcs []*function
	for _, file := range pass.Files {
		if ast.IsGenerated(file) {
			continue
		}
		ignored := ignoredLines(pass.Fset, file)
		report := func(pos token.Pos, format string, args ...any) {
			p := pass.Fset.Position(pos)
			if ignored[lineKey{p.Filename, p.Line}] {
				return
			}
			pass.Reportf(pos, format, args...)
		}
		for _, decl := range file.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Body != nil {
					fn, _ := pass.TypesInfo.Defs[d.Name].(*types.Func)
					funcs = append(funcs, &function{fn, d.Body, report})
				}
			case *ast.GenDecl:
				// Function literals in package-level variables are
				// functions of their own.
				ast.Inspect(d, func(n ast.Node) bool {
					if lit, ok := n.(*ast.FuncLit); ok {
						funcs = append(funcs, &function{nil, lit.Body, report})
						return false
					}
					return true
				})
			}
		}
	}

	// Find the helpers of this package that read or write the file named by
	// a parameter, so that their callers see those accesses. A helper may
	// call another helper: repeat until nothing changes.
	for range 4 {
		changed := false
		for _, f := range funcs {
			if f.obj != nil && exportHelperFact(pass, f.obj, analyse(pass, f)) {
				changed = true
			}
		}
		if !changed {
			break
		}
	}

	for _, f := range funcs {
		u := analyse(pass, f)
		u.checkInPlace(f.report)
		u.checkReadModifyWrite(pass.Fset, f.report)
	}
	return nil, nil
}

// A function is a function declaration, or a function literal assigned to a
// package-level variable (obj is nil).
type function struct {
	obj    *types.Func
	body   *ast.BlockStmt
	report reportFunc
}

type lineKey struct {
	file string
	line int
}

func ignoredLines(fset *token.FileSet, file *ast.File) map[lineKey]bool {
	m := make(map[lineKey]bool)
	for _, cg := range file.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, ignoreDirective) {
				p := fset.Position(c.Slash)
				m[lineKey{p.Filename, p.Line}] = true
				m[lineKey{p.Filename, p.Line + 1}] = true
			}
		}
	}
	return m
}

type reportFunc func(pos token.Pos, format string, args ...any)

// analyse collects the accesses of one function body, function literals
// inside it included.
func analyse(pass *analysis.Pass, f *function) *unit {
	u := &unit{
		pass:    pass,
		info:    pass.TypesInfo,
		params:  make(map[*types.Var]int),
		assigns: make(map[*types.Var]int),
		defs:    make(map[*types.Var]ast.Expr),
		vals:    make(map[*types.Var][]fact),
	}
	if f.obj != nil {
		sig := f.obj.Type().(*types.Signature)
		if r := sig.Recv(); r != nil {
			u.params[r] = recvIndex
		}
		for i := range sig.Params().Len() {
			u.params[sig.Params().At(i)] = i
		}
	}
	u.collect(f.body)
	u.events(f.body)
	return u
}

// checkReadModifyWrite reports rule 1: a decoded read followed by an encoded
// write of the same path.
func (u *unit) checkReadModifyWrite(fset *token.FileSet, report reportFunc) {
	reported := make(map[token.Pos]bool)
	for _, w := range u.writes {
		for _, r := range u.reads {
			if r.pos < w.pos && r.key == w.key && !reported[w.pos] {
				reported[w.pos] = true
				report(w.pos, "read-modify-write of %s without a lock: read and decoded at line %d, "+
					"written back here; an update made in between by another goroutine or process "+
					"is lost (use status.Mutate)",
					types.ExprString(w.path), fset.Position(r.pos).Line)
			}
		}
	}
}

// A fact is what the analysis knows about the value of a variable.
type fact struct {
	kind factKind
	path ast.Expr  // the file's path expression (nil for encoded)
	pos  token.Pos // where the value was produced
}

type factKind int

const (
	rawBytes    factKind = iota + 1 // content read from the file at path
	readHandle                      // file at path opened for reading
	writeHandle                     // file at path opened for writing
	rwHandle                        // both
	encoded                         // JSON produced by json.Marshal(Indent)
)

// An access is a decoded read of, or an encoded write to, a path.
type access struct {
	key  string
	path ast.Expr
	pos  token.Pos
}

type unit struct {
	pass    *analysis.Pass
	info    *types.Info
	params  map[*types.Var]int      // parameters of the function (receiver: recvIndex)
	assigns map[*types.Var]int      // how often each local variable is assigned
	defs    map[*types.Var]ast.Expr // the value of a variable defined from one expression
	vals    map[*types.Var][]fact   // every kind of value a variable is assigned
	exempt  []ast.Node              // function literals run by status.Mutate
	reads   []access
	writes  []access
	inPlace []*ast.CallExpr // every call, for rule 2
}

// collect records assignments, variable facts and the function literals
// passed to Mutate.
func (u *unit) collect(body *ast.BlockStmt) {
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			u.assign(n.Lhs, n.Rhs)
		case *ast.ValueSpec:
			lhs := make([]ast.Expr, len(n.Names))
			for i, id := range n.Names {
				lhs[i] = id
			}
			u.assign(lhs, n.Values)
		case *ast.IncDecStmt:
			u.bump(n.X, 1)
		case *ast.RangeStmt:
			u.bump(n.Key, 2)
			u.bump(n.Value, 2)
		case *ast.UnaryExpr:
			if n.Op == token.AND { // &v: may be assigned through the pointer
				u.bump(n.X, 2)
			}
		case *ast.CallExpr:
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

func (u *unit) localVar(e ast.Expr) *types.Var {
	id, ok := unparen(e).(*ast.Ident)
	if !ok || id.Name == "_" {
		return nil
	}
	v, _ := u.info.ObjectOf(id).(*types.Var)
	if v == nil || v.IsField() || v.Pkg() == nil || v.Parent() == nil || v.Parent() == v.Pkg().Scope() {
		return nil
	}
	return v
}

func (u *unit) bump(e ast.Expr, n int) {
	if v := u.localVar(e); v != nil {
		u.assigns[v] += n
	}
}

func (u *unit) assign(lhs, rhs []ast.Expr) {
	for i, l := range lhs {
		v := u.localVar(l)
		if v == nil {
			continue
		}
		u.assigns[v]++
		var val ast.Expr
		if len(lhs) == len(rhs) {
			val = rhs[i]
			u.defs[v] = val
		} else if len(rhs) == 1 && i == 0 {
			val = rhs[0] // first result of a multi-value call
		}
		if call, ok := unparen(val).(*ast.CallExpr); ok {
			if f, ok := u.resultFact(call); ok {
				u.vals[v] = append(u.vals[v], f)
			}
		}
	}
}

// def returns the expression a variable stands for, if it is assigned
// exactly once from a single-valued expression.
func (u *unit) def(v *types.Var) ast.Expr {
	if u.assigns[v] != 1 {
		return nil
	}
	return u.defs[v]
}

// resultFact classifies the (first) result of a call.
func (u *unit) resultFact(call *ast.CallExpr) (fact, bool) {
	fn := u.callee(call)
	if fn == nil {
		return fact{}, false
	}
	name, pkg := fn.Name(), pkgPath(fn)
	switch {
	case name == "ReadFile" && u.firstString(call) != nil:
		return fact{rawBytes, u.firstString(call), call.Pos()}, true
	case (pkg == "io" || pkg == "io/ioutil") && name == "ReadAll" && len(call.Args) == 1:
		if f, ok := u.findFact(call.Args[0], readHandle, rwHandle); ok {
			return fact{rawBytes, f.path, call.Pos()}, true
		}
	case pkg == "os" && name == "Create" && len(call.Args) == 1:
		return fact{writeHandle, call.Args[0], call.Pos()}, true
	case pkg == "os" && name == "OpenFile" && len(call.Args) >= 2:
		kind := rwHandle // unknown flags: could be either
		if flag, ok := u.intConst(call.Args[1]); ok {
			switch {
			case flag&osConst(fn, "O_RDWR") != 0:
				kind = rwHandle
			case flag&osConst(fn, "O_WRONLY") != 0:
				kind = writeHandle
			default:
				kind = readHandle
			}
		}
		return fact{kind, call.Args[0], call.Pos()}, true
	case name == "Open" && len(call.Args) == 1 && u.firstString(call) != nil:
		return fact{readHandle, call.Args[0], call.Pos()}, true
	case pkg == "encoding/json" && (name == "Marshal" || name == "MarshalIndent"):
		return fact{kind: encoded, pos: call.Pos()}, true
	}
	return fact{}, false
}

// events records, in source order, the decoded reads and encoded writes
// (rule 1, outside Mutate literals) and reports in-place writes (rule 2).
func (u *unit) events(body *ast.BlockStmt) {
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		u.inPlace = append(u.inPlace, call)
		if u.inExempt(call) {
			return true
		}
		if r, ok := u.decodedRead(call); ok {
			u.reads = append(u.reads, r)
		}
		if w, ok := u.encodedWrite(call); ok {
			u.writes = append(u.writes, w)
		}
		if w, ok := u.renamedWrite(call); ok {
			u.writes = append(u.writes, w)
		}
		u.reads = append(u.reads, u.helperAccesses(call, true)...)
		u.writes = append(u.writes, u.helperAccesses(call, false)...)
		return true
	})
}

func (u *unit) inExempt(n ast.Node) bool {
	for _, e := range u.exempt {
		if e.Pos() <= n.Pos() && n.End() <= e.End() {
			return true
		}
	}
	return false
}

func (u *unit) access(path ast.Expr, pos token.Pos) access {
	return access{key: u.key(path, 0), path: path, pos: pos}
}

// decodedRead reports whether call completes a read of a file as JSON.
func (u *unit) decodedRead(call *ast.CallExpr) (access, bool) {
	fn := u.callee(call)
	if fn == nil {
		return access{}, false
	}
	name, pkg := fn.Name(), pkgPath(fn)
	switch {
	case pkg == "encoding/json" && name == "Unmarshal" && len(call.Args) == 2:
		if f, ok := u.findFact(call.Args[0], rawBytes); ok {
			return u.access(f.path, f.pos), true
		}
	case pkg == "encoding/json" && name == "Decode" && isMethod(fn):
		if src := u.coderArg(call, "NewDecoder"); src != nil {
			if f, ok := u.findFact(src, readHandle, rwHandle, rawBytes); ok {
				return u.access(f.path, f.pos), true
			}
			if p := u.openedPath(src, "Open", "OpenFile"); p != nil {
				return u.access(p, call.Pos()), true
			}
		}
	case pkg == statusPkg && name == "Read" && !isMethod(fn) && len(call.Args) == 1:
		return u.access(call.Args[0], call.Pos()), true
	case isHelper(name, "readstatus", "loadstatus"):
		if p := u.helperPath(call); p != nil {
			return u.access(p, call.Pos()), true
		}
	}
	return access{}, false
}

// encodedWrite reports whether call writes JSON to a file.
func (u *unit) encodedWrite(call *ast.CallExpr) (access, bool) {
	fn := u.callee(call)
	if fn == nil {
		return access{}, false
	}
	name, pkg := fn.Name(), pkgPath(fn)
	switch {
	case name == "WriteFile" || name == "WriteAtomic" || name == "WriteAtomicPerm" || name == "WriteAtomicFrom":
		p := u.firstString(call)
		if p == nil {
			break
		}
		for _, a := range call.Args {
			if a == p {
				continue
			}
			if _, ok := u.findFact(a, encoded); ok || u.hasMarshal(a) {
				return u.access(p, call.Pos()), true
			}
		}
	case pkg == "encoding/json" && name == "Encode" && isMethod(fn):
		if dst := u.coderArg(call, "NewEncoder"); dst != nil {
			if f, ok := u.findFact(dst, writeHandle, rwHandle); ok {
				return u.access(f.path, call.Pos()), true
			}
		}
	case pkg == "os" && (name == "Write" || name == "WriteString") && isMethod(fn) && len(call.Args) == 1:
		sel, ok := unparen(call.Fun).(*ast.SelectorExpr)
		if !ok {
			break
		}
		if f, ok := u.findFact(sel.X, writeHandle, rwHandle); ok {
			if _, enc := u.findFact(call.Args[0], encoded); enc {
				return u.access(f.path, call.Pos()), true
			}
		}
	case isHelper(name, "writestatus", "savestatus"):
		if p := u.helperPath(call); p != nil {
			return u.access(p, call.Pos()), true
		}
	}
	return access{}, false
}

// renamedWrite reports whether call renames a file that JSON was written to
// before (a hand-made atomic write: temp file, then rename): the JSON is then
// written to the new name.
func (u *unit) renamedWrite(call *ast.CallExpr) (access, bool) {
	fn := u.callee(call)
	if fn == nil || fn.Name() != "Rename" || len(call.Args) != 2 {
		return access{}, false
	}
	from := u.key(call.Args[0], 0)
	for _, w := range u.writes {
		if w.key == from {
			return u.access(call.Args[1], call.Pos()), true
		}
	}
	return access{}, false
}

// checkInPlace reports rule 2: truncating whole-file writes of JSON files.
func (u *unit) checkInPlace(report reportFunc) {
	for _, call := range u.inPlace {
		u.checkCallInPlace(call, report)
	}
}

func (u *unit) checkCallInPlace(call *ast.CallExpr, report reportFunc) {
	fn := u.callee(call)
	if fn == nil || len(call.Args) == 0 {
		return
	}
	name, pkg := fn.Name(), pkgPath(fn)
	p := call.Args[0]
	var what string
	switch {
	case (pkg == "os" || pkg == "io/ioutil") && name == "WriteFile" && !isMethod(fn):
		what = pkgName(pkg) + ".WriteFile truncates"
	case pkg == "os" && name == "Create" && !isMethod(fn):
		what = "os.Create truncates"
	case pkg == "os" && name == "OpenFile" && !isMethod(fn) && len(call.Args) >= 2:
		flag, ok := u.intConst(call.Args[1])
		if !ok || flag&osConst(fn, "O_TRUNC") == 0 {
			return
		}
		what = "os.OpenFile with O_TRUNC truncates"
	case name == "Write" && isMethod(fn) && pkg != fsPkg && u.firstString(call) == p:
		what = "Write(path, …) writes"
	default:
		return
	}
	if !u.jsonPath(p, 0) {
		return
	}
	report(call.Pos(), "not atomic: %s %s in place, so a concurrent reader can see an empty "+
		"or partial file (use fs.WriteAtomic)", what, types.ExprString(p))
}

// --- helpers -----------------------------------------------------------

func (u *unit) callee(call *ast.CallExpr) *types.Func {
	fn, _ := typeutil.Callee(u.info, call).(*types.Func)
	return fn
}

func (u *unit) isMutate(call *ast.CallExpr) bool {
	fn := u.callee(call)
	return fn != nil && fn.Name() == "Mutate" && pkgPath(fn) == statusPkg
}

// osConst returns the value of an integer constant of package os as the
// analysed code sees it (O_TRUNC differs between GOOS values), given a
// function of package os.
func osConst(osFunc *types.Func, name string) int64 {
	c, ok := osFunc.Pkg().Scope().Lookup(name).(*types.Const)
	if !ok {
		return 0
	}
	v, _ := constant.Int64Val(c.Val())
	return v
}

func pkgPath(fn *types.Func) string {
	if fn.Pkg() == nil {
		return ""
	}
	return fn.Pkg().Path()
}

func pkgName(path string) string {
	return path[strings.LastIndex(path, "/")+1:]
}

func isMethod(fn *types.Func) bool {
	sig, _ := fn.Type().(*types.Signature)
	return sig != nil && sig.Recv() != nil
}

// isHelper matches a helper name whatever the case of its letters.
func isHelper(name string, want ...string) bool {
	lower := strings.ToLower(name)
	for _, w := range want {
		if lower == w {
			return true
		}
	}
	return false
}

// helperPath is the path argument of a ReadStatus/WriteStatus-like helper:
// its first string argument, or else the receiver of a method call.
func (u *unit) helperPath(call *ast.CallExpr) ast.Expr {
	if p := u.firstString(call); p != nil {
		return p
	}
	if sel, ok := unparen(call.Fun).(*ast.SelectorExpr); ok {
		if s, ok := u.info.Selections[sel]; ok && s.Kind() == types.MethodVal {
			return sel.X
		}
	}
	return nil
}

// firstString returns the first argument of string type.
func (u *unit) firstString(call *ast.CallExpr) ast.Expr {
	for _, a := range call.Args {
		if t := u.info.TypeOf(a); t != nil {
			if b, ok := t.Underlying().(*types.Basic); ok && b.Info()&types.IsString != 0 {
				return a
			}
		}
	}
	return nil
}

func (u *unit) intConst(e ast.Expr) (int64, bool) {
	tv, ok := u.info.Types[e]
	if !ok || tv.Value == nil || tv.Value.Kind() != constant.Int {
		return 0, false
	}
	return constant.Int64Val(tv.Value)
}

func (u *unit) stringConst(e ast.Expr) (string, bool) {
	tv, ok := u.info.Types[e]
	if !ok || tv.Value == nil || tv.Value.Kind() != constant.String {
		return "", false
	}
	return constant.StringVal(tv.Value), true
}

// findFact looks for a variable with one of the kinds of fact in e
// (data, append(data, '\n'), bytes.NewReader(data)...).
func (u *unit) findFact(e ast.Expr, kinds ...factKind) (fact, bool) {
	var found fact
	var ok bool
	ast.Inspect(e, func(n ast.Node) bool {
		if ok {
			return false
		}
		id, isID := n.(*ast.Ident)
		if !isID {
			return true
		}
		v, _ := u.info.ObjectOf(id).(*types.Var)
		if v == nil {
			return true
		}
		for _, f := range u.vals[v] {
			if !ok && slices.Contains(kinds, f.kind) {
				found, ok = f, true
			}
		}
		return true
	})
	return found, ok
}

// hasMarshal reports whether e calls json.Marshal(Indent) directly.
func (u *unit) hasMarshal(e ast.Expr) bool {
	has := false
	ast.Inspect(e, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if fn := u.callee(call); fn != nil && pkgPath(fn) == "encoding/json" &&
				(fn.Name() == "Marshal" || fn.Name() == "MarshalIndent") {
				has = true
			}
		}
		return !has
	})
	return has
}

// coderArg returns the argument of the json.NewDecoder / json.NewEncoder call
// that made the receiver of a Decode / Encode call, directly or through a
// variable assigned once.
func (u *unit) coderArg(call *ast.CallExpr, ctor string) ast.Expr {
	sel, ok := unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	x := u.resolve(sel.X)
	mk, ok := x.(*ast.CallExpr)
	if !ok || len(mk.Args) != 1 {
		return nil
	}
	if fn := u.callee(mk); fn == nil || pkgPath(fn) != "encoding/json" || fn.Name() != ctor {
		return nil
	}
	return mk.Args[0]
}

// openedPath returns the path of an inline os.Open(p) / os.OpenFile(p, …).
func (u *unit) openedPath(e ast.Expr, names ...string) ast.Expr {
	call, ok := u.resolve(e).(*ast.CallExpr)
	if !ok || len(call.Args) == 0 {
		return nil
	}
	fn := u.callee(call)
	if fn == nil {
		return nil
	}
	for _, n := range names {
		if fn.Name() == n && u.firstString(call) == call.Args[0] {
			return call.Args[0]
		}
	}
	return nil
}

// resolve follows variables assigned once to their value.
func (u *unit) resolve(e ast.Expr) ast.Expr {
	for range 16 {
		e = unparen(e)
		v := u.localVar(e)
		if v == nil {
			return e
		}
		d := u.def(v)
		if d == nil {
			return e
		}
		e = d
	}
	return e
}

// key renders a path expression so that two expressions denoting the same
// path get the same key: constants by value, variables by identity (or by
// their value when assigned once), other expressions structurally.
func (u *unit) key(e ast.Expr, depth int) string {
	e = unparen(e)
	if depth > 16 {
		return "?" + types.ExprString(e)
	}
	if s, ok := u.stringConst(e); ok {
		return fmt.Sprintf("%q", s)
	}
	switch e := e.(type) {
	case *ast.Ident:
		switch obj := u.info.ObjectOf(e).(type) {
		case *types.Var:
			if i, ok := u.params[obj]; ok && u.assigns[obj] == 0 {
				return paramMarker(i)
			}
			if d := u.def(obj); d != nil && u.localVar(e) != nil {
				return u.key(d, depth+1)
			}
			return fmt.Sprintf("%s@%d", obj.Name(), obj.Pos())
		case *types.PkgName:
			return obj.Imported().Path()
		case nil:
			return e.Name
		default:
			return fmt.Sprintf("%s@%d", obj.Name(), obj.Pos())
		}
	case *ast.SelectorExpr:
		return u.key(e.X, depth+1) + "." + e.Sel.Name
	case *ast.CallExpr:
		parts := make([]string, len(e.Args))
		for i, a := range e.Args {
			parts[i] = u.key(a, depth+1)
		}
		return u.key(e.Fun, depth+1) + "(" + strings.Join(parts, ", ") + ")"
	case *ast.BinaryExpr:
		return "(" + u.key(e.X, depth+1) + e.Op.String() + u.key(e.Y, depth+1) + ")"
	case *ast.IndexExpr:
		return u.key(e.X, depth+1) + "[" + u.key(e.Index, depth+1) + "]"
	case *ast.StarExpr:
		return "*" + u.key(e.X, depth+1)
	}
	return types.ExprString(e)
}

// jsonPath reports whether the last component of a path expression is a
// constant ending in ".json".
func (u *unit) jsonPath(e ast.Expr, depth int) bool {
	e = unparen(e)
	if depth > 16 {
		return false
	}
	if s, ok := u.stringConst(e); ok {
		return strings.HasSuffix(strings.ToLower(s), ".json")
	}
	switch e := e.(type) {
	case *ast.Ident:
		if v := u.localVar(e); v != nil {
			if d := u.def(v); d != nil {
				return u.jsonPath(d, depth+1)
			}
		}
	case *ast.BinaryExpr:
		return e.Op == token.ADD && u.jsonPath(e.Y, depth+1)
	case *ast.CallExpr:
		fn := u.callee(e)
		if fn == nil || len(e.Args) == 0 {
			return false
		}
		switch pkg, name := pkgPath(fn), fn.Name(); {
		case (pkg == "path/filepath" || pkg == "path") && name == "Join":
			return u.jsonPath(e.Args[len(e.Args)-1], depth+1)
		case pkg == "fmt" && name == "Sprintf":
			return u.jsonPath(e.Args[0], depth+1)
		}
	}
	return false
}

func unparen(e ast.Expr) ast.Expr {
	for {
		p, ok := e.(*ast.ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}
