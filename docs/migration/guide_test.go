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
var exampleBlock = regexp.MustCompile("(?s)<!-- example: ((?:formats\\.)?Example_\\w+) -->\n```go\n(.*?)\n```")

// formatsDir is the module of the guide's examples for other formats than
// JSON (see its package doc); the guide names its Examples and
// declarations "formats.Name".
const formatsDir = "formats"

// TestGuideMatchesExamples keeps docs/MIGRATION.md honest: every "after"
// block in it must be, line for line, the body of the Example it names (so
// the code the guide shows is the code go test compiles and checks), and
// every Example must appear in the guide.
func TestGuideMatchesExamples(t *testing.T) {
	guide, err := os.ReadFile(filepath.Join("..", "MIGRATION.md"))
	if err != nil {
		t.Fatal(err)
	}
	bodies := exampleBodies(t, ".")
	for name, body := range exampleBodies(t, formatsDir) {
		bodies[formatsDir+"."+name] = body
	}
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
		if !shown[name] && !strings.HasPrefix(name, readmePrefix) {
			t.Errorf("%s is not shown in MIGRATION.md", name)
		}
	}
	if len(shown) == 0 {
		t.Fatal("no example blocks found in MIGRATION.md")
	}
}

// readmePrefix starts the names of the Examples that README.md shows.
const readmePrefix = "Example_readme"

// goBlock matches a Go code block with the marker, if any, that names the
// Example it shows: an Example of this package, or one of another package
// of the repository as "<dir>.<Example>" (etcdstore.ExampleWith).
var goBlock = regexp.MustCompile("(?s)(?:<!-- example: ([\\w.]+) -->\n)?```go\n(.*?)\n```")

// readmeExampleDirs are the directories, relative to this one, of the other
// packages whose Examples README.md may show.
var readmeExampleDirs = []string{"../../status/etcdstore"}

// TestReadmeShowsExamples checks README.md the way TestGuideMatchesExamples
// checks the guide: every Go block in it is, line for line, the body of
// the Example it names (so go test compiles it, and runs it against its
// Output), and every Example_readme* of this package is shown there.
func TestReadmeShowsExamples(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	bodies := exampleBodies(t, ".")
	for _, dir := range readmeExampleDirs {
		for name, body := range exampleBodies(t, dir) {
			bodies[filepath.Base(dir)+"."+name] = body
		}
	}
	shown := map[string]bool{}
	for _, m := range goBlock.FindAllStringSubmatch(string(readme), -1) {
		name, code := m[1], m[2]
		if name == "" {
			first, _, _ := strings.Cut(code, "\n")
			t.Errorf("README.md has a Go block that names no Example (<!-- example: Name -->), starting %q", first)
			continue
		}
		shown[name] = true
		body, ok := bodies[name]
		if !ok {
			t.Errorf("README.md shows %s, which is not an Example here or in %v", name, readmeExampleDirs)
			continue
		}
		if diff := cmp.Diff(body, code); diff != "" {
			t.Errorf("README.md's block for %s differs from the Example (-example +readme):\n%s", name, diff)
		}
	}
	for name := range bodies {
		if strings.HasPrefix(name, readmePrefix) && !shown[name] {
			t.Errorf("%s is not shown in README.md", name)
		}
	}
	if len(shown) == 0 {
		t.Fatal("no Go blocks found in README.md")
	}
}

// sourceBlock matches a code block of the guide that shows a top-level
// declaration of this package's tests (a type with its methods, or a
// function), and beforeBlock one that shows "before" code of a package in
// testdata/src, which TestStatuslintReportsBeforePatterns analyses.
var (
	sourceBlock = regexp.MustCompile("(?s)<!-- source: ([\\w.]+) -->\n```go\n(.*?)\n```")
	beforeBlock = regexp.MustCompile("(?s)<!-- before: ([\\w/]+) -->\n```go\n(.*?)\n```")
)

