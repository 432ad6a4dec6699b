//go:build linux

// Command timings measures where the time of a build and test run goes:
// the CPU time (user + system) and the wall time of every compile, link,
// vet and test binary the go command runs, by package and by module.
//
// Given an absolute path as its first argument, timings runs that command
// and appends one line about it to the file named by $TIMINGS_LOG. That is
// how the go command calls it as the -toolexec program (compile, asm, link,
// vet, cgo) and as go test's -exec program (the test binaries):
//
//	GOFLAGS="-toolexec=$PWD/.bin/timings -exec=$PWD/.bin/timings" TIMINGS_LOG=$PWD/.bin/t.log make test
//
// Every go command that inherits that environment is measured, those run
// by tests included. .ci/timings runs each step of make test that way, on
// an empty build cache and again on the warm one, and prints the reports.
//
//	timings report [-top N] FILE...
//
// prints, from the logs among FILEs, the CPU and wall time by tool; the compile CPU by build
// configuration (GOOS/GOARCH, -race) and by module, which is what an empty
// build cache costs; per package of the measured modules, the compile CPU
// of its test build, its vet and its test binary's run; and, from the go
// test -json streams among FILEs (make test keeps its own in
// .bin/unit.json), the N slowest tests.
//
// The CPU time of a command includes that of the children it waited for
// (the processes a test starts). On a loaded machine the wall times vary;
// the CPU times much less.
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

func main() {
	if len(os.Args) > 1 && filepath.IsAbs(os.Args[1]) {
		os.Exit(wrap(os.Args[1:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "report" {
		os.Exit(report(os.Args[2:], os.Stdout, os.Stderr))
	}
	fmt.Fprintln(os.Stderr, "usage: timings /abs/path/to/command [args] (as -toolexec or -exec, with TIMINGS_LOG set)\n       timings report [-top N] FILE...")
	os.Exit(2)
}

// record is one line of the log: one tool or test binary run.
type record struct {
	Kind   string  // compile, link, vet, asm, cgo, ... or test (a test binary), run (go run's program)
	Pkg    string  // the import path (for a test binary, derived from its directory)
	Module string  // std, module@version, or the import path of a local package's module
	Config string  // GOOS/GOARCH, with " race" under -race
	Start  float64 // Unix time, seconds
	Wall   float64 // seconds
	CPU    float64 // user + system seconds, children included
}

// wrap runs args and logs it; it exits with the command's status.
func wrap(args []string) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// The go command stops a test binary that overruns its -timeout with
	// SIGQUIT, then SIGKILL: the child follows us in both cases.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	runtime.LockOSThread() // Pdeathsig fires when the thread that started the child exits
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT, syscall.SIGHUP)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "timings:", err)
		return 127
	}
	go func() {
		for s := range sigs {
			cmd.Process.Signal(s)
		}
	}()
	cmd.Wait() // its error is the exit status, passed on below
	wall := time.Since(start)
	signal.Stop(sigs)
	close(sigs)
	if log := os.Getenv("TIMINGS_LOG"); log != "" && !slices.Contains(args, "-V=full") {
		r := describe(args)
		r.Start = float64(start.UnixNano()) / 1e9
		r.Wall = wall.Seconds()
		r.CPU = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
		appendRecord(log, r)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()) // as a shell reports it
	}
	return cmd.ProcessState.ExitCode()
}

// appendRecord appends r as one line with one write, so that the go
// command's parallel tools do not interleave their lines.
func appendRecord(path string, r record) {
	data, _ := json.Marshal(r)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "timings:", err)
		return
	}
	f.Write(append(data, '\n'))
	f.Close()
}

// describe says what args run: the tool, the package and its module.
func describe(args []string) record {
	goos, goarch := cmp.Or(os.Getenv("GOOS"), runtime.GOOS), cmp.Or(os.Getenv("GOARCH"), runtime.GOARCH)
	r := record{Kind: strings.TrimSuffix(filepath.Base(args[0]), ".exe"), Config: goos + "/" + goarch}
	if slices.Contains(args, "-race") {
		r.Config += " race"
	}
	r.Pkg = os.Getenv("TOOLEXEC_IMPORTPATH") // set for tools run through -toolexec
	switch {
	case strings.HasSuffix(r.Kind, ".test"):
		r.Kind = "test"
		wd, _ := os.Getwd() // go test runs a test binary in its package's directory
		r.Pkg, r.Module = localPackage(wd)
	case r.Pkg == "":
		r.Kind = "run"
		r.Pkg = filepath.Base(args[0])
	default:
		r.Module = moduleOf(args)
	}
	return r
}

