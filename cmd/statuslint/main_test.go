package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

// The tests run the command as users do: built with go build (so without
// the race detector, which would only slow the type-checking of the
// standard library that the command loads from source), standalone and as
// go vet's -vettool.
var tool struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if tool.dir != "" {
			os.RemoveAll(tool.dir)
		}
		os.Exit(code)
	}))
}

// command returns the path of the statuslint command, built once.
func command(t *testing.T) string {
	t.Helper()
	tool.once.Do(func() {
		if tool.dir, tool.err = os.MkdirTemp("", "statuslint"); tool.err != nil {
			return
		}
		tool.path = filepath.Join(tool.dir, "statuslint")
		out, err := exec.Command(goCmd(t), "build", "-o", tool.path, ".").CombinedOutput()
		if err != nil {
			tool.err = errors.New(string(out))
		}
	})
	if tool.err != nil {
		t.Fatalf("building statuslint: %v", tool.err)
	}
	return tool.path
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

// ifaceSource reads and writes through an interface: only the -readers and
// -writers flags make its read-modify-write visible.
const ifaceSource = `package iface

type Docs interface {
	Get(path string) (map[string]any, error)
	Put(path string, m map[string]any) error
}

func Bump(d Docs, p string) error {
	m, err := d.Get(p)
	if err != nil {
		return err
	}
	m["runs"] = 1
	return d.Put(p, m)
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

// testModule writes a module with a package with findings (bad, using
// helpers of bad/store), one without (good), and one whose finding needs
// the flags (iface).
func testModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":         "module example.com/bad\n\ngo 1.25\n",
		"bad.go":         badSource,
		"store/store.go": storeSource,
		"iface/iface.go": ifaceSource,
		"good/good.go":   goodSource,
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

// run runs a command in dir and returns its exit code, standard output and
// standard error.
func run(t *testing.T, dir string, name string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GOTOOLCHAIN=local")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errOut.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String(), errOut.String()
	}
	t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out.String(), errOut.String())
	return 0, "", ""
}

var wantFindings = []string{
	"bad.go:30:9: read-modify-write of p without a lock: read and decoded at line 17",
	"bad.go:30:9: not atomic: os.WriteFile truncates p in place",
	"bad.go:39:9: read-modify-write of ws without a lock: read and decoded at line 34",
}

const ifaceFinding = "iface.go:14:9: read-modify-write of p without a lock: read and decoded at line 9"

var ifaceFlags = []string{"-readers=example.com/bad/iface.Docs.Get", "-writers=example.com/bad/iface.Docs.Put"}

// checkOutput checks that every wanted finding is reported and that the
// good package, the helpers' own package and (without the flags) iface
// get none.
func checkOutput(t *testing.T, out string) {
	t.Helper()
	for _, w := range wantFindings {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q", w)
		}
	}
	for _, clean := range []string{"good.go", "store.go", "iface.go"} {
		if strings.Contains(out, clean) {
			t.Errorf("finding in %s, which has none", clean)
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}

func TestStandalone(t *testing.T) {
	t.Parallel()
	dir := testModule(t)
	code, _, out := run(t, dir, command(t), "./...")
	if code != 3 {
		t.Errorf("statuslint ./...: exit %d, want 3", code)
	}
	checkOutput(t, out)

	// iface has nothing to report without the flags (and loads quickly).
	if code, out, errOut := run(t, dir, command(t), "./iface"); code != 0 || out+errOut != "" {
		t.Errorf("statuslint ./iface: exit %d, output %q; want 0 and nothing", code, out+errOut)
	}
}

// TestJSON checks that -json exits with 3 when it reports something, like
// the text output, and 0 when not (the control). It runs on package iface,
// which has a finding only with the flags, and which loads quickly.
func TestJSON(t *testing.T) {
	t.Parallel()
	dir := testModule(t)
	args := append([]string{"-json"}, ifaceFlags...)
	code, out, errOut := run(t, dir, command(t), append(args, "./iface")...)
	if code != 3 {
		t.Errorf("statuslint %s ./iface: exit %d, want 3\n%s", strings.Join(args, " "), code, errOut)
	}
	// {"package": {"statuslint": [{"posn": ..., "message": ...}]}}
	var tree map[string]map[string][]struct{ Posn, Message string }
	if err := json.Unmarshal([]byte(out), &tree); err != nil {
		t.Fatalf("statuslint -json: output is not JSON: %v\n%s", err, out)
	}
	var all []string
	for _, byAnalyzer := range tree {
		for _, d := range byAnalyzer["statuslint"] {
			all = append(all, filepath.Base(d.Posn)+": "+d.Message)
		}
	}
	if len(all) != 1 || !strings.HasPrefix(all[0], ifaceFinding) {
		t.Errorf("statuslint -json: findings %q, want only %q", all, ifaceFinding)
	}

	code, out, errOut = run(t, dir, command(t), "-json", "./iface")
	if code != 0 || strings.TrimSpace(out) != "{}" {
		t.Errorf("statuslint -json ./iface: exit %d, output %q%s; want 0 and {}", code, out, errOut)
	}
}

// TestFlags checks -readers and -writers standalone and through go vet; the
// control is TestStandalone's ./... run, which must not report iface.
func TestFlags(t *testing.T) {
	t.Parallel()
	dir := testModule(t)
	flags := ifaceFlags
	code, _, out := run(t, dir, command(t), append(flags, "./iface")...)
	if code != 3 || !strings.Contains(out, ifaceFinding) {
		t.Errorf("statuslint %s ./iface: exit %d, output %q; want 3 and %q", strings.Join(flags, " "), code, out, ifaceFinding)
	}
	code, _, out = run(t, dir, goCmd(t), append(append([]string{"vet", "-vettool=" + command(t)}, flags...), "./iface")...)
	if code == 0 || !strings.Contains(out, ifaceFinding) {
		t.Errorf("go vet -vettool=statuslint %s ./iface: exit %d, output %q; want failure and %q", strings.Join(flags, " "), code, out, ifaceFinding)
	}
}

func TestAsVettool(t *testing.T) {
	t.Parallel()
	dir := testModule(t)
	vet := []string{"vet", "-vettool=" + command(t)}
	code, _, out := run(t, dir, goCmd(t), append(vet, "./...")...)
	if code == 0 {
		t.Errorf("go vet -vettool=statuslint ./... succeeded despite findings")
	}
	checkOutput(t, out)

	if code, out, errOut := run(t, dir, goCmd(t), append(vet, "./iface")...); code != 0 || out+errOut != "" {
		t.Errorf("go vet -vettool=statuslint ./iface: exit %d, output %q; want 0 and nothing", code, out+errOut)
	}
}
