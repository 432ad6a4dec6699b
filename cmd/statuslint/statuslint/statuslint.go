package statuslint

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// Analyzer reports bare read-modify-write cycles and in-place writes of JSON
// state files. See the package documentation.
var Analyzer = &analysis.Analyzer{
	Name: "statuslint",
	Doc: "report bare read-modify-write and in-place writes of JSON state files\n\n" +
		"A file that is read and decoded, then written back in one function outside\n" +
		"status.Mutate loses concurrent updates; use status.Mutate. A JSON file written\n" +
		"with os.WriteFile, os.Create or O_TRUNC can be seen empty or half written;\n" +
		"use fs.WriteAtomic.",
	Run:       run,
	FactTypes: []analysis.Fact{new(fileFact)},
}

var extra = struct{ readers, writers nameList }{}

func init() {
	Analyzer.Flags.Var(&extra.readers, "readers",
		"comma-separated functions that read and decode a document (pkg.Func, pkg.(*T).Method, pkg.Interface.Method); "+
			"the document is named by the first string argument, or else by the receiver")
	Analyzer.Flags.Var(&extra.writers, "writers",
		"comma-separated functions that write a document, named like -readers")
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

func run(pass *analysis.Pass) (any, error) {
	if isStd(pass.Pkg) {
		// The standard library's file APIs are known by name (known.go);
		// analysing its bodies would only cost time.
		return nil, nil
	}
	c := &checker{pass: pass, local: make(map[types.Object]*fileFact)}
	funcs := c.functions()

	// Functions learn what the helpers they call read and write; repeat
	// until nothing changes, so that wrappers of any depth are seen.
	var units []*unit
	for range maxRounds {
		changed := false
		units = units[:0]
		for _, f := range funcs {
			if f.alias != nil { // var f = g: f does what g does
				if g := c.factOf(f.alias); g != nil && c.learn(f.obj, g) {
					changed = true
				}
				continue
			}
			u := c.analyse(f)
			units = append(units, u)
			if f.obj != nil && c.learn(f.obj, u.summary()) {
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	for obj, f := range c.local {
		if !f.empty() {
			pass.ExportObjectFact(obj, f)
		}
	}
	for _, u := range units {
		u.checkInPlace()
		u.checkReadModifyWrite()
	}
	return nil, nil
}

// A checker holds what one pass knows: the facts of this package's
// functions as they are being computed (imported facts come from the pass).
type checker struct {
	pass  *analysis.Pass
	local map[types.Object]*fileFact
}

// A function is a function declaration, or a function literal that
// initialises a package-level variable (obj is then the variable).
type function struct {
	obj    types.Object
	sig    *types.Signature
	body   *ast.BlockStmt
	alias  types.Object // for `var f = g`: the function g
	report func(pos token.Pos, format string, args ...any)
}

// functions lists the functions of the package, in source order.
func (c *checker) functions() []*function {
	var funcs []*function
	info := c.pass.TypesInfo
	for _, file := range c.pass.Files {
		if ast.IsGenerated(file) {
			continue
		}
		report := c.reporter(file)
		for _, decl := range file.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Body == nil {
					continue
				}
				fn, _ := info.Defs[d.Name].(*types.Func)
				if fn == nil {
					continue
				}
				funcs = append(funcs, &function{obj: fn, sig: fn.Type().(*types.Signature), body: d.Body, report: report})
			case *ast.GenDecl:
				funcs = append(funcs, c.varFunctions(d, report)...)
			}
		}
	}
	return funcs
}

// varFunctions returns the function-typed package-level variables of a
// declaration with a known initial value: a function literal (analysed as
// a function of its own) or the name of a function (which the variable
// stands for). Other function literals in the declaration are analysed
// without a fact.
func (c *checker) varFunctions(d *ast.GenDecl, report func(token.Pos, string, ...any)) []*function {
	var out []*function
	info := c.pass.TypesInfo
	for _, spec := range d.Specs {
		vs, ok := spec.(*ast.ValueSpec)
		if !ok {
			continue
		}
		for i, val := range vs.Values {
			var obj types.Object
			if len(vs.Names) == len(vs.Values) {
				obj = info.Defs[vs.Names[i]]
			}
			switch v := unparen(val).(type) {
			case *ast.FuncLit:
				sig, _ := info.TypeOf(v).(*types.Signature)
				out = append(out, &function{obj: obj, sig: sig, body: v.Body, report: report})
				continue
			case *ast.Ident, *ast.SelectorExpr:
				if fn := funcObject(info, v); fn != nil && obj != nil {
					out = append(out, &function{obj: obj, alias: fn, report: report})
					continue
				}
			}
			ast.Inspect(val, func(n ast.Node) bool {
				if lit, ok := n.(*ast.FuncLit); ok {
					sig, _ := info.TypeOf(lit).(*types.Signature)
					out = append(out, &function{sig: sig, body: lit.Body, report: report})
					return false
				}
				return true
			})
		}
	}
	return out
}

// funcObject returns the function, or function-typed package-level
// variable, that an identifier or qualified identifier names.
func funcObject(info *types.Info, e ast.Expr) types.Object {
	var id *ast.Ident
	switch e := e.(type) {
	case *ast.Ident:
		id = e
	case *ast.SelectorExpr:
		id = e.Sel
	}
	switch obj := info.Uses[id].(type) {
	case *types.Func:
		if isMethod(obj) {
			return nil // a method value or expression: the receiver moves
		}
		return obj.Origin()
	case *types.Var:
		if isPackageLevel(obj) {
			return obj
		}
	}
	return nil
}

// reporter returns the report function for one file: it drops findings on
// lines that the ignore directive covers.
func (c *checker) reporter(file *ast.File) func(token.Pos, string, ...any) {
	type lineKey struct {
		file string
		line int
	}
	ignored := make(map[lineKey]bool)
	for _, cg := range file.Comments {
		for _, cm := range cg.List {
			if strings.HasPrefix(cm.Text, ignoreDirective) {
				p := c.pass.Fset.Position(cm.Slash)
				ignored[lineKey{p.Filename, p.Line}] = true
				ignored[lineKey{p.Filename, p.Line + 1}] = true
			}
		}
	}
	return func(pos token.Pos, format string, args ...any) {
		p := c.pass.Fset.Position(pos)
		if !ignored[lineKey{p.Filename, p.Line}] {
			c.pass.Reportf(pos, format, args...)
		}
	}
}

// analyse computes the data flow and the file accesses of one function.
func (c *checker) analyse(f *function) *unit {
	u := newUnit(c, f)
	u.run()
	return u
}

// learn records the fact of a function of this package and reports whether
// it changed.
func (c *checker) learn(obj types.Object, f *fileFact) bool {
	old := c.local[obj]
	if old == nil {
		old = new(fileFact)
	}
	if old.equal(f) {
		return false
	}
	c.local[obj] = f
	return true
}

// factOf returns what is known about a function or function variable: from
// this pass, or from the facts of the package that declares it.
func (c *checker) factOf(obj types.Object) *fileFact {
	if fn, ok := obj.(*types.Func); ok {
		obj = fn.Origin()
	}
	if f, ok := c.local[obj]; ok {
		return f
	}
	if obj.Pkg() == nil || obj.Pkg() == c.pass.Pkg {
		return nil
	}
	var f fileFact
	if c.pass.ImportObjectFact(obj, &f) {
		return &f
	}
	return nil
}

// isStd reports whether pkg belongs to the standard library: its path's
// first element is one of the standard library's top-level names.
func isStd(pkg *types.Package) bool {
	first, _, _ := strings.Cut(pkg.Path(), "/")
	if strings.Contains(first, ".") {
		return false
	}
	return stdPackages[first]
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
