package statuslint

import (
	"go/ast"
	"go/constant"
	"go/types"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/types/typeutil"
)

// An effect is what one call does with files.
type effect struct {
	results [][]src // what each result may hold
	outs    []out   // values the call stores through its arguments
	reads   []access
	writes  []access
	rename  bool // os.Rename: a write of its second argument if its first was written
}

// An out is a value a call stores through an argument (a pointer, a map).
type out struct {
	arg  ast.Expr
	srcs []src
}

func (e *effect) set(i int, srcs []src) {
	if i < len(e.results) {
		e.results[i] = union(e.results[i], srcs)
	}
}

// effects classifies a call, once per round of the data flow.
func (u *unit) effects(call *ast.CallExpr) *effect {
	if e, ok := u.memo[call]; ok {
		return e
	}
	e := &effect{results: make([][]src, resultCount(u.info.TypeOf(call)))}
	u.memo[call] = e
	u.classify(call, e)
	return e
}

func resultCount(t types.Type) int {
	switch t := t.(type) {
	case nil:
		return 0
	case *types.Tuple:
		return t.Len()
	}
	return 1
}

func (u *unit) classify(call *ast.CallExpr, e *effect) {
	if tv, ok := u.info.Types[call.Fun]; ok && tv.IsType() { // a conversion
		if len(call.Args) == 1 {
			e.set(0, u.taintOf(call.Args[0]))
		}
		return
	}
	obj := typeutil.Callee(u.info, call)
	if b, ok := obj.(*types.Builtin); ok {
		if b.Name() == "append" {
			for _, a := range call.Args {
				e.set(0, u.taintOf(a))
			}
		}
		return
	}
	if obj != nil && u.extra(call, obj, e) {
		return
	}
	if fn, ok := obj.(*types.Func); ok && u.known(call, fn, e) {
		return
	}
	if obj != nil {
		if f := u.factOf(obj); f != nil {
			u.apply(call, f, e) // the fact says where file content goes
			return
		}
	}
	u.generic(call, obj, e)
}

// known handles the file APIs of the standard library and of this module,
// and, by name, methods of interfaces (ReadFile, WriteFile, WriteAtomic...),
// whose bodies cannot be analysed.
func (u *unit) known(call *ast.CallExpr, fn *types.Func, e *effect) bool {
	pkg, name, method := pkgPath(fn), fn.Name(), isMethod(fn)
	arg := func(i int) ast.Expr {
		if i < len(call.Args) {
			return call.Args[i]
		}
		return nil
	}
	switch {
	case (pkg == "os" || pkg == "io/ioutil") && !method:
		switch name {
		case "ReadFile", "Open":
			e.set(0, u.file(content, arg(0), call))
		case "Create":
			e.set(0, u.file(writer, arg(0), call))
		case "OpenFile":
			flag, known := u.intConst(arg(1))
			if !known || flag&osConst(fn, "O_WRONLY") == 0 {
				e.set(0, u.file(content, arg(0), call))
			}
			if !known || flag&(osConst(fn, "O_WRONLY")|osConst(fn, "O_RDWR")) != 0 {
				e.set(0, u.file(writer, arg(0), call))
			}
		case "CreateTemp":
			key := "temp" + localMarker + strconv.Itoa(int(call.Pos()))
			e.set(0, []src{{kind: writer, key: key, desc: "a temp file", pos: call.Pos()}})
		case "WriteFile":
			e.writes = append(e.writes, u.write(arg(0), call))
		case "Rename":
			e.rename = true
		default:
			return false
		}
		return true
	case pkg == fsPkg:
		path := u.firstString(call)
		if path == nil {
			return false
		}
		s := src{key: u.key(path, 0), desc: types.ExprString(path), pos: call.Pos()}
		if method { // a sandboxed Fs: the name is relative to its root
			s.key = u.key(u.argument(call, recvIndex), 0) + ".root/" + s.key
		}
		switch {
		case strings.HasPrefix(name, "WriteAtomic"):
			e.writes = append(e.writes, access{s.key, s.desc, call.Pos(), call.End()})
		case name == "Open" || strings.HasPrefix(name, "Read") && returnsBytes(fn):
			s.kind = content // ReadFile, ReadRegular..., and a handle from Open
			e.set(0, []src{s})
		default:
			return false
		}
		return true
	case pkg == statusPkg:
		var path ast.Expr
		switch {
		case name == "Mutate" || name == "Create":
			return true // under the document's lock
		case !method && name == "Load": // Load(ctx, path)
			path = arg(1)
		case method && name == "Load":
			path = u.storePath(u.argument(call, recvIndex))
		}
		if path == nil {
			return false
		}
		s := u.file(decoded, path, call)
		e.set(0, s)
		e.reads = append(e.reads, access{s[0].key, s[0].desc, call.Pos(), 0})
		return true
	case isAbstract(fn): // an interface method: only its name tells
		path := u.firstString(call)
		switch {
		case path == nil:
			return false
		case name == "ReadFile":
			e.set(0, u.file(content, path, call))
		case strings.HasPrefix(name, "WriteFile") || strings.HasPrefix(name, "WriteAtomic"):
			e.writes = append(e.writes, u.write(path, call))
		default:
			return false
		}
		return true
	}
	return false
}

