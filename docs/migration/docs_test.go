package migration_test

import (
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// guides are the documents whose code a reader copies.
var guides = []string{filepath.Join("..", "MIGRATION.md"), filepath.Join("..", "..", "README.md")}

// eachGuide calls fn with the name and text of each guide.
func eachGuide(t *testing.T, fn func(name, doc string)) {
	t.Helper()
	for _, path := range guides {
		doc, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		fn(filepath.Base(path), string(doc))
	}
}

// A block is a fenced code block of a Markdown document.
type block struct {
	lang, code string
	line       int    // of the opening fence
	marker     string // the <!-- ... --> comment on the line before, if any
}

// markdown splits a document into its fenced blocks (indented fences
// included, their code dedented) and its prose lines (blanks in place of
// fenced lines, so that line numbers stay).
func markdown(doc string) (blocks []block, prose []string) {
	lines := strings.Split(doc, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		indent := len(l) - len(strings.TrimLeft(l, " "))
		if !strings.HasPrefix(l[indent:], "```") {
			prose = append(prose, l)
			continue
		}
		b := block{lang: strings.TrimSpace(l[indent+3:]), line: i + 1}
		if i > 0 && strings.HasPrefix(lines[i-1], "<!--") {
			b.marker = lines[i-1]
		}
		var code []string
		prose = append(prose, "")
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			code = append(code, strings.TrimPrefix(lines[i], strings.Repeat(" ", indent)))
			prose = append(prose, "")
		}
		prose = append(prose, "")
		b.code = strings.Join(code, "\n")
		blocks = append(blocks, b)
	}
	return blocks, prose
}

var (
	// inlineCode is a code span of the prose.
	inlineCode = regexp.MustCompile("`([^`]+)`")
	// goDeclaration is Go that belongs in a Go block, never in prose or a
	// shell command: a type declaration, a function, a struct tag.
	goDeclaration = regexp.MustCompile("\\btype [A-Za-z_]\\w* (struct|interface)\\b|(^|\\s)func [\\w(]|\\w+:\"[^\"]*\"`")
	// command is a code span a reader runs in a shell.
	command = regexp.MustCompile(`^(corestate|statuslint|go|make|jq|flock) `)
)

// TestGuidesArePasteable checks that what MIGRATION.md and README.md show
// can be copied as it is: every Go block parses (as a file or as the body
// of a function), every shell block passes sh -n and calls only corestate
// commands that exist, no Go declaration is spliced into a shell block, a
// code span or prose, every code span is on one line, and every code span
// that is a command passes sh -n. (A declaration once replaced part of a
// file name in MIGRATION.md, prose and command alike.)
func TestGuidesArePasteable(t *testing.T) {
	commands := corestateCommands(t)
	eachGuide(t, func(name, doc string) {
		for _, problem := range pasteProblems(doc, commands) {
			t.Errorf("%s:%s", name, problem)
		}
	})
	// CONTROL: the splice that once broke MIGRATION.md section 10, in
	// prose and in a command, is found both times.
	spliced := "Keep an `AGENT_type Registry struct {\n\tActive int `json:\"active\"`\n}ISTRY.json`.\n\n" +
		"```sh\ncorestate tx AGENT_type Registry struct {\n\tActive int `json:\"active\"`\n}ISTRY.json active+=1\n```\n"
	if got := pasteProblems(spliced, commands); len(got) < 2 {
		t.Errorf("CONTROL: a spliced declaration gave %d problems, want one in the prose and one in the command: %q", len(got), got)
	}
	if got := pasteProblems("```sh\ncorestate frobnicate a.json\n```\n\n```go\nx := \n```\n\n```python\nx = (\n```\n", commands); len(got) != 3 {
		t.Errorf("CONTROL: an unknown command, bad Go and bad Python gave %q", got)
	}
}

