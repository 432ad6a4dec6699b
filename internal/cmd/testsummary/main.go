// Command testsummary runs go test -json and turns its event stream into a
// short report that cannot hide a skipped test.
//
//	testsummary [-allow FILE] [-strict] [-v] [-json FILE] [-dir DIR]... [-first PKGDIR]... -- go test -json [flags] packages
//
// The command after "--" runs once in each -dir (default "."), so one
// report covers nested modules too; its standard error passes through.
// The runs overlap: each starts once the one before has printed its first
// line. go test starts a module's packages in the order of its arguments:
// each -first names a package directory (the longest packages, so that
// they do not start last) that the run in the -dir holding it gets just
// before the command's last argument, its package pattern. As
// each package finishes, testsummary prints one line with its counts of
// passed, failed and skipped tests (subtests, examples and fuzz seeds
// included) and, for a failed package, the output of its failed tests, or
// of the package itself when it failed outside a test (build error, panic
// in TestMain, timeout). With -v it prints every test's output. With
// -json it also writes the event stream, unchanged, to FILE (for the
// elapsed time of each test: internal/cmd/timings).
//
// Then it lists every skipped test with the reason the test gave, marking
// those on the allow-list, and ends with one line:
//
//	total: 1234 passed, 0 failed, 1 skipped
//
// It exits 1 if a command failed, a test failed, or, in strict mode, a
// test skipped without being on the allow-list; 2 on a usage error.
// Strict mode is on with -strict or when the environment variable CI is
// "true" or "1", as it is in continuous integration: a test that skips
// there because a tool or privilege is missing has not passed.
//
// The allow-list file has one entry per line: a package (its import path,
// or a suffix of it after a slash), a regular expression that must match
// the whole test name, and the reason the skip is expected. Blank lines
// and lines starting with # are ignored.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type dirList []string

func (d *dirList) String() string     { return strings.Join(*d, ",") }
func (d *dirList) Set(s string) error { *d = append(*d, s); return nil }

