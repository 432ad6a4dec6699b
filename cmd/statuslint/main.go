// Command statuslint reports bare read-modify-write cycles and in-place
// writes of JSON state files such as an agent workspace's status.json.
//
// Run it alone:
//
//	statuslint ./...
//
// or through go vet:
//
//	go vet -vettool=$(command -v statuslint) ./...
//
// Both report the same. Alone, -fix is accepted (and changes nothing, see
// below); go vet has no -fix. Alone, it holds every package of the build, its
// dependencies' included, in memory at once; go vet analyses one package
// per process. On a large dependency graph use go vet: on kubectx, which
// imports the Kubernetes client, the standalone command peaked at about 4 GB,
// go vet's largest process at 0.38 GB.
//
// Exit status: 0 when there is nothing to report, 3 when something is
// reported, 1 when the packages cannot be loaded or analysed. -fix changes
// nothing: no finding has a rewrite that is right in every program (the
// document's type, codec and error handling are the program's), so -fix
// prints the findings and says that none was fixed, with the same exit
// status. With -json
// the findings are printed as JSON on standard output and the exit status
// is the same (other go/analysis commands exit 0 with -json; this one
// fails a CI step that reports something); -json combines with -test and
// the analyzer's flags only.
//
// See package github.com/agentstate/core/cmd/statuslint/statuslint for what
// it reports and for its -readers, -writers and -lockers flags.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/analysis/singlechecker"
	"golang.org/x/tools/go/packages"

	"github.com/agentstate/core/cmd/statuslint/statuslint"
)

func main() {
	switch requested(os.Args[1:]) {
	case "json":
		os.Exit(analyse(os.Args[1:], true))
	case "fix":
		os.Exit(analyse(os.Args[1:], false))
	}
	singlechecker.Main(statuslint.Analyzer)
}

// requested reports whether the command line asks the standalone command
// (not go vet, which passes a .cfg file and prints JSON itself) for JSON
// output or for fixes.
func requested(args []string) string {
	if len(args) > 0 && strings.HasSuffix(args[len(args)-1], ".cfg") {
		return ""
	}
	for _, a := range args {
		switch a {
		case "-json", "--json", "-json=true", "--json=true":
			return "json"
		case "-fix", "--fix", "-fix=true", "--fix=true":
			return "fix"
		case "--":
			return ""
		}
	}
	return ""
}

// analyse loads and analyses the packages like the standalone command does,
// prints the findings (as JSON with asJSON), and returns the exit status.
// Without asJSON it is -fix: no finding has a rewrite that is right in
// every program (the document's type, codec and error handling are the
// program's), so it changes nothing, says so and fails when there are
// findings, rather than exit 0 as if it had fixed them.
func analyse(args []string, asJSON bool) int {
	flags := flag.NewFlagSet("statuslint", flag.ContinueOnError)
	flags.Bool("json", asJSON, "print findings as JSON")
	flags.Bool("fix", !asJSON, "apply suggested fixes (statuslint suggests none: it reports the findings and fails)")
	test := flags.Bool("test", true, "analyze test files too")
	statuslint.Analyzer.Flags.VisitAll(func(f *flag.Flag) { flags.Var(f.Value, f.Name, f.Usage) })
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if flags.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: statuslint -json|-fix [-test=false] [-readers=...] [-writers=...] [-lockers=...] packages...")
		return 1
	}
	cfg := &packages.Config{Mode: packages.LoadAllSyntax | packages.NeedModule, Tests: *test}
	pkgs, err := packages.Load(cfg, flags.Args()...)
	if err == nil && len(pkgs) == 0 {
		err = fmt.Errorf("%s matched no packages", strings.Join(flags.Args(), " "))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "statuslint:", err)
		return 1
	}
	code := 0
	if packages.PrintErrors(pkgs) > 0 {
		code = 1
	}
	graph, err := checker.Analyze([]*analysis.Analyzer{statuslint.Analyzer}, pkgs, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "statuslint:", err)
		return 1
	}
	if asJSON {
		if err := graph.PrintJSON(os.Stdout); err != nil {
			return 1
		}
	} else if err := graph.PrintText(os.Stderr, -1); err != nil {
		return 1
	}
	findings := make(map[string]bool) // a package and its test variant report the same
	for act := range graph.All() {
		switch {
		case act.Err != nil:
			code = 1
		case act.IsRoot && len(act.Diagnostics) > 0:
			for _, d := range act.Diagnostics {
				findings[fmt.Sprint(act.Package.Fset.Position(d.Pos), d.Message)] = true
			}
			if code == 0 {
				code = 3
			}
		}
	}
	if !asJSON && len(findings) > 0 {
		fmt.Fprintf(os.Stderr, "statuslint: -fix changed nothing: %d findings have no automatic fix; "+
			"rewrite each with the call its message names (docs/MIGRATION.md shows each rewrite)\n", len(findings))
	}
	return code
}