// storePath returns the path a status.Store was made for
// (status.NewStore[T](path)), or the store itself.
func (u *unit) storePath(store ast.Expr) ast.Expr {
	if store == nil {
		return nil
	}
	if call, ok := u.resolve(store).(*ast.CallExpr); ok && len(call.Args) > 0 {
		if fn := u.callee(call); fn != nil && pkgPath(fn) == statusPkg && fn.Name() == "NewStore" {
			return call.Args[0]
		}
	}
	return store
}

// extra handles the functions named by the -readers and -writers flags: the
// document is the first string argument, or else the receiver.
func (u *unit) extra(call *ast.CallExpr, obj types.Object, e *effect) bool {
	name := objectName(obj)
	isReader, isWriter := extra.readers.has(name), extra.writers.has(name)
	if !isReader && !isWriter {
		return false
	}
	path := u.firstString(call)
	if path == nil {
		path = u.argument(call, recvIndex)
	}
	if path == nil {
		return false
	}
	if isReader {
		s := u.file(decoded, path, call)
		e.set(0, s)
		e.reads = append(e.reads, access{s[0].key, s[0].desc, call.Pos(), 0})
	}
	if isWriter {
		e.writes = append(e.writes, u.write(path, call))
	}
	return true
}

// apply makes a call do what the callee's fact says.
func (u *unit) apply(call *ast.CallExpr, f *fileFact, e *effect) {
	for _, r := range f.Reads {
		key, expr, ok := u.substitute(call, r.Path)
		if !ok {
			continue
		}
		s := src{kind: content, key: key, desc: describe(expr, r.Path), pos: call.Pos()}
		if r.Decoded {
			s.kind = decoded
			e.reads = append(e.reads, access{key, s.desc, call.Pos(), 0})
		}
		u.route(call, r.To, []src{s}, e)
	}
	for _, d := range f.Decodes {
		if a := u.argument(call, d.From); a != nil {
			if dec := u.decode(u.taintOf(a), e); len(dec) > 0 {
				u.route(call, d.To, dec, e)
			}
		}
	}
	for _, w := range f.Writes {
		if key, expr, ok := u.substitute(call, w); ok {
			e.writes = append(e.writes, access{key, describe(expr, w), call.Pos(), call.End()})
		}
	}
}

func describe(expr ast.Expr, template string) string {
	if expr != nil {
		return types.ExprString(expr)
	}
	return show(template)
}

// route stores srcs where a fact says the callee puts them.
func (u *unit) route(call *ast.CallExpr, to dest, srcs []src, e *effect) {
	if !to.Param {
		e.set(to.Index, srcs)
		return
	}
	if a := u.argument(call, to.Index); a != nil {
		e.outs = append(e.outs, out{a, srcs})
	}
}

// decode returns the decoded form of the content among srcs, and records
// each as a decoded read.
func (u *unit) decode(srcs []src, e *effect) []src {
	var out []src
	for _, s := range srcs {
		if s.kind == content {
			s.kind = decoded
			out = append(out, s)
			e.reads = append(e.reads, access{s.key, s.desc, s.pos, 0})
		}
	}
	return out
}

// generic handles a call that nothing else describes: its results hold
// what its arguments hold; it writes a handle it is given if its name says
// so (Write..., Encode, Flush, Fprint..., Copy); and it decodes content it
// is given into the pointers, maps or empty interfaces it is also given
// (json.Unmarshal, yaml.Unmarshal, a Decoder's Decode, a helper like
// unmarshal(s string, v any)).
func (u *unit) generic(call *ast.CallExpr, obj types.Object, e *effect) {
	u.passThrough(call, e)
	in := u.inputs(call)
	if obj != nil && writeLike(obj.Name()) {
		for _, s := range in {
			if s.kind == writer {
				e.writes = append(e.writes, access{s.key, s.desc, call.Pos(), call.End()})
			}
		}
		return // an encoder, not a decoder
	}
	var targets []ast.Expr
	var sig *types.Signature
	if t := u.info.TypeOf(call.Fun); t != nil {
		sig, _ = t.Underlying().(*types.Signature)
	}
	for i, a := range call.Args {
		if sig != nil && sig.Variadic() && i >= sig.Params().Len()-1 {
			break // fmt.Printf("%v", &v) prints, it does not decode
		}
		if !slices.ContainsFunc(u.taintOf(a), isInput) && decodeTarget(u.info.TypeOf(a)) {
			targets = append(targets, a)
		}
	}
	if len(targets) == 0 {
		return
	}
	dec := u.decode(in, e)
	for _, a := range targets {
		e.outs = append(e.outs, out{a, dec})
	}
}