// moduleOf finds the module of a compile from the paths of its source
// files: the standard library, a module in the module cache, or a local
// module.
func moduleOf(args []string) string {
	goroot := runtime.GOROOT()
	for _, a := range args {
		if !strings.HasSuffix(a, ".go") && !strings.HasSuffix(a, ".s") || !filepath.IsAbs(a) {
			continue
		}
		if goroot != "" && strings.HasPrefix(a, goroot+"/src/") {
			return "std"
		}
		if i := strings.Index(a, "/pkg/mod/"); i >= 0 {
			rest := a[i+len("/pkg/mod/"):]
			if j := strings.Index(rest, "@"); j >= 0 {
				if k := strings.Index(rest[j:], "/"); k >= 0 {
					return rest[:j+k]
				}
			}
		}
		_, mod := localPackage(filepath.Dir(a))
		return mod
	}
	return ""
}

// localPackage returns the import path of the package in dir and the path
// of its module, from the nearest go.mod above it.
func localPackage(dir string) (pkg, module string) {
	for d := dir; ; d = filepath.Dir(d) {
		if data, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil {
			for _, line := range strings.Split(string(data), "\n") {
				if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
					module = strings.Trim(f[1], `"`)
					break
				}
			}
			rel, _ := filepath.Rel(d, dir)
			if rel == "." {
				return module, module
			}
			return module + "/" + filepath.ToSlash(rel), module
		}
		if filepath.Dir(d) == d {
			return dir, ""
		}
	}
}

func report(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("timings report", flag.ContinueOnError)
	fl.SetOutput(stderr)
	top := fl.Int("top", 25, "how many of the slowest tests to list")
	if err := fl.Parse(args); err != nil || fl.NArg() < 1 {
		fmt.Fprintln(stderr, "usage: timings report [-top N] FILE... (timings logs, go test -json streams)")
		return 2
	}
	var recs []record
	var tests []testTime
	for _, name := range fl.Args() {
		if err := read(name, &recs, &tests); err != nil {
			fmt.Fprintln(stderr, "timings:", err)
			return 1
		}
	}
	printReport(stdout, recs, tests, *top)
	return 0
}

// read adds the records and the test times in the file name: a timings
// log, a go test -json stream, or both concatenated.
func read(name string, recs *[]record, tests *[]testTime) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var e struct {
			record
			Action, Package, Test string
			Elapsed               float64
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		switch {
		case e.Kind != "":
			*recs = append(*recs, e.record)
		case e.Test != "" && (e.Action == "pass" || e.Action == "fail"):
			*tests = append(*tests, testTime{e.Package, e.Test, e.Elapsed})
		}
	}
	return sc.Err()
}

// testTime is one test's (or subtest's) elapsed time from go test -json.
type testTime struct {
	Package, Test string
	Elapsed       float64
}

// sum is a count with its CPU and wall seconds.
type sum struct {
	n         int
	cpu, wall float64
}

func (s *sum) add(r record) { s.n++; s.cpu += r.CPU; s.wall += r.Wall }