// pasteProblems returns what a reader could not paste from doc, each as
// "LINE: why".
func pasteProblems(doc string, corestateCmds []string) []string {
	var out []string
	blocks, prose := markdown(doc)
	for _, b := range blocks {
		switch b.lang {
		case "go":
			if err := parseGo(b.code); err != nil {
				out = append(out, fmt.Sprintf("%d: Go block does not parse: %v", b.line, err))
			}
		case "sh":
			if err := shSyntax(b.code); err != nil {
				out = append(out, fmt.Sprintf("%d: shell block: %v", b.line, err))
			}
			if m := goDeclaration.FindString(b.code); m != "" {
				out = append(out, fmt.Sprintf("%d: shell block holds Go (%q)", b.line, m))
			}
			for _, l := range strings.Split(b.code, "\n") {
				if f := strings.Fields(l); len(f) > 1 && f[0] == "corestate" && !slices.Contains(corestateCmds, f[1]) {
					out = append(out, fmt.Sprintf("%d: shell block: corestate has no command %q", b.line, f[1]))
				}
			}
		case "python":
			if err := pySyntax(b.code); err != nil {
				out = append(out, fmt.Sprintf("%d: Python block: %v", b.line, err))
			}
		case "text":
		default:
			out = append(out, fmt.Sprintf("%d: code block without a language (go, sh, python or text)", b.line))
		}
	}
	text := strings.Join(prose, "\n")
	for _, m := range inlineCode.FindAllStringSubmatchIndex(text, -1) {
		span, line := text[m[2]:m[3]], strings.Count(text[:m[0]], "\n")+1
		switch {
		case strings.Contains(span, "\n"):
			out = append(out, fmt.Sprintf("%d: code span over several lines: %.60q", line, span))
		case goDeclaration.MatchString(span):
			out = append(out, fmt.Sprintf("%d: code span holds a Go declaration: %q", line, span))
		case command.MatchString(span):
			if err := shSyntax(span); err != nil {
				out = append(out, fmt.Sprintf("%d: command %q: %v", line, span, err))
			}
		}
	}
	for i, l := range prose {
		if goDeclaration.MatchString(inlineCode.ReplaceAllString(l, "")) {
			out = append(out, fmt.Sprintf("%d: prose holds Go: %q", i+1, l))
		}
	}
	return out
}

// parseGo parses code as a Go file's declarations, or else as statements.
func parseGo(code string) error {
	fset := token.NewFileSet()
	if _, err := parser.ParseFile(fset, "", "package p\n"+code, 0); err == nil {
		return nil
	}
	_, err := parser.ParseFile(fset, "", "package p\nfunc _() {\n"+code+"\n}", 0)
	return err
}

