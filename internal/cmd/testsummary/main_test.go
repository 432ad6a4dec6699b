package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// stream builds a go test -json stream: each event is action, package,
// test, output.
func stream(events ...[4]string) string {
	var b strings.Builder
	for _, e := range events {
		data, _ := json.Marshal(map[string]any{"Action": e[0], "Package": e[1], "Test": e[2], "Output": e[3]})
		b.Write(data)
		b.WriteByte('\n')
	}
	return b.String()
}

const pkg = "example.com/m/fs"

// A package with a pass, a skip with a reason and a failed subtest.
var mixed = stream(
	[4]string{"run", pkg, "TestOK", ""},
	[4]string{"output", pkg, "TestOK", "=== RUN   TestOK\n"},
	[4]string{"output", pkg, "TestOK", "    ok_test.go:3: quiet unless -v\n"},
	[4]string{"pass", pkg, "TestOK", ""},
	[4]string{"output", pkg, "TestStrace", "=== RUN   TestStrace\n"},
	[4]string{"output", pkg, "TestStrace", "    strace_test.go:9: skipped: strace is not installed\n"},
	[4]string{"output", pkg, "TestStrace", "--- SKIP: TestStrace (0.00s)\n"},
	[4]string{"skip", pkg, "TestStrace", ""},
	[4]string{"output", pkg, "TestBad/sub", "    bad_test.go:5: boom\n"},
	[4]string{"fail", pkg, "TestBad/sub", ""},
	[4]string{"output", pkg, "TestBad", "--- FAIL: TestBad (0.00s)\n"},
	[4]string{"fail", pkg, "TestBad", ""},
	[4]string{"output", pkg, "", "FAIL\n"},
	[4]string{"fail", pkg, "", ""},
)

func summarize(t *testing.T, input string, allow []rule, strict, verbose bool) (string, int) {
	t.Helper()
	var out bytes.Buffer
	s := newSummary(&out, allow, verbose)
	s.consume(strings.NewReader(input))
	status := s.report(strict)
	return out.String(), status
}

func TestCountsFailuresAndSkipReasons(t *testing.T) {
	out, status := summarize(t, mixed, nil, false, false)
	for _, want := range []string{
		"FAIL  " + pkg, "1 passed, 2 failed, 1 skipped",
		"    bad_test.go:5: boom\n", "--- FAIL: TestBad",
		pkg + " TestStrace: strace_test.go:9: skipped: strace is not installed [NOT ALLOWED]",
		"WARNING: 1 skipped test(s) not on the allow-list",
		"\ntotal: 1 passed, 2 failed, 1 skipped\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "quiet unless -v") {
		t.Errorf("a passing test's output was printed without -v:\n%s", out)
	}
	if !strings.HasSuffix(out, "total: 1 passed, 2 failed, 1 skipped\n") || status != 1 {
		t.Errorf("status %d, want 1 and the totals last:\n%s", status, out)
	}
	if out, _ := summarize(t, mixed, nil, false, true); !strings.Contains(out, "quiet unless -v") {
		t.Errorf("-v did not print a passing test's output:\n%s", out)
	}
}

// The point of the tool: in strict mode a skip that is not on the
// allow-list fails a run whose tests all passed; an allowed one does not.
// The control is the same stream without the allow-list entry.
func TestStrictFailsOnUnexpectedSkip(t *testing.T) {
	passing := strings.ReplaceAll(strings.ReplaceAll(mixed, `"fail"`, `"pass"`), "boom", "fine")
	allow, err := parseAllowList("allow", "# comment\n\nfs   TestStr(ace|ess)  strace is optional here\n")
	if err != nil {
		t.Fatal(err)
	}
	if out, status := summarize(t, passing, allow, true, false); status != 0 || !strings.Contains(out, "[allowed: strace is optional here]") {
		t.Errorf("an allowed skip: status %d:\n%s", status, out)
	}
	out, status := summarize(t, passing, nil, true, false)
	if status != 1 || !strings.Contains(out, "FAIL: 1 skipped test(s) not on the allow-list") {
		t.Errorf("control: an unexpected skip in strict mode: status %d:\n%s", status, out)
	}
	if _, status := summarize(t, passing, nil, false, false); status != 0 {
		t.Errorf("an unexpected skip outside strict mode failed the run")
	}
	other, _ := parseAllowList("allow", "status TestStrace elsewhere\n")
	if _, status := summarize(t, passing, other, true, false); status != 1 {
		t.Errorf("an entry for another package allowed the skip")
	}
}

func TestBuildFailureAndDeadPackage(t *testing.T) {
	build := `{"ImportPath":"example.com/m/x [example.com/m/x.test]","Action":"build-output","Output":"x.go:1: undefined: y\n"}
{"ImportPath":"example.com/m/x [example.com/m/x.test]","Action":"build-fail"}
{"Action":"fail","Package":"example.com/m/x","FailedBuild":"example.com/m/x [example.com/m/x.test]"}
`
	out, status := summarize(t, build, nil, false, false)
	if status != 1 || !strings.Contains(out, "    x.go:1: undefined: y") {
		t.Errorf("build failure: status %d:\n%s", status, out)
	}
	dead := stream(
		[4]string{"output", pkg, "TestHang", "=== RUN   TestHang\n"},
		[4]string{"output", pkg, "TestHang", "panic: test timed out after 10m0s\n"},
	)
	out, status = summarize(t, dead+"not json: go: some message\n", nil, false, false)
	if status != 1 || !strings.Contains(out, "no result") || !strings.Contains(out, "panic: test timed out") ||
		!strings.Contains(out, "not json: go: some message") {
		t.Errorf("a package without an end event: status %d:\n%s", status, out)
	}
}

