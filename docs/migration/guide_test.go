package migration_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// exampleBlock matches a code block of the guide that is marked as the body
// of an Example of this package.
var exampleBlock = regexp.MustCompile("(?s)<!-- example: (Example_\\w+) -->\n```go\n(.*?)\n```")

// TestGuideMatchesExamples keeps docs/MIGRATION.md honest: every "after"
// block in it must be, line for line, the body of the Example it names (so
// the code the guide shows is the code go test compiles and checks), and
// every Example must appear in the guide.
func TestGuideMatchesExamples(t *testing.T) {
	guide, err := os.ReadFile(filepath.Join("..", "MIGRATION.md"))
	if err != nil {
		t.Fatal(err)
	}
	bodies := exampleBodies(t)
	shown := map[string]bool{}
	for _, m := range exampleBlock.FindAllStringSubmatch(string(guide), -1) {
		name, code := m[1], m[2]
		shown[name] = true
		body, ok := bodies[name]
		if !ok {
			t.Errorf("MIGRATION.md shows %s, which is not an Example here", name)
			continue
		}
		if diff := cmp.Diff(body, code); diff != "" {
			t.Errorf("MIGRATION.md's block for %s differs from the Example (-example +guide):\n%s", name, diff)
		}
	}
	for name := range bodies {
		if !shown[name] {
			t.Errorf("%s is not shown in MIGRATION.md", name)
		}
	}
	if len(shown) == 0 {
		t.Fatal("no example blocks found in MIGRATION.md")
	}
}

// exampleBodies returns the source of the body of every Example function in
// this directory, without its braces and with one level of indentation
// removed.
func exampleBodies(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	bodies := map[string]string{}
	fset := token.NewFileSet()
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || !strings.HasPrefix(fn.Name.Name, "Example") {
				continue
			}
			open := fset.Position(fn.Body.Lbrace).Offset + 1
			end := fset.Position(fn.Body.Rbrace).Offset
			body := strings.Trim(string(src[open:end]), "\n")
			lines := strings.Split(body, "\n")
			for i, l := range lines {
				lines[i] = strings.TrimPrefix(l, "\t")
			}
			bodies[fn.Name.Name] = strings.Join(lines, "\n")
		}
	}
	return bodies
}
