// Package linttest runs an analyzer over GOPATH-style test data and checks
// its findings and facts against "// want" comments, like
// golang.org/x/tools/go/analysis/analysistest, from which it differs in one
// way: only the test data is type-checked from source; the standard library
// comes from compiled export data.
//
// analysistest type-checks every dependency from source, because an
// analyzer with facts might need them. For an analyzer that, like
// statuslint, computes no facts for the standard library (it knows the file
// APIs it needs by name), that is most of the cost of a test and brings
// nothing: here the named packages and the test-data packages they import
// are analysed from source in dependency order, and facts flow between them
// through the checker as in a real run.
//
// The comment syntax is analysistest's: on the line of a finding,
// // want "regexp" (or `regexp`), one per finding; on the line that
// declares an object with a fact, // want Name:"regexp", matched against
// the fact's String method. A finding without a matching want, a fact of an
// object that has a fact want without a matching one, or a want without a
// finding or fact, fails the test. (Facts of objects without fact wants are
// not checked: an analyzer may record facts of every helper.)
package linttest

import (
	"fmt"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/scanner"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"
)

// Run analyses the packages named by pkgs (import paths) and their
// dependencies outside the standard library, all found in the GOPATH-style
// tree gopath (a directory with a src subdirectory, or a list of them
// separated by os.PathListSeparator), and checks the findings and facts of
// the named packages against their want comments. The other packages
// (stubs of other modules, helpers) are analysed for their facts only.
// It returns the findings in the named packages.
func Run(t testing.TB, gopath string, a *analysis.Analyzer, pkgs ...string) []Finding {
	t.Helper()
	roots, err := loadGOPATH(gopath, pkgs)
	if err != nil {
		t.Fatal(err)
	}
	return analyse(t, a, roots, pkgs)
}

// RunModule is Run for packages of the module in directory dir: they and
// their dependencies outside the standard library (modules the go command
// downloads) are analysed from source.
func RunModule(t testing.TB, dir string, a *analysis.Analyzer, pkgs ...string) []Finding {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	roots, err := load(abs, env, func(p *packages.Package) bool { return p.Module != nil }, pkgs)
	if err != nil {
		t.Fatal(err)
	}
	return analyse(t, a, roots, pkgs)
}

func analyse(t testing.TB, a *analysis.Analyzer, roots []*packages.Package, pkgs []string) []Finding {
	t.Helper()
	graph, err := checker.Analyze([]*analysis.Analyzer{a}, roots, nil)
	if err != nil {
		t.Fatal(err)
	}
	var findings []Finding
	checked := 0
	for _, act := range graph.Roots {
		if act.Err != nil {
			t.Errorf("analysing %s: %v", act.Package.PkgPath, act.Err)
			continue
		}
		if slices.Contains(pkgs, act.Package.PkgPath) {
			check(t, act)
			checked++
			for _, d := range act.Diagnostics {
				findings = append(findings, Finding{act.Package.Fset.Position(d.Pos), d.Message})
			}
		}
	}
	if checked != len(pkgs) {
		t.Errorf("checked %d of the packages %v", checked, pkgs)
	}
	return findings
}

// A Finding is a diagnostic of the analyzer.
type Finding struct {
	Pos     token.Position
	Message string
}

// loadGOPATH loads pkgs and their dependencies in gopath from source.
func loadGOPATH(gopath string, pkgs []string) ([]*packages.Package, error) {
	var dirs []string
	for _, d := range filepath.SplitList(gopath) {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, err
		}
		dirs = append(dirs, abs)
	}
	env := append(os.Environ(), "GOPATH="+strings.Join(dirs, string(os.PathListSeparator)),
		"GO111MODULE=off", "GOWORK=off", "GOFLAGS=")
	return load(dirs[0], env, func(p *packages.Package) bool {
		return len(p.GoFiles) > 0 && inside(p.GoFiles[0], dirs)
	}, pkgs)
}

// load type-checks pkgs and the dependencies that fromSource selects from
// source, the other imports from export data, and cuts the import graph
// down to the packages from source so that the checker analyses them alone.
func load(dir string, env []string, fromSource func(*packages.Package) bool, pkgs []string) ([]*packages.Package, error) {
	// Which packages come from source: the named ones and what they import
	// that fromSource selects, directly or not (go list, no type-checking).
	deps, err := packages.Load(&packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedImports | packages.NeedDeps | packages.NeedModule,
		Dir:  dir,
		Env:  env,
	}, pkgs...)
	if err != nil {
		return nil, err
	}
	var paths []string
	packages.Visit(deps, nil, func(p *packages.Package) {
		if fromSource(p) {
			paths = append(paths, p.PkgPath)
		}
	})

	loaded, err := packages.Load(&packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles |
			packages.NeedImports | packages.NeedTypes | packages.NeedTypesSizes |
			packages.NeedSyntax | packages.NeedTypesInfo,
		Dir: dir,
		Env: env,
	}, paths...)
	if err != nil {
		return nil, err
	}
	source := make(map[*packages.Package]bool)
	for _, p := range loaded {
		if len(p.Errors) > 0 {
			return nil, fmt.Errorf("loading %s: %v", p.PkgPath, p.Errors)
		}
		source[p] = true
	}
	for _, p := range loaded {
		for path, imp := range p.Imports {
			if !source[imp] {
				delete(p.Imports, path)
			}
		}
	}
	return loaded, nil
}