func TestAllowListErrors(t *testing.T) {
	for _, text := range []string{"fs TestX\n", "fs Test( reason\n"} {
		if _, err := parseAllowList("f", text); err == nil || !strings.Contains(err.Error(), "f:1:") {
			t.Errorf("parseAllowList(%q) = %v", text, err)
		}
	}
}

// The real thing: go test -json over a small module, with a failing
// command, in two directories.
func TestRunsGoTestInEachDir(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go not in PATH: %v", err)
	}
	dir := t.TempDir()
	for name, text := range map[string]string{
		"a/go.mod":     "module example.com/a\n\ngo 1.25\n",
		"a/a_test.go":  "package a\nimport \"testing\"\nfunc TestA(t *testing.T) {}\nfunc TestS(t *testing.T) { t.Skip(\"no tool\") }\n",
		"b/go.mod":     "module example.com/b\n\ngo 1.25\n",
		"b/b_test.go":  "package b\nimport \"testing\"\nfunc TestB(t *testing.T) { t.Fatal(\"broken\") }\n",
		"allow-skips":  "example.com/a TestS the tool is optional\n",
		"allow-nothin": "# nothing\n",
	} {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut bytes.Buffer
	events := filepath.Join(dir, "events.json")
	status := run([]string{"-allow", filepath.Join(dir, "allow-skips"), "-strict", "-json", events, "-dir", filepath.Join(dir, "a"), "-dir", filepath.Join(dir, "b"),
		"--", goBin, "test", "-json", "-count=1", "./..."}, &out, &errOut)
	if status != 1 || !strings.Contains(out.String(), "broken") || !strings.HasSuffix(out.String(), "total: 1 passed, 1 failed, 1 skipped\n") {
		t.Fatalf("status %d\nstdout:\n%s\nstderr:\n%s", status, out.String(), errOut.String())
	}
	// -json keeps both modules' events as go test wrote them.
	data, err := os.ReadFile(events)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"Action":"pass","Package":"example.com/a","Test":"TestA"`, `"Action":"fail","Package":"example.com/b","Test":"TestB"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("-json file lacks %s:\n%s", want, data)
		}
	}
	// Each module is announced before its (possibly long) build.
	if !strings.HasPrefix(out.String(), "testsummary: go test in "+filepath.Join(dir, "a")) || !strings.Contains(out.String(), "testsummary: go test in "+filepath.Join(dir, "b")) {
		t.Errorf("the modules are not announced:\n%s", out.String())
	}
	out.Reset()
	status = run([]string{"-allow", filepath.Join(dir, "allow-nothin"), "-strict", "-dir", filepath.Join(dir, "a"),
		"--", goBin, "test", "-json", "-count=1", "./..."}, &out, &errOut)
	if status != 1 || !strings.Contains(out.String(), "NOT ALLOWED") {
		t.Fatalf("an unexpected skip in a passing module: status %d\n%s", status, out.String())
	}
	if status := run(nil, &out, &errOut); status != 2 {
		t.Fatalf("no command: status %d", status)
	}
}

// go test starts packages in the order of its arguments: a -first package
// is passed ahead of the pattern, in the module that holds it.
func TestFirstStartsFirst(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go not in PATH: %v", err)
	}
	dir := t.TempDir()
	for name, text := range map[string]string{
		"m/go.mod":          "module example.com/m\n\ngo 1.25\n",
		"m/p1/p_test.go":    "package p\nimport \"testing\"\nfunc TestP1(t *testing.T) {}\n",
		"m/p2/p_test.go":    "package p\nimport \"testing\"\nfunc TestP2(t *testing.T) {}\n",
		"m/n/go.mod":        "module example.com/n\n\ngo 1.25\n",
		"m/n/q/q_test.go":   "package q\nimport \"testing\"\nfunc TestQ(t *testing.T) {}\n",
		"m/n/r/r_test.go":   "package r\nimport \"testing\"\nfunc TestR(t *testing.T) {}\n",
		"m/n/r/s/s_test.go": "package s\nimport \"testing\"\nfunc TestS(t *testing.T) {}\n",
	} {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, n := filepath.Join(dir, "m"), filepath.Join(dir, "m", "n")
	var out, errOut bytes.Buffer
	status := run([]string{"-dir", m, "-dir", n, "-first", filepath.Join(m, "p2"), "-first", filepath.Join(n, "r", "s"),
		"--", goBin, "test", "-json", "-p", "1", "-count=1", "./..."}, &out, &errOut)
	if status != 0 {
		t.Fatalf("status %d\nstdout:\n%s\nstderr:\n%s", status, out.String(), errOut.String())
	}
	order := map[string][]string{} // by module: the two run at once
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "ok" {
			mod := f[1][:len("example.com/m")]
			order[mod] = append(order[mod], f[1])
		}
	}
	for mod, want := range map[string]string{
		"example.com/m": "example.com/m/p2 example.com/m/p1",
		"example.com/n": "example.com/n/r/s example.com/n/q example.com/n/r",
	} {
		if got := strings.Join(order[mod], " "); got != want {
			t.Errorf("%s: packages ended in the order %s, want %s", mod, got, want)
		}
	}
	if status := run([]string{"-dir", m, "-first", filepath.Join(m, "none"), "--", goBin, "test", "./..."}, &out, &errOut); status != 2 {
		t.Errorf("-first of a missing directory: status %d, want 2", status)
	}
}
