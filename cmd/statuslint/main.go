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
// Both report the same. Alone, it holds every package of the build, its
// dependencies' included, in memory at once; go vet analyses one package
// per process. On a large dependency graph use go vet: on kubectx, which
// imports the Kubernetes client, the standalone command peaked at about 4 GB,
// go vet's largest process at 0.38 GB.
//
// Exit status: 0 when there is nothing to report, 3 when something is
// reported, 1 when the packages cannot be loaded or analysed. With -json
// the findings are printed as JSON on standard output and the exit status
// is the same (other go/analysis commands exit 0 with -json; this one
// fails a CI step that reports something); -json combines with -test and
// the analyzer's flags only.
//
// See package github.com/agentstate/core/cmd/statuslint/statuslint for what
// it reports and for its -readers and -writers flags.
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
	if jsonRequested(os.Args[1:]) {
		os.Exit(runJSON(os.Args[1:]))
	}
	singlechecker.Main(statuslint.Analyzer)
}

// jsonRequested reports whether the command line asks for JSON output from
// the standalone command (not from go vet, which passes a .cfg file and
// prints JSON itself).
func jsonRequested(args []string) bool {
	if len(args) > 0 && strings.HasSuffix(args[len(args)-1], ".cfg") {
		return false
	}
	for _, a := range args {
		switch a {
		case "-json", "--json", "-json=true", "--json=true":
			return true
		case "--":
			return false
		}
	}
	return false
}

// runJSON loads and analyses the packages like the standalone command does,
// prints the findings as JSON, and returns the exit status.
func runJSON(args []string) int {
	flags := flag.NewFlagSet("statuslint", flag.ContinueOnError)
	flags.Bool("json", true, "print findings as JSON")
	test := flags.Bool("test", true, "analyze test files too")
	statuslint.Analyzer.Flags.VisitAll(func(f *flag.Flag) { flags.Var(f.Value, f.Name, f.Usage) })
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if flags.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: statuslint -json [-test=false] [-readers=...] [-writers=...] packages...")
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
	if err := graph.PrintJSON(os.Stdout); err != nil {
		return 1
	}
	for act := range graph.All() {
		switch {
		case act.Err != nil:
			code = 1
		case act.IsRoot && len(act.Diagnostics) > 0 && code == 0:
			code = 3
		}
	}
	return code
}