// TestGuideShowsTestedCode checks the guide's other code blocks: a
// declaration it shows is the one the Examples use, and a "before" block is
// code that statuslint is tested on (line for line, indentation aside).
func TestGuideShowsTestedCode(t *testing.T) {
	guide, err := os.ReadFile(filepath.Join("..", "MIGRATION.md"))
	if err != nil {
		t.Fatal(err)
	}
	decls := declarations(t, ".")
	for name, decl := range declarations(t, formatsDir) {
		decls[formatsDir+"."+name] = decl
	}
	for _, m := range sourceBlock.FindAllStringSubmatch(string(guide), -1) {
		if diff := cmp.Diff(decls[m[1]], m[2]); diff != "" {
			t.Errorf("MIGRATION.md's block for %s differs from its declaration (-source +guide):\n%s", m[1], diff)
		}
	}
	befores := beforeBlock.FindAllStringSubmatch(string(guide), -1)
	for _, m := range befores {
		files, _ := filepath.Glob(filepath.Join("testdata", "src", m[1], "*.go"))
		if strings.HasPrefix(m[1], formatsDir+"/") {
			files, _ = filepath.Glob(filepath.Join(m[1], "*.go"))
		}
		found := false
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			found = found || strings.Contains(dedent(string(src)), dedent(m[2]))
		}
		if !found {
			t.Errorf("MIGRATION.md shows \"before\" code that is not in testdata/src/%s:\n%s", m[1], m[2])
		}
	}
	if len(befores) == 0 {
		t.Fatal("no before blocks found in MIGRATION.md")
	}
}

// lineComment is a comment at the end of a line of code (the guide's
// explanations, the test data's want comments).
var lineComment = regexp.MustCompile(`\s+// .*$`)

// dedent removes the leading white space and the trailing comment of every
// line.
func dedent(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = lineComment.ReplaceAllString(strings.TrimLeft(l, " \t"), "")
	}
	return strings.Join(lines, "\n")
}

// testDecls calls fn with every top-level declaration of the test files in
// dir and a function that returns the source text of a node.
func testDecls(t *testing.T, dir string, fn func(decl ast.Decl, text func(from, to token.Pos) string)) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
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
		text := func(from, to token.Pos) string {
			return string(src[fset.Position(from).Offset:fset.Position(to).Offset])
		}
		for _, decl := range f.Decls {
			fn(decl, text)
		}
	}
}

// declarations returns the source of the top-level types, functions and
// single variables of the test files of dir, by name; a type's methods
// follow it, separated by a blank line. Doc comments are not included.
func declarations(t *testing.T, dir string) map[string]string {
	t.Helper()
	decls := map[string]string{}
	testDecls(t, dir, func(decl ast.Decl, text func(from, to token.Pos) string) {
		switch d := decl.(type) {
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				if ts, ok := spec.(*ast.TypeSpec); ok && d.Tok == token.TYPE {
					decls[ts.Name.Name] = "type " + text(ts.Pos(), ts.End()) + decls[ts.Name.Name]
				}
				if vs, ok := spec.(*ast.ValueSpec); ok && d.Tok == token.VAR && len(vs.Names) == 1 && d.Lparen == token.NoPos {
					decls[vs.Names[0].Name] = "var " + text(vs.Pos(), vs.End())
				}
			}
		case *ast.FuncDecl:
			if d.Recv == nil {
				decls[d.Name.Name] = text(d.Pos(), d.End())
				return
			}
			recv := d.Recv.List[0].Type
			if star, ok := recv.(*ast.StarExpr); ok {
				recv = star.X
			}
			if id, ok := recv.(*ast.Ident); ok {
				decls[id.Name] += "\n\n" + text(d.Pos(), d.End())
			}
		}
	})
	return decls
}

// exampleBodies returns the source of the body of every Example function in
// the test files of dir, without its braces and with one level of
// indentation removed.
func exampleBodies(t *testing.T, dir string) map[string]string {
	t.Helper()
	bodies := map[string]string{}
	testDecls(t, dir, func(decl ast.Decl, text func(from, to token.Pos) string) {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || !strings.HasPrefix(fn.Name.Name, "Example") {
			return
		}
		body := strings.Trim(text(fn.Body.Lbrace+1, fn.Body.Rbrace), "\n")
		lines := strings.Split(body, "\n")
		for i, l := range lines {
			lines[i] = strings.TrimPrefix(l, "\t")
		}
		bodies[fn.Name.Name] = strings.Join(lines, "\n")
	})
	return bodies
}