func run(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("testsummary", flag.ContinueOnError)
	fl.SetOutput(stderr)
	allowFile := fl.String("allow", "", "file of tests allowed to skip")
	strict := fl.Bool("strict", ciEnv(), "fail on a skip not on the allow-list (default: on when CI is true)")
	verbose := fl.Bool("v", false, "print the output of every test, not only failed ones")
	jsonFile := fl.String("json", "", "also write the go test -json events to this file")
	var dirs, first dirList
	fl.Var(&dirs, "dir", "directory to run the command in (repeatable; default .)")
	fl.Var(&first, "first", "package directory to test before the others, in the -dir that holds it (repeatable)")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	cmdArgs := fl.Args()
	if len(cmdArgs) == 0 {
		fmt.Fprintln(stderr, "usage: testsummary [-allow FILE] [-strict] [-v] [-dir DIR]... -- go test -json ...")
		return 2
	}
	var allow []rule
	if *allowFile != "" {
		var err error
		if allow, err = readAllowList(*allowFile); err != nil {
			fmt.Fprintln(stderr, "testsummary:", err)
			return 2
		}
	}
	if len(dirs) == 0 {
		dirs = dirList{"."}
	}
	firstIn, err := placeFirst(dirs, first)
	if err != nil {
		fmt.Fprintln(stderr, "testsummary:", err)
		return 2
	}
	s := newSummary(stdout, allow, *verbose)
	if *jsonFile != "" {
		f, err := os.Create(*jsonFile)
		if err != nil {
			fmt.Fprintln(stderr, "testsummary:", err)
			return 2
		}
		defer f.Close()
		s.events = f
	}
	// The commands run at once: a module's build and tests fill the time
	// another's tests spend waiting (on fsync, on their children). Each
	// starts once the one before it has printed its first line (its first
	// test binary has started), so that the packages they share, the
	// standard library first, are built and vetted once, not by each at
	// the same time on an empty build cache. Their lines reach the summary
	// whole, one at a time.
	lines := make(chan string)
	notes := make(chan string) // testsummary's own lines, not the commands'
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed []string
	fail := func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		failed = append(failed, msg)
	}
	if _, ok := stderr.(*os.File); !ok {
		stderr = &lockedWriter{w: stderr} // written by each command's copier
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, dir := range dirs {
			if len(dirs) > 1 {
				// Each module builds its test binaries before its first
				// result: say which ones are being built, so a long build
				// is not a silence.
				notes <- fmt.Sprintf("testsummary: go test in %s (building its test binaries first)\n", dir)
			}
			args := slices.Concat(cmdArgs[1:len(cmdArgs)-1], firstIn[dir], cmdArgs[len(cmdArgs)-1:])
			cmd := exec.Command(cmdArgs[0], args...)
			cmd.Dir = dir
			cmd.Stderr = stderr
			out, err := cmd.StdoutPipe()
			if err == nil {
				err = cmd.Start()
			}
			if err != nil {
				fail(fmt.Sprintf("%s (in %s): %v", strings.Join(cmdArgs, " "), dir, err))
				continue
			}
			started := make(chan struct{})
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := readLines(out, lines, started); err != nil {
					fail(fmt.Sprintf("reading the test output (in %s): %v", dir, err))
				}
				if err := cmd.Wait(); err != nil {
					fail(fmt.Sprintf("%s (in %s): %v", strings.Join(cmdArgs, " "), dir, err))
				}
			}()
			<-started
		}
	}()
	go func() {
		wg.Wait()
		close(lines)
	}()
	for done := false; !done; {
		select {
		case text, ok := <-lines:
			if !ok {
				done = true
				break
			}
			s.handle(text)
		case note := <-notes:
			fmt.Fprint(stdout, note)
		}
	}
	for _, f := range failed {
		s.commandFailed(f)
	}
	return s.report(*strict)
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// readLines sends each line of r to lines, and closes first once it has
// sent the first one or r has ended.
func readLines(r io.Reader, lines chan<- string, first chan<- struct{}) error {
	defer func() {
		if first != nil {
			close(first)
		}
	}()
	br := bufio.NewReader(r)
	for {
		text, err := br.ReadString('\n')
		if text != "" {
			lines <- text
			if first != nil {
				close(first)
				first = nil
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// placeFirst maps each -dir to the -first package directories it holds
// (the deepest -dir holding one), as paths relative to it.
func placeFirst(dirs, first []string) (map[string][]string, error) {
	in := map[string][]string{}
	for _, pkg := range first {
		if fi, err := os.Stat(pkg); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("-first %s: not a package directory", pkg)
		}
		best, rel := "", ""
		for _, dir := range dirs {
			r, err := filepath.Rel(dir, pkg)
			if err == nil && r != ".." && !strings.HasPrefix(r, "../") && (best == "" || len(dir) > len(best)) {
				best, rel = dir, r
			}
		}
		if best == "" {
			return nil, fmt.Errorf("-first %s: in none of the -dir directories", pkg)
		}
		if rel != "." {
			rel = "./" + filepath.ToSlash(rel)
		}
		in[best] = append(in[best], rel)
	}
	return in, nil
}

func ciEnv() bool {
	v := os.Getenv("CI")
	return v == "true" || v == "1"
}

// rule is one allow-list entry.
type rule struct {
	pkg    string
	test   *regexp.Regexp
	reason string
}

func (r rule) matches(pkg, test string) bool {
	return (pkg == r.pkg || strings.HasSuffix(pkg, "/"+r.pkg)) && r.test.MatchString(test)
}

func readAllowList(path string) ([]rule, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseAllowList(path, string(data))
}

func parseAllowList(name, text string) ([]rule, error) {
	var rules []rule
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 {
			return nil, fmt.Errorf("%s:%d: want: package test-regexp reason", name, i+1)
		}
		re, err := regexp.Compile("^(?:" + f[1] + ")$")
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, i+1, err)
		}
		rules = append(rules, rule{pkg: f[0], test: re, reason: strings.Join(f[2:], " ")})
	}
	return rules, nil
}

// event is one line of go test -json (cmd/test2json).
type event struct {
	Action      string
	Package     string
	ImportPath  string // build-output and build-fail events
	Test        string
	Output      string
	Elapsed     float64
	FailedBuild string
}

// line is one line of output, with the test that printed it ("" for the
// package itself).
type line struct{ test, text string }

type pkgState struct {
	lines                 []line
	passed, failed, skips int
	testFailed            map[string]bool
}

type skip struct {
	pkg, test, reason string
	allowed           *rule
}

type summary struct {
	out     io.Writer
	allow   []rule
	verbose bool
	events  io.Writer // nil, or where the events are copied (-json)

	pkgs     map[string]*pkgState
	builds   map[string][]string // build output by ImportPath
	skips    []skip
	failures []string // commands that failed, packages that failed

	passed, failed, skipped int
}

func newSummary(out io.Writer, allow []rule, verbose bool) *summary {
	return &summary{out: out, allow: allow, verbose: verbose,
		pkgs: map[string]*pkgState{}, builds: map[string][]string{}}
}

func (s *summary) pkg(name string) *pkgState {
	p := s.pkgs[name]
	if p == nil {
		p = &pkgState{testFailed: map[string]bool{}}
		s.pkgs[name] = p
	}
	return p
}

// consume reads a go test -json stream to its end.
func (s *summary) consume(r io.Reader) {
	lines := make(chan string)
	var err error
	go func() {
		err = readLines(r, lines, nil)
		close(lines)
	}()
	for text := range lines {
		s.handle(text)
	}
	if err != nil {
		s.commandFailed("reading the test output: " + err.Error())
	}
}

