// Package linttest runs an analyzer over GOPATH-style test data and checks
// its findings and facts against "// want" comments, like
// golang.org/x/tools/go/analysis/analysistest, from which it differs in one
// way: only the packages of the test data are type-checked from source; the
// standard library comes from compiled export data.
//
// analysistest type-checks every dependency from source, because an
// analyzer with facts might need them. For statuslint that meant the
// standard library closure of os, encoding/json and os/exec on every run,
// which under the race detector was most of the test's minute. statuslint
// computes no facts for the standard library (it knows the file APIs it
// needs by name), so nothing is lost: the packages under dir/src, test data
// and stubs alike, are analysed from source in dependency order, and facts
// flow between them through the checker as they do in a real run.
//
// The comment syntax is analysistest's: on the line of a finding,
// // want "regexp" (or `regexp`), one per finding; on the line that
// declares an object with a fact, // want Name:"regexp", matched against
// the fact's String method. A finding or a fact without a matching want, or
// a want without a finding or fact, fails the test.
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

// Run analyses every package under dir/src and checks the findings and
// facts of the packages named by pkgs (import paths) against their want
// comments. Packages not named (stubs of other modules, helpers) are
// analysed for their facts only.
func Run(t testing.TB, dir string, a *analysis.Analyzer, pkgs ...string) {
	t.Helper()
	roots, err := load(dir)
	if err != nil {
		t.Fatal(err)
	}
	graph, err := checker.Analyze([]*analysis.Analyzer{a}, roots, nil)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, act := range graph.Roots {
		if act.Err != nil {
			t.Errorf("analysing %s: %v", act.Package.PkgPath, act.Err)
			continue
		}
		if slices.Contains(pkgs, act.Package.PkgPath) {
			check(t, act)
			checked++
		}
	}
	if checked != len(pkgs) {
		t.Errorf("checked %d of the packages %v: some are not under %s", checked, pkgs, dir)
	}
}

// load type-checks the packages under dir/src from source, their other
// imports from export data, and cuts the import graph down to those
// packages so that the checker analyses them alone.
func load(dir string) ([]*packages.Package, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	var paths []string
	src := filepath.Join(dir, "src")
	err = filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		rel, err := filepath.Rel(src, filepath.Dir(p))
		if err == nil && !slices.Contains(paths, filepath.ToSlash(rel)) {
			paths = append(paths, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles |
			packages.NeedImports | packages.NeedTypes | packages.NeedTypesSizes |
			packages.NeedSyntax | packages.NeedTypesInfo,
		Dir: dir,
		Env: append(os.Environ(), "GOPATH="+dir, "GO111MODULE=off", "GOWORK=off", "GOFLAGS="),
	}
	pkgs, err := packages.Load(cfg, paths...)
	if err != nil {
		return nil, err
	}
	loaded := make(map[*packages.Package]bool)
	for _, p := range pkgs {
		if len(p.Errors) > 0 {
			return nil, fmt.Errorf("loading %s: %v", p.PkgPath, p.Errors)
		}
		loaded[p] = true
	}
	for _, p := range pkgs {
		for path, imp := range p.Imports {
			if !loaded[imp] {
				delete(p.Imports, path)
			}
		}
	}
	return pkgs, nil
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
		if f.Object.Pkg() == pkg.Types {
			match(pkg.Fset.Position(f.Object.Pos()), f.Object.Name(), "fact of "+f.Object.Name(), fmt.Sprint(f.Fact))
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
