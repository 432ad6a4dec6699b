package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// envAsTool makes the test binary run main() instead of the tests: the test
// re-executes itself as the statuslint command, standalone and as the
// -vettool of go vet (which runs the tool once per package, with the
// environment inherited).
const envAsTool = "STATUSLINT_TEST_AS_TOOL"

func TestMain(m *testing.M) {
	if os.Getenv(envAsTool) == "1" {
		main() // singlechecker.Main exits
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

const badSource = `package bad

import (
	"encoding/json"
	"os"
	"path/filepath"

	"example.com/bad/store"
)

type Status struct {
	Status string ` + "`json:\"status\"`" + `
}

func MarkCompleted(ws string) error {
	p := filepath.Join(ws, "status.json")
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	var st Status
	if err := json.Unmarshal(data, &st); err != nil {
		return err
	}
	st.Status = "completed"
	out, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return os.WriteFile(p, out, 0o644)
}

func Requeue(ws string) error {
	d, err := store.Load(ws)
	if err != nil {
		return err
	}
	d["status"] = "queued"
	return store.Save(ws, d)
}
`

// storeSource is a helper package of the bad module: its read and write
// helpers are seen in package bad through the analyzer's facts, which go vet
// passes between packages.
const storeSource = `package store

import (
	"encoding/json"
	"os"
	"path/filepath"
)

func Load(ws string) (map[string]any, error) {
	data, err := os.ReadFile(filepath.Join(ws, "status.json"))
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(data, &m)
}

func Save(ws string, m map[string]any) error {
	out, err := json.Marshal(m)
	if err != nil {
		return err
	}
	tmp := filepath.Join(ws, ".status.json.tmp")
	if err := os.WriteFile(tmp, out, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(ws, "status.json"))
}
`

const goodSource = `package good

import (
	"encoding/json"
	"os"
)

func Show(p string) (map[string]any, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(data, &m)
}
`

// module writes a module into a temp directory: the package name at its
// root with source src, plus extra files given as name, content pairs.
func module(t *testing.T, name, src string, extra ...string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":     "module example.com/" + name + "\n\ngo 1.25\n",
		name + ".go": src,
	}
	for i := 0; i+1 < len(extra); i += 2 {
		files[extra[i]] = extra[i+1]
	}
	for f, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// testModule has a package with findings (bad, using helpers of bad/store)
// and one without (good), so that one run checks both.
func testModule(t *testing.T) string {
	return module(t, "bad", badSource, "store/store.go", storeSource, "good/good.go", goodSource)
}

// run runs a command in dir with this test binary acting as statuslint, and
// returns its exit code and combined output.
func run(t *testing.T, dir string, name string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), envAsTool+"=1", "GOWORK=off", "GOFLAGS=", "GOTOOLCHAIN=local")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String()
	}
	t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	return 0, ""
}

func self(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func goCmd(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		// The go command is needed to load packages at all; CI has it.
		t.Fatalf("go command not found: %v", err)
	}
	return goBin
}

var wantFindings = []string{
	"bad.go:30:9: read-modify-write of p without a lock: read and decoded at line 17",
	"bad.go:30:9: not atomic: os.WriteFile truncates p in place",
	"bad.go:39:9: read-modify-write of ws without a lock: read and decoded at line 34",
}

// checkOutput checks that every wanted finding is reported and that the
// good package, and the helpers' own package, get none.
func checkOutput(t *testing.T, out string) {
	t.Helper()
	for _, w := range wantFindings {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q", w)
		}
	}
	for _, clean := range []string{"good.go", "store.go"} {
		if strings.Contains(out, clean) {
			t.Errorf("finding in %s, which has none", clean)
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}

func TestStandalone(t *testing.T) {
	goCmd(t) // singlechecker loads packages through the go command
	dir := testModule(t)
	code, out := run(t, dir, self(t), "./...")
	if code != 3 { // singlechecker's exit status for findings
		t.Errorf("statuslint ./...: exit %d, want 3", code)
	}
	checkOutput(t, out)

	if code, out := run(t, dir, self(t), "./good"); code != 0 || out != "" {
		t.Errorf("statuslint ./good: exit %d, output %q; want 0 and nothing", code, out)
	}
}

func TestAsVettool(t *testing.T) {
	goBin := goCmd(t)
	dir := testModule(t)
	code, out := run(t, dir, goBin, "vet", "-vettool="+self(t), "./...")
	if code == 0 {
		t.Errorf("go vet -vettool=statuslint ./... succeeded despite findings")
	}
	checkOutput(t, out)

	// Cheap: vet has cached the dependencies' results of the first run.
	if code, out := run(t, dir, goBin, "vet", "-vettool="+self(t), "./good"); code != 0 || out != "" {
		t.Errorf("go vet -vettool=statuslint ./good: exit %d, output %q; want 0 and nothing", code, out)
	}
}