func (s *summary) handle(text string) {
	if s.events != nil {
		io.WriteString(s.events, text)
	}
	var e event
	if !strings.HasPrefix(text, "{") || json.Unmarshal([]byte(text), &e) != nil {
		fmt.Fprint(s.out, text) // not an event: pass it through
		return
	}
	switch e.Action {
	case "build-output":
		s.builds[e.ImportPath] = append(s.builds[e.ImportPath], e.Output)
		return
	case "build-fail":
		return
	}
	if e.Package == "" {
		return
	}
	p := s.pkg(e.Package)
	switch e.Action {
	case "output":
		p.lines = append(p.lines, line{e.Test, e.Output})
	case "pass", "fail", "skip":
		if e.Test != "" {
			s.testDone(e.Package, p, e)
		} else {
			s.packageDone(e.Package, p, e)
		}
	}
}

func (s *summary) testDone(pkg string, p *pkgState, e event) {
	switch e.Action {
	case "pass":
		p.passed++
		s.passed++
	case "fail":
		p.failed++
		s.failed++
		p.testFailed[e.Test] = true
	case "skip":
		p.skips++
		s.skipped++
		sk := skip{pkg: pkg, test: e.Test, reason: skipReason(p.lines, e.Test)}
		for i := range s.allow {
			if s.allow[i].matches(pkg, e.Test) {
				sk.allowed = &s.allow[i]
				break
			}
		}
		s.skips = append(s.skips, sk)
	}
}

// skipReason is what a skipped test printed, without the framing lines.
func skipReason(lines []line, test string) string {
	var parts []string
	for _, l := range lines {
		t := strings.TrimSpace(l.text)
		if l.test != test || t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " ")
}

func (s *summary) packageDone(pkg string, p *pkgState, e event) {
	delete(s.pkgs, pkg)
	if e.Action == "skip" { // no test files
		fmt.Fprintf(s.out, "?     %s [no test files]\n", pkg)
		return
	}
	status := "ok   "
	if e.Action == "fail" {
		status = "FAIL "
		s.failures = append(s.failures, pkg)
	}
	fmt.Fprintf(s.out, "%s %-60s %7.2fs  %d passed, %d failed, %d skipped\n",
		status, pkg, e.Elapsed, p.passed, p.failed, p.skips)
	switch {
	case e.FailedBuild != "":
		s.printIndented(s.builds[e.FailedBuild])
	case s.verbose:
		s.printLines(p.lines, func(line) bool { return true })
	case e.Action == "fail" && p.failed > 0:
		s.printLines(p.lines, func(l line) bool { return p.testFailed[l.test] })
	case e.Action == "fail":
		// Failed outside any test: show everything it printed.
		s.printLines(p.lines, func(line) bool { return true })
	}
}

func (s *summary) printLines(lines []line, show func(line) bool) {
	var texts []string
	for _, l := range lines {
		if show(l) {
			texts = append(texts, l.text)
		}
	}
	s.printIndented(texts)
}

func (s *summary) printIndented(texts []string) {
	for _, t := range texts {
		fmt.Fprint(s.out, "    ", t)
		if !strings.HasSuffix(t, "\n") {
			fmt.Fprintln(s.out)
		}
	}
}

func (s *summary) commandFailed(msg string) {
	s.failures = append(s.failures, msg)
}

// report prints the skips, the verdict and the totals, and returns the
// exit status.
func (s *summary) report(strict bool) int {
	// Packages still open had no end event: the test binary or go test
	// itself died. Show what they printed.
	open := make([]string, 0, len(s.pkgs))
	for pkg := range s.pkgs {
		open = append(open, pkg)
	}
	sort.Strings(open)
	for _, pkg := range open {
		fmt.Fprintf(s.out, "FAIL  %s: no result (the test process died?)\n", pkg)
		s.printLines(s.pkgs[pkg].lines, func(line) bool { return true })
		s.failures = append(s.failures, pkg)
	}
	status := 0
	if len(s.skips) > 0 {
		fmt.Fprintln(s.out)
		fmt.Fprintf(s.out, "skipped tests (%d):\n", len(s.skips))
	}
	var unexpected int
	for _, sk := range s.skips {
		mark := "NOT ALLOWED"
		if sk.allowed != nil {
			mark = "allowed: " + sk.allowed.reason
		} else {
			unexpected++
		}
		fmt.Fprintf(s.out, "  %s %s: %s [%s]\n", sk.pkg, sk.test, sk.reason, mark)
	}
	if unexpected > 0 {
		if strict {
			fmt.Fprintf(s.out, "FAIL: %d skipped test(s) not on the allow-list; CI must run them\n", unexpected)
			status = 1
		} else {
			fmt.Fprintf(s.out, "WARNING: %d skipped test(s) not on the allow-list; CI (CI=true) fails on them\n", unexpected)
		}
	}
	if len(s.failures) > 0 {
		fmt.Fprintf(s.out, "FAIL: %s\n", strings.Join(s.failures, "; "))
		status = 1
	}
	fmt.Fprintf(s.out, "total: %d passed, %d failed, %d skipped\n", s.passed, s.failed, s.skipped)
	return status
}