// shSyntax runs sh -n on code: a syntax check that runs nothing.
func shSyntax(code string) error {
	out, err := exec.Command("sh", "-n", "-c", code).CombinedOutput()
	if err != nil {
		return fmt.Errorf("sh -n: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// pySyntax reports whether code parses as Python.
func pySyntax(code string) error {
	cmd := exec.Command("python3", "-c", "import ast, sys; ast.parse(sys.stdin.read())")
	cmd.Stdin = strings.NewReader(code)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("python3: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// corestateCommands returns corestate's commands, from its usage.
func corestateCommands(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "cmd", "corestate", "doc.go"))
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, m := range regexp.MustCompile(`(?m)^//\tcorestate (\w+)`).FindAllStringSubmatch(string(src), -1) {
		cmds = append(cmds, m[1])
	}
	if len(cmds) < 7 {
		t.Fatalf("found corestate commands %q in its doc", cmds)
	}
	return cmds
}

// apiDirs are the packages whose names the guides may use, by the names
// the guides give them (MIGRATION.md imports status as statefile, fs as
// corefs and core as agentcore).
var apiDirs = map[string]string{
	"fs": "fs", "corefs": "fs", "status": "status", "statefile": "status", "config": "config",
	"logger": "logger", "core": "core", "agentcore": "core", "etcdstore": "status/etcdstore",
	"storetest": "status/storetest",
}

// framework are names of the services' own framework (module dappco.re/go,
// imported as core, and its file-system wrapper, declared as fs), which
// the guide names when it shows code as the services write it today.
var framework = []string{
	"core.Result", "core.Ok", "core.Fs", "core.JSONUnmarshalString", "core.JSONMarshalString",
	"core.Path", "core.JoinPath", "core.E", "core.Concat", "core.SetDefault", "core.Info", "fs.Exists", "fs.Read",
}

var (
	// qualified is pkg.Name or pkg.Type.Member.
	qualified = regexp.MustCompile(`\b([a-z]\w*)\.([A-Z]\w*)(?:\.([A-Z]\w*))?`)
	// typeMember is Type.Member, Type[T].Member, pkg.Type.Member or
	// (*pkg.Type).Member.
	typeMember = regexp.MustCompile(`(?:\(\*?)?(?:\b([a-z]\w*)\.)?\b([A-Z]\w*)(?:\[\w+\])?\)?\.([A-Z]\w*)`)
)

// TestGuidesNameOnlyWhatExists checks every identifier of this module that
// the code spans and the Go and shell blocks of MIGRATION.md and README.md
// name (status.Mutate, statefile.Load, Store.LoadExisting,
// (*fs.Fs).WriteAtomic) against the exported API of the module's packages:
// functions, types, variables and constants, and the methods and fields of
// types. (MIGRATION.md once told readers to call statefile.Read, which does
// not exist.)
func TestGuidesNameOnlyWhatExists(t *testing.T) {
	api := exportedAPI(t)
	eachGuide(t, func(name, doc string) {
		for _, problem := range unknownNames(doc, api) {
			t.Errorf("%s: %s", name, problem)
		}
	})
	// CONTROL: names that do not exist are found.
	bad := "Use `statefile.Read` and `Store.Frobnicate`.\n\n```go\nx := status.Nope()\n```\n"
	if got := unknownNames(bad, api); len(got) != 3 {
		t.Errorf("CONTROL: found %q, want statefile.Read, Store.Frobnicate and status.Nope", got)
	}
}

// unknownNames returns the module's identifiers that doc names and the API
// lacks.
func unknownNames(doc string, api map[string]bool) []string {
	blocks, prose := markdown(doc)
	var texts []string
	for _, m := range inlineCode.FindAllStringSubmatch(strings.Join(prose, "\n"), -1) {
		texts = append(texts, m[1])
	}
	for _, b := range blocks {
		if b.lang == "go" || b.lang == "sh" {
			texts = append(texts, b.code)
		}
	}
	var out []string
	report := func(name string) {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	for _, text := range texts {
		for _, m := range qualified.FindAllStringSubmatch(text, -1) {
			dir, ours := apiDirs[m[1]]
			if !ours {
				continue // a variable, or another package
			}
			pkg := filepath.Base(dir)
			name := pkg + "." + m[2]
			switch {
			case api[name] && (m[3] == "" || api[m[2]+"."+m[3]] || !api["type "+name]):
			case slices.Contains(framework, m[1]+"."+m[2]):
			default:
				report(m[0])
			}
		}
		for _, m := range typeMember.FindAllStringSubmatch(text, -1) {
			typ := "type " + m[2]
			if m[1] != "" {
				dir, ours := apiDirs[m[1]]
				if !ours {
					continue // another package's type
				}
				typ = "type " + filepath.Base(dir) + "." + m[2]
			}
			if api[typ] && !api[m[2]+"."+m[3]] {
				report(m[2] + "." + m[3])
			}
		}
	}
	return out
}

// exportedAPI returns the exported names of the module's packages: "pkg.Name"
// for each function, type, variable and constant, "type pkg.Name" and
// "type Name" for each type, and "Type.Member" for each method and field
// (embedded types' members included, as Go promotes them).
func exportedAPI(t *testing.T) map[string]bool {
	t.Helper()
	api := map[string]bool{}
	embeds := map[string][]string{} // type -> embedded type names
	seen := map[string]bool{}
	for _, dir := range apiDirs {
		if seen[dir] {
			continue
		}
		seen[dir] = true
		pkg := filepath.Base(dir)
		files, err := filepath.Glob(filepath.Join("..", "..", dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in %s: %v", dir, err)
		}
		fset := token.NewFileSet()
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(fset, f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, decl := range file.Decls {
				switch d := decl.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil {
						api[pkg+"."+d.Name.Name] = true
					} else {
						api[recvName(d.Recv.List[0].Type)+"."+d.Name.Name] = true
					}
				case *ast.GenDecl:
					for _, spec := range d.Specs {
						switch s := spec.(type) {
						case *ast.ValueSpec:
							for _, n := range s.Names {
								api[pkg+"."+n.Name] = true
							}
						case *ast.TypeSpec:
							name := s.Name.Name
							api[pkg+"."+name], api["type "+pkg+"."+name], api["type "+name] = true, true, true
							members(s.Type, name, api, embeds)
						}
					}
				}
			}
		}
	}
	// Promote the members of embedded types, a few levels deep.
	for range 3 {
		for typ, embedded := range embeds {
			for _, e := range embedded {
				for k := range api {
					if member, ok := strings.CutPrefix(k, e+"."); ok {
						api[typ+"."+member] = true
					}
				}
			}
		}
	}
	return api
}

// members records the fields and interface methods of a type expression.
func members(expr ast.Expr, typ string, api map[string]bool, embeds map[string][]string) {
	var list *ast.FieldList
	switch x := expr.(type) {
	case *ast.StructType:
		list = x.Fields
	case *ast.InterfaceType:
		list = x.Methods
	default:
		return
	}
	for _, f := range list.List {
		if len(f.Names) == 0 {
			name := recvName(f.Type)
			api[typ+"."+name] = true
			embeds[typ] = append(embeds[typ], name)
		}
		for _, n := range f.Names {
			api[typ+"."+n.Name] = true
		}
	}
}

// recvName is the type name of a receiver or embedded field: T, *T, T[X],
// pkg.T.
func recvName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return recvName(x.X)
	case *ast.IndexExpr:
		return recvName(x.X)
	case *ast.IndexListExpr:
		return recvName(x.X)
	case *ast.SelectorExpr:
		return x.Sel.Name
	case *ast.Ident:
		return x.Name
	}
	return ""
}

// TestSurprisingNamesSayItFirst: the names a new user misread say what
// they are in the first sentence of their doc, where go doc and editors
// show it.
func TestSurprisingNamesSayItFirst(t *testing.T) {
	for _, tc := range []struct {
		dir, name string // name: Func, Type or Type.Method
		says      []string
	}{
		{"status", "Status", []string{`State field is the JSON member "status"`}},
		{"status", "Transition", []string{"(the function)", "method Status.Transition"}},
		{"status", "Status.Transition", []string{"(the method; the function Transition"}},
		{"status", "List", []string{"decoded as a Status only", "NewDir[T]"}},
		{"core", "Core.Status", []string{"Store (not a Status value"}},
	} {
		first := firstSentence(t, tc.dir, tc.name)
		for _, s := range tc.says {
			if !strings.Contains(first, s) {
				t.Errorf("%s.%s: the first sentence of its doc does not say %q:\n%s", tc.dir, tc.name, s, first)
			}
		}
	}
}

// firstSentence returns the first sentence of the doc of name in the
// package in ../../dir.
func firstSentence(t *testing.T, dir, name string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("..", "..", dir, "*.go"))
	fset := token.NewFileSet()
	var parsed []*ast.File
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, file)
	}
	p, err := doc.NewFromFiles(fset, parsed, "github.com/agentstate/core/"+dir)
	if err != nil {
		t.Fatal(err)
	}
	typ, method, _ := strings.Cut(name, ".")
	text := ""
	for _, f := range p.Funcs {
		if f.Name == name {
			text = f.Doc
		}
	}
	for _, ty := range p.Types {
		if ty.Name != typ {
			continue
		}
		if method == "" {
			text = ty.Doc
		}
		for _, m := range ty.Methods {
			if m.Name == method {
				text = m.Doc
			}
		}
	}
	if text == "" {
		t.Fatalf("no doc for %s in %s", name, dir)
	}
	return p.Synopsis(text)
}