// isInput reports whether s is a file's content or a handle, which a call
// reads or writes, as opposed to a value it may fill. (Parameter labels do
// not count: a map that a parameter's text was stored in is still a map.)
func isInput(s src) bool {
	_, label := labelIndex(s.key)
	return s.kind == writer || (s.kind == content && !label)
}

// inputs returns what a call's arguments and receiver hold.
func (u *unit) inputs(call *ast.CallExpr) []src {
	var in []src
	if r := u.argument(call, recvIndex); r != nil {
		in = u.taintOf(r)
	}
	for _, a := range call.Args {
		in = union(in, u.taintOf(a))
	}
	return in
}

// passThrough gives each result (but errors) what the arguments hold.
func (u *unit) passThrough(call *ast.CallExpr, e *effect) {
	in := u.inputs(call)
	if len(in) == 0 {
		return
	}
	for i := range e.results {
		if !isError(resultType(u.info.TypeOf(call), i)) {
			e.set(i, in)
		}
	}
}

// returnsBytes reports whether fn's first result is a []byte.
func returnsBytes(fn *types.Func) bool {
	res := fn.Type().(*types.Signature).Results()
	if res.Len() == 0 {
		return false
	}
	sl, ok := res.At(0).Type().Underlying().(*types.Slice)
	return ok && isByte(sl.Elem())
}

func resultType(t types.Type, i int) types.Type {
	if tup, ok := t.(*types.Tuple); ok {
		return tup.At(i).Type()
	}
	return t
}

func writeLike(name string) bool {
	for _, p := range []string{"Write", "write", "Encode", "encode", "Flush", "Fprint", "Copy", "ReadFrom"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// file returns the src of a file at path opened or read by call.
func (u *unit) file(kind srcKind, path ast.Expr, call *ast.CallExpr) []src {
	if path == nil {
		return nil
	}
	return []src{{kind: kind, key: u.key(path, 0), desc: types.ExprString(path), pos: call.Pos()}}
}

func (u *unit) write(path ast.Expr, call *ast.CallExpr) access {
	return access{u.key(path, 0), types.ExprString(path), call.Pos(), call.End()}
}

// decodeTarget reports whether a value of type t can receive a decoded
// document: a pointer to something other than a number, text or bytes, a
// map, or an empty interface (which a decoder is given a pointer in).
// Readers and writers (*os.File, *bytes.Buffer) are not.
func decodeTarget(t types.Type) bool {
	if t == nil {
		return false
	}
	switch tt := t.Underlying().(type) {
	case *types.Pointer:
		switch elem := tt.Elem().Underlying().(type) {
		case *types.Basic:
			return false
		case *types.Slice:
			if isByte(elem.Elem()) {
				return false
			}
		}
		return !hasMethod(t, "Read") && !hasMethod(t, "Write")
	case *types.Map:
		return true
	case *types.Interface:
		return tt.Empty()
	}
	return false
}

// outParam reports whether a parameter of type t can hand content back to
// the caller.
func outParam(t types.Type) bool { return decodeTarget(t) }

// contentType reports whether a parameter of type t can bring content in:
// text, bytes, or a reader.
func contentType(t types.Type) bool {
	switch tt := t.Underlying().(type) {
	case *types.Basic:
		return tt.Info()&types.IsString != 0
	case *types.Slice:
		return isByte(tt.Elem())
	}
	return hasMethod(t, "Read")
}

func hasMethod(t types.Type, name string) bool {
	obj, _, _ := types.LookupFieldOrMethod(t, true, nil, name)
	_, ok := obj.(*types.Func)
	return ok
}

func isByte(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Kind() == types.Byte
}

func isString(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsString != 0
}

func isBool(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsBoolean != 0
}

func isError(t types.Type) bool {
	return t != nil && types.Identical(t, types.Universe.Lookup("error").Type())
}

func isAbstract(fn *types.Func) bool {
	sig, _ := fn.Type().(*types.Signature)
	if sig == nil || sig.Recv() == nil {
		return false
	}
	return types.IsInterface(sig.Recv().Type())
}

func isPackageLevel(v *types.Var) bool {
	return v.Pkg() != nil && v.Parent() == v.Pkg().Scope()
}

func pkgPath(obj types.Object) string {
	if obj.Pkg() == nil {
		return ""
	}
	return obj.Pkg().Path()
}

func isMethod(fn *types.Func) bool {
	sig, _ := fn.Type().(*types.Signature)
	return sig != nil && sig.Recv() != nil
}

// objectName names a function, method or package-level variable the way
// the -readers and -writers flags do: pkg.Func, pkg.T.Method.
func objectName(obj types.Object) string {
	prefix := pkgPath(obj) + "."
	if fn, ok := obj.(*types.Func); ok {
		if sig, _ := fn.Type().(*types.Signature); sig != nil && sig.Recv() != nil {
			t := sig.Recv().Type()
			if p, ok := t.(*types.Pointer); ok {
				t = p.Elem()
			}
			if n, ok := types.Unalias(t).(*types.Named); ok {
				prefix += n.Obj().Name() + "."
			}
		}
	}
	return prefix + obj.Name()
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
