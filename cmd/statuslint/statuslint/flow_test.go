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

// TestNoContentBuilderTypes asks noContent about every value of a function
// whose SSA form holds one of the builder's own types (the iterator of a
// range over a map), which go/types.Identical panics on. At least one such
// value must be met, or the test proves nothing.
func TestNoContentBuilderTypes(t *testing.T) {
	const src = `package p

func f(m map[string]int) int {
	n := 0
	for k := range m {
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
