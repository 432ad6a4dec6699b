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
// status. With -json the findings are printed as JSON on standard output
// and the exit status is the same (other go/analysis commands exit 0 with
// -json; this one fails a CI step that reports something).
//
// Alone, after the findings, it lists what it did not follow across the
// program, where a finding may be missing: a call through an interface
// implemented, with file access, in a package the caller does not import;
// a call of a function value whose functions it cannot see; a file read in
// one package and written in another that does not import it; helpers
// that did not settle. The list changes no exit status; with -json it is
// one more JSON object, {"unfollowed": [lines]}. go vet's protocol carries
// findings only, so under go vet nothing is listed; its -unfollowed flag
// reports each such place as a finding instead.
//
// See package github.com/agentstate/core/cmd/statuslint/statuslint for what
// it reports and for its -readers, -writers and -lockers flags.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/analysis/singlechecker"
	"golang.org/x/tools/go/packages"

	"github.com/agentstate/core/cmd/statuslint/statuslint"
)

func main() {
	if vetProtocol(os.Args[1:]) {
		singlechecker.Main(statuslint.Analyzer)
		return
	}
	os.Exit(standalone(os.Args[1:]))
}

// vetProtocol reports whether the command line is go vet's (a .cfg file,
// or the -V=full and -flags questions it asks a tool) or asks for help:
// singlechecker answers those.
func vetProtocol(args []string) bool {
	if len(args) > 0 && strings.HasSuffix(args[len(args)-1], ".cfg") {
		return true
	}
	if len(args) > 0 && args[0] == "help" {
		return true
	}
	for _, a := range args {
		switch strings.TrimLeft(a, "-") {
		case "V", "V=full", "flags", "h", "help":
			return true
		}
		if a == "--" {
			break
		}
	}
	return false
}

// standalone loads and analyses the packages, prints the findings (as
// JSON with -json) and what was not followed, and returns the exit status.
// With -fix it changes nothing: no finding has a rewrite that is right in
// every program (the document's type, codec and error handling are the
// program's), so it says so and fails when there are findings, rather
// than exit 0 as if it had fixed them.
func standalone(args []string) int {
	flags := flag.NewFlagSet("statuslint", flag.ContinueOnError)
	asJSON := flags.Bool("json", false, "print findings as JSON on standard output")
	fix := flags.Bool("fix", false, "apply suggested fixes (statuslint suggests none: it reports the findings and fails)")
	test := flags.Bool("test", true, "analyze test files too")
	context := flags.Int("c", -1, "print this many lines of source around each finding")
	cpuprofile := flags.String("cpuprofile", "", "write a CPU profile to this file")
	memprofile := flags.String("memprofile", "", "write a memory profile to this file")
	statuslint.Analyzer.Flags.VisitAll(func(f *flag.Flag) { flags.Var(f.Value, f.Name, f.Usage) })
	flags.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: statuslint [flags] packages...\n\n%s\n\nFlags:\n", statuslint.Analyzer.Doc)
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if flags.NArg() == 0 {
		flags.Usage()
		return 1
	}
	if *cpuprofile != "" {
		stop, err := startCPUProfile(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "statuslint:", err)
			return 1
		}
		defer stop()
	}
	if *memprofile != "" {
		defer writeMemProfile(*memprofile)
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
	unfollowed := statuslint.Unfollowed(graph)
	if *asJSON {
		if graph.PrintJSON(os.Stdout) != nil || printUnfollowedJSON(os.Stdout, unfollowed) != nil {
			return 1
		}
	} else if err := graph.PrintText(os.Stderr, *context); err != nil {
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
	if *fix && len(findings) > 0 {
		fmt.Fprintf(os.Stderr, "statuslint: -fix changed nothing: %d findings have no automatic fix; "+
			"rewrite each with the call its message names (docs/MIGRATION.md shows each rewrite)\n", len(findings))
	}
	if !*asJSON {
		printUnfollowed(os.Stderr, unfollowed)
	}
	return code
}

// printUnfollowed prints what the analysis did not follow, after the
// findings: information, which changes no exit status.
func printUnfollowed(w io.Writer, lines []string) {
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w, "statuslint: not followed, so a finding may be missing there (-unfollowed reports each place):")
	for _, l := range lines {
		fmt.Fprintln(w, "statuslint:   "+l)
	}
}

// printUnfollowedJSON prints what the analysis did not follow as one more
// JSON object after the findings' ({"unfollowed": [lines]}), when there is
// any.
func printUnfollowedJSON(w io.Writer, lines []string) error {
	if len(lines) == 0 {
		return nil
	}
	b, err := json.MarshalIndent(map[string][]string{"unfollowed": lines}, "", "\t")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

func writeMemProfile(path string) {
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "statuslint:", err)
		return
	}
	defer f.Close()
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "statuslint:", err)
	}
}
