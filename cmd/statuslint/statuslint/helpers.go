package statuslint

import (
	"fmt"
	"go/ast"
	"go/types"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// A helperFact marks a function that reads and decodes, or encodes and
// writes, the file named by (an expression of) its parameters, such as
//
//	func load(ws string) (Doc, error)  // reads filepath.Join(ws, "doc.json")
//	func save(ws string, d Doc) error   // writes filepath.Join(ws, "doc.json")
//
// Its callers then see a read or a write of the path their arguments make,
// so load + change + save is reported like the inline pattern, in this
// package or in any package that imports it.
type helperFact struct {
	// Path templates: keys in which paramMarker(i) stands for argument i
	// (recvIndex for the receiver).
	Reads, Writes []string
}

func (*helperFact) AFact() {}

func (f *helperFact) String() string {
	show := func(keys []string) string {
		out := make([]string, len(keys))
		for i, k := range keys {
			out[i] = strings.NewReplacer("\x00"+strconv.Itoa(recvIndex)+"\x00", "$recv").Replace(k)
			for j := 0; strings.Contains(out[i], "\x00"); j++ {
				out[i] = strings.ReplaceAll(out[i], paramMarker(j), "$"+strconv.Itoa(j))
			}
		}
		return strings.Join(out, ", ")
	}
	return fmt.Sprintf("reads(%s) writes(%s)", show(f.Reads), show(f.Writes))
}

const recvIndex = -1

func paramMarker(i int) string { return "\x00" + strconv.Itoa(i) + "\x00" }

func init() {
	Analyzer.FactTypes = []analysis.Fact{new(helperFact)}
}

// exportHelperFact records what fn reads and writes, in terms of its
// parameters, and reports whether that changed the fact.
func exportHelperFact(pass *analysis.Pass, fn *types.Func, u *unit) bool {
	templates := func(accs []access) []string {
		var out []string
		for _, a := range accs {
			// Only keys made of parameters, constants and package-level
			// names mean the same thing at a call site.
			if strings.Contains(a.key, "\x00") && !strings.Contains(a.key, "@") && !slices.Contains(out, a.key) {
				out = append(out, a.key)
			}
		}
		slices.Sort(out)
		return out
	}
	reads, writes := templates(u.reads), templates(u.writes)
	// A function that both reads and writes one file is a read-modify-write
	// of its own (reported there); for its callers it is neither.
	both := func(a, b []string) []string {
		return slices.DeleteFunc(slices.Clone(a), func(k string) bool { return slices.Contains(b, k) })
	}
	reads, writes = both(reads, writes), both(writes, reads)
	if !returnsValue(fn) {
		// A read helper hands what it read to its caller; a function that
		// only reads (to check, to log) and returns no value is not one.
		reads = nil
	}

	var old helperFact
	had := pass.ImportObjectFact(fn, &old)
	if len(reads) == 0 && len(writes) == 0 {
		return false // facts only grow between rounds: nothing to retract
	}
	if had && slices.Equal(old.Reads, reads) && slices.Equal(old.Writes, writes) {
		return false
	}
	pass.ExportObjectFact(fn, &helperFact{Reads: reads, Writes: writes})
	return true
}

// helperAccesses returns the reads (or writes) that a call to a helper
// performs, with its arguments substituted into the helper's templates.
func (u *unit) helperAccesses(call *ast.CallExpr, reads bool) []access {
	fn := u.callee(call)
	if fn == nil {
		return nil
	}
	var f helperFact
	if !u.pass.ImportObjectFact(fn.Origin(), &f) {
		return nil
	}
	tmpls := f.Writes
	if reads {
		tmpls = f.Reads
	}
	var out []access
	for _, t := range tmpls {
		if a, ok := u.substitute(call, t); ok {
			out = append(out, a)
		}
	}
	return out
}

func (u *unit) substitute(call *ast.CallExpr, tmpl string) (access, bool) {
	var path ast.Expr
	var b strings.Builder
	parts := strings.Split(tmpl, "\x00")
	// parts alternate: text, index, text, index, ..., text
	for i, p := range parts {
		if i%2 == 0 {
			b.WriteString(p)
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil {
			return access{}, false
		}
		arg := u.argument(call, n)
		if arg == nil {
			return access{}, false
		}
		if path == nil {
			path = arg
		}
		b.WriteString(u.key(arg, 0))
	}
	return access{key: b.String(), path: path, pos: call.Pos()}, true
}

// argument returns argument n of call, or its receiver for recvIndex.
func (u *unit) argument(call *ast.CallExpr, n int) ast.Expr {
	if n == recvIndex {
		sel, ok := unparen(call.Fun).(*ast.SelectorExpr)
		if !ok {
			return nil
		}
		if s, ok := u.info.Selections[sel]; !ok || s.Kind() != types.MethodVal {
			return nil
		}
		return sel.X
	}
	if call.Ellipsis.IsValid() || n >= len(call.Args) {
		return nil
	}
	return call.Args[n]
}

// returnsValue reports whether fn has a result other than an error.
func returnsValue(fn *types.Func) bool {
	res := fn.Type().(*types.Signature).Results()
	for i := range res.Len() {
		if !types.Identical(res.At(i).Type(), types.Universe.Lookup("error").Type()) {
			return true
		}
	}
	return false
}
