package statuslint

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strconv"
	"strings"

	"golang.org/x/tools/go/types/typeutil"
)

// key renders a path expression so that two expressions denoting the same
// path get the same key: constants by value, parameters by position
// (paramMarker), package-level names by their qualified name, local
// variables by identity (localMarker) or, when assigned once, by their
// value, calls of path helpers by the path they return, other expressions
// structurally.
func (u *unit) key(e ast.Expr, depth int) string {
	e = unparen(e)
	if depth > 16 {
		return types.ExprString(e) + localMarker
	}
	if s, ok := u.stringConst(e); ok {
		return strconv.Quote(s)
	}
	switch e := e.(type) {
	case *ast.Ident:
		return u.identKey(e, depth)
	case *ast.SelectorExpr:
		if _, ok := u.info.Selections[e]; !ok { // a qualified identifier
			return u.identKey(e.Sel, depth)
		}
		return u.key(e.X, depth+1) + "." + e.Sel.Name
	case *ast.CallExpr:
		if k, ok := u.pathCall(e); ok {
			return k
		}
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
	case *ast.UnaryExpr:
		return e.Op.String() + u.key(e.X, depth+1)
	}
	// A literal, a conversion to a composite type...: this occurrence only.
	return fmt.Sprintf("%s%s%d", types.ExprString(e), localMarker, e.Pos())
}

func (u *unit) identKey(id *ast.Ident, depth int) string {
	switch obj := u.info.ObjectOf(id).(type) {
	case *types.Var:
		if i, ok := u.params[obj]; ok && u.assigns[obj] == 0 {
			return paramMarker(i)
		}
		if isPackageLevel(obj) {
			return obj.Pkg().Path() + "." + obj.Name()
		}
		if d, ok := u.def(obj); ok {
			k := u.key(d.expr, depth+1)
			if d.index > 0 {
				k += "#" + strconv.Itoa(d.index)
			}
			return k
		}
		return fmt.Sprintf("%s%s%d", obj.Name(), localMarker, obj.Pos())
	case *types.PkgName:
		return obj.Imported().Path()
	case nil:
		return id.Name
	default:
		if obj.Pkg() != nil && obj.Parent() == obj.Pkg().Scope() {
			return obj.Pkg().Path() + "." + obj.Name()
		}
		return fmt.Sprintf("%s%s%d", obj.Name(), localMarker, obj.Pos())
	}
}

// pathCall returns the key of a call of a path helper: the path its fact
// says it returns, with the call's arguments in it.
func (u *unit) pathCall(call *ast.CallExpr) (string, bool) {
	obj := typeutil.Callee(u.info, call)
	if obj == nil {
		return "", false
	}
	f := u.factOf(obj)
	if f == nil || f.Path == "" {
		return "", false
	}
	k, _, ok := u.substitute(call, f.Path)
	return k, ok
}

// resolve follows local variables assigned once to their value.
func (u *unit) resolve(e ast.Expr) ast.Expr {
	for range 16 {
		e = unparen(e)
		v := u.localVar(e)
		if v == nil {
			return e
		}
		d, ok := u.def(v)
		if !ok || d.index != 0 {
			return e
		}
		e = d.expr
	}
	return e
}

// firstString returns the first argument of string type.
func (u *unit) firstString(call *ast.CallExpr) ast.Expr {
	for _, a := range call.Args {
		if t := u.info.TypeOf(a); t != nil && isString(t) {
			return a
		}
	}
	return nil
}

func (u *unit) intConst(e ast.Expr) (int64, bool) {
	if e == nil {
		return 0, false
	}
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
			if d, ok := u.def(v); ok && d.index == 0 {
				return u.jsonPath(d.expr, depth+1)
			}
		}
	case *ast.BinaryExpr:
		return e.Op == token.ADD && u.jsonPath(e.Y, depth+1)
	case *ast.CallExpr:
		fn := u.callee(e)
		if fn == nil || len(e.Args) == 0 {
			return false
		}
		if p, ok := u.pathCall(e); ok { // a path helper
			return strings.HasSuffix(strings.ToLower(strings.TrimRight(p, ")")), `.json"`)
		}
		switch name := strings.ToLower(fn.Name()); {
		case strings.Contains(name, "join") || strings.Contains(name, "path"):
			// filepath.Join, path.Join, a framework's Path(elem...)
			return u.jsonPath(e.Args[len(e.Args)-1], depth+1)
		case pkgPath(fn) == "fmt" && name == "sprintf":
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