func printReport(w io.Writer, recs []record, tests []testTime, top int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	defer tw.Flush()

	byKind := map[string]*sum{}
	byConfig := map[string]*sum{}
	byModule := map[string]*sum{}
	type pkgTimes struct{ compile, vet, run sum }
	local := map[string]*pkgTimes{}
	localModules := map[string]bool{} // modules outside GOROOT and the module cache
	for _, r := range recs {
		if r.Module != "" && r.Module != "std" && !strings.Contains(r.Module, "@") {
			localModules[r.Module] = true
		}
	}
	get := func(m map[string]*sum, k string) *sum {
		if m[k] == nil {
			m[k] = &sum{}
		}
		return m[k]
	}
	for _, r := range recs {
		get(byKind, r.Kind).add(r)
		if r.Kind == "compile" || r.Kind == "asm" || r.Kind == "cgo" {
			get(byConfig, r.Config).add(r)
			get(byModule, r.Module).add(r)
		}
		// A package's own part: its compile (and its test variants'),
		// its test binary's link, its vet and its test run.
		pkg, _, _ := strings.Cut(r.Pkg, " ")
		pkg = strings.TrimSuffix(pkg, ".test")
		pkg = strings.TrimSuffix(pkg, "_test")
		if !localModules[r.Module] && !isLocal(pkg, localModules) {
			continue
		}
		if local[pkg] == nil {
			local[pkg] = &pkgTimes{}
		}
		switch r.Kind {
		case "compile", "asm", "cgo", "link":
			local[pkg].compile.add(r)
		case "vet":
			local[pkg].vet.add(r)
		case "test":
			local[pkg].run.add(r)
		}
	}

	fmt.Fprintln(tw, "by tool\truns\tCPU s\twall s (summed)\t")
	printSums(tw, byKind, 0)
	fmt.Fprintln(tw, "\t\t\t\t")
	fmt.Fprintln(tw, "compile CPU by build configuration\truns\tCPU s\twall s (summed)\t")
	printSums(tw, byConfig, 0)
	fmt.Fprintln(tw, "\t\t\t\t")
	fmt.Fprintln(tw, "compile CPU by module (the 15 largest)\truns\tCPU s\twall s (summed)\t")
	printSums(tw, byModule, 15)
	fmt.Fprintln(tw, "\t\t\t\t")

	fmt.Fprintln(tw, "package\tcompile+link CPU s\tvet CPU s\ttest run CPU s\ttest run wall s\t")
	pkgs := make([]string, 0, len(local))
	for p := range local {
		pkgs = append(pkgs, p)
	}
	slices.SortFunc(pkgs, func(a, b string) int {
		ta, tb := local[a], local[b]
		return cmp.Compare(tb.run.wall+tb.compile.cpu, ta.run.wall+ta.compile.cpu)
	})
	var total pkgTimes
	for _, p := range pkgs {
		t := local[p]
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f\t%.1f\t\n", p, t.compile.cpu, t.vet.cpu, t.run.cpu, t.run.wall)
		total.compile.cpu += t.compile.cpu
		total.vet.cpu += t.vet.cpu
		total.run.cpu += t.run.cpu
		total.run.wall += t.run.wall
	}
	fmt.Fprintf(tw, "total\t%.1f\t%.1f\t%.1f\t%.1f\t\n", total.compile.cpu, total.vet.cpu, total.run.cpu, total.run.wall)

	if len(tests) > 0 {
		// Top-level tests only: a subtest's time is inside its parent's.
		var tops []testTime
		for _, t := range tests {
			if !strings.Contains(t.Test, "/") {
				tops = append(tops, t)
			}
		}
		slices.SortFunc(tops, func(a, b testTime) int { return cmp.Compare(b.Elapsed, a.Elapsed) })
		fmt.Fprintln(tw, "\t\t\t\t")
		fmt.Fprintf(tw, "the %d slowest tests (of %d)\telapsed s\t\t\t\n", min(top, len(tops)), len(tops))
		for _, t := range tops[:min(top, len(tops))] {
			fmt.Fprintf(tw, "%s %s\t%.1f\t\t\t\n", t.Package, t.Test, t.Elapsed)
		}
	}
}

func isLocal(pkg string, modules map[string]bool) bool {
	for m := range modules {
		if pkg == m || strings.HasPrefix(pkg, m+"/") {
			return true
		}
	}
	return false
}

func printSums(w io.Writer, m map[string]*sum, limit int) {
	keys := make([]string, 0, len(m))
	var total sum
	for k, s := range m {
		keys = append(keys, k)
		total.n += s.n
		total.cpu += s.cpu
		total.wall += s.wall
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Compare(m[b].cpu, m[a].cpu) })
	if limit > 0 && len(keys) > limit {
		keys = keys[:limit]
	}
	for _, k := range keys {
		fmt.Fprintf(w, "%s\t%d\t%.1f\t%.1f\t\n", cmp.Or(k, "(test mains, other)"), m[k].n, m[k].cpu, m[k].wall)
	}
	fmt.Fprintf(w, "total\t%d\t%.1f\t%.1f\t\n", total.n, total.cpu, total.wall)
}
