package statuslint

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"testing"

	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"
)

// TestNoContentBuilderTypes asks noContent about every value of functions
// whose SSA form holds the builder's own types (the iterator of a range
// over a map, a defer stack), which go/types.Identical panics on.
// At least one such value must be met, or the test proves nothing.
func TestNoContentBuilderTypes(t *testing.T) {
	const src = `package p

import "iter"

func seq(yield func(int) bool) { yield(1) }

func f() int {
	n := 0
	for x := range iter.Seq[int](seq) {
		defer func() { n += x }()
		if x > 0 {
			return x
		}
	}
	for i := range 3 {
		defer func() { n += i }()
	}
	for k := range map[string]int{"a": 1} {
		n += len(k)
	}
	return n
}
`
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	pkg, _, err := ssautil.BuildPackage(&types.Config{Importer: importer.Default()}, fset,
		types.NewPackage("p", "p"), []*ast.File{file}, ssa.SanityCheckFunctions)
	if err != nil {
		t.Fatal(err)
	}
	builder := 0
	for fn := range ssautil.AllFunctions(pkg.Prog) {
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				v, ok := instr.(ssa.Value)
				if !ok {
					continue
				}
				if !goType(v.Type()) {
					builder++
				}
				_ = noContent(v.Type())
			}
		}
	}
	if builder == 0 {
		t.Fatal("no value of the SSA builder's own types: the test data no longer covers them")
	}
}