func inside(file string, dirs []string) bool {
	for _, d := range dirs {
		if strings.HasPrefix(file, d+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

type key struct {
	file string
	line int
}

type expectation struct {
	name string // "" for a finding, else the object that has the fact
	rx   *regexp.Regexp
}

// check compares one package's findings and facts with its want comments.
func check(t testing.TB, act *checker.Action) {
	t.Helper()
	pkg := act.Package
	want := make(map[key][]expectation)
	for _, f := range pkg.Syntax {
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				text := strings.TrimPrefix(c.Text, "//")
				if i := strings.Index(text, "// want"); i >= 0 {
					text = text[i+len("// "):]
				}
				rest, ok := strings.CutPrefix(strings.TrimSpace(text), "want")
				if !ok {
					continue
				}
				p := pkg.Fset.Position(c.Pos())
				exps, err := parse(rest)
				if err != nil {
					t.Errorf("%s: bad want comment: %v", p, err)
				}
				k := key{p.Filename, p.Line}
				want[k] = append(want[k], exps...)
			}
		}
	}

	match := func(p token.Position, name, what, msg string) {
		k := key{p.Filename, p.Line}
		for i, e := range want[k] {
			if e.name == name && e.rx.MatchString(msg) {
				want[k] = slices.Delete(want[k], i, i+1)
				return
			}
		}
		t.Errorf("%s: unexpected %s: %s", p, what, msg)
	}
	for _, d := range act.Diagnostics {
		match(pkg.Fset.Position(d.Pos), "", "finding", d.Message)
	}
	for _, f := range act.AllObjectFacts() {
		if f.Object.Pkg() != pkg.Types {
			continue
		}
		p := pkg.Fset.Position(f.Object.Pos())
		if slices.ContainsFunc(want[key{p.Filename, p.Line}], func(e expectation) bool { return e.name == f.Object.Name() }) {
			match(p, f.Object.Name(), "fact of "+f.Object.Name(), fmt.Sprint(f.Fact))
		}
	}
	var surplus []string
	for k, exps := range want {
		for _, e := range exps {
			what := "finding"
			if e.name != "" {
				what = "fact of " + e.name
			}
			surplus = append(surplus, fmt.Sprintf("%s:%d: no %s matching %#q", k.file, k.line, what, e.rx))
		}
	}
	slices.Sort(surplus)
	for _, s := range surplus {
		t.Error(s)
	}
}

// parse reads the expectations of one want comment: a list of "regexp"
// (findings) and Name:"regexp" (facts), with Go string quoting.
func parse(text string) ([]expectation, error) {
	var sc scanner.Scanner
	sc.Init(strings.NewReader(text))
	sc.Mode = scanner.ScanIdents | scanner.ScanStrings | scanner.ScanRawStrings
	var scanErr error
	sc.Error = func(_ *scanner.Scanner, msg string) { scanErr = fmt.Errorf("%s", msg) }
	var out []expectation
	name := ""
	for tok := sc.Scan(); tok != scanner.EOF; tok = sc.Scan() {
		switch tok {
		case scanner.Ident:
			name = sc.TokenText()
			if sc.Scan() != ':' {
				return nil, fmt.Errorf("want %s:\"regexp\"", name)
			}
		case scanner.String, scanner.RawString:
			s, err := strconv.Unquote(sc.TokenText())
			if err != nil {
				return nil, err
			}
			rx, err := regexp.Compile(s)
			if err != nil {
				return nil, err
			}
			out = append(out, expectation{name, rx})
			name = ""
		default:
			return nil, fmt.Errorf("unexpected %s", scanner.TokenString(tok))
		}
	}
	return out, scanErr
}

// A Recorder is a testing.TB that collects the errors reported to it
// instead of failing, for tests that check that Run reports a mismatch.
// Everything else (Fatal, TempDir, Log...) goes to the TB it wraps.
type Recorder struct {
	testing.TB
	Errs []string
}

func (r *Recorder) Error(args ...any) { r.Errs = append(r.Errs, fmt.Sprint(args...)) }

func (r *Recorder) Errorf(format string, args ...any) {
	r.Errs = append(r.Errs, fmt.Sprintf(format, args...))
}

func (r *Recorder) Helper() {}
