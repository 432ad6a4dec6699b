package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// The test module imports nothing from the standard library, so that each
// run loads in a moment (the command loads dependencies from source). Its
// file access goes through package disk, which the flags name as reader
// and writer: what the analyzer recognises is tested in package statuslint;
// these tests check the command around it (exit status, output, flags, and
// facts passed between packages, standalone and by go vet).
const diskSource = `package disk

var files = map[string]string{}

func Read(path string) string     { return files[path] }
func Write(path, content string)  { files[path] = content }
`

const badSource = `package bad

import (
	"example.com/bad/disk"
	"example.com/bad/store"
)

func MarkCompleted(ws string) {
	p := ws + "/status.json"
	st := disk.Read(p)
	st += " completed"
	disk.Write(p, st)
}

func Requeue(ws string) {
	d := store.Load(ws)
	d["status"] = "queued"
	store.Save(ws, d)
}
`

// storeSource is a helper package of the bad module: its read and write
// helpers are seen in package bad through the analyzer's facts.
const storeSource = `package store

import "example.com/bad/disk"

func Load(ws string) map[string]string {
	return map[string]string{"status": disk.Read(ws + "/status.json")}
}

func Save(ws string, m map[string]string) {
	disk.Write(ws+"/status.json", m["status"])
}
`

// ifaceSource reads and writes through an interface: only its own flags
// make its read-modify-write visible.
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

import "example.com/bad/disk"

func Show(ws string) string { return disk.Read(ws + "/status.json") }
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
		"disk/disk.go":   diskSource,
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

// diskFlags name package disk's functions as reader and writer.
var diskFlags = []string{"-readers=example.com/bad/disk.Read", "-writers=example.com/bad/disk.Write"}

var wantFindings = []string{
	"bad.go:12:2: read-modify-write of ws+\"/status.json\" without a lock: read at line 10 (disk.Read), written back here (disk.Write)",
	"bad.go:18:2: read-modify-write of ws+\"/status.json\" without a lock: read at line 16 (store.Load), written back here (store.Save)",
}

const ifaceFinding = "iface.go:14:9: read-modify-write of p without a lock: read at line 9 (d.Get), written back here (d.Put)"

var ifaceFlags = []string{"-readers=example.com/bad/iface.Docs.Get", "-writers=example.com/bad/iface.Docs.Put"}

// checkOutput checks that every wanted finding is reported and that the
// good package, the helper packages and iface (whose flags are not given)
// get none.
func checkOutput(t *testing.T, out string) {
	t.Helper()
	for _, w := range wantFindings {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q", w)
		}
	}
	for _, clean := range []string{"good.go", "store.go", "disk.go", "iface.go"} {
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
	code, _, out := run(t, dir, command(t), append(diskFlags, "./...")...)
	if code != 3 {
		t.Errorf("statuslint ./...: exit %d, want 3", code)
	}
	checkOutput(t, out)

	// The control: without the flags, nothing is seen.
	if code, out, errOut := run(t, dir, command(t), "./..."); code != 0 || out+errOut != "" {
		t.Errorf("statuslint ./... without flags: exit %d, output %q; want 0 and nothing", code, out+errOut)
	}
}

// TestJSON checks that -json exits with 3 when it reports something, like
// the text output, and 0 when not (the control).
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

// TestFix checks that -fix, which has no rewrite to apply, changes
// nothing, prints the findings and says so, and exits 3 as a run without
// -fix does; on a package with nothing to report (the control) it exits 0
// and prints nothing.
func TestFix(t *testing.T) {
	t.Parallel()
	dir := testModule(t)
	before, err := os.ReadFile(filepath.Join(dir, "iface", "iface.go"))
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-fix"}, ifaceFlags...)
	code, out, errOut := run(t, dir, command(t), append(args, "./iface")...)
	if code != 3 || !strings.Contains(errOut, ifaceFinding) || !strings.Contains(errOut, "-fix changed nothing: 1 findings") {
		t.Errorf("statuslint -fix ./iface: exit %d, output %q; want 3, the finding and that nothing was fixed", code, out+errOut)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "iface", "iface.go")); string(after) != string(before) {
		t.Errorf("statuslint -fix changed iface.go")
	}
	if code, out, errOut := run(t, dir, command(t), "-fix", "./iface"); code != 0 || out+errOut != "" {
		t.Errorf("statuslint -fix ./iface without flags: exit %d, output %q; want 0 and nothing", code, out+errOut)
	}
}

// TestAsVettool runs the command as go vet's tool: go vet passes the
// analyzer's facts between packages (store's to bad) in its own files, and
// the flags after -vettool.
func TestAsVettool(t *testing.T) {
	t.Parallel()
	dir := testModule(t)
	vet := append([]string{"vet", "-vettool=" + command(t)}, diskFlags...)
	code, _, out := run(t, dir, goCmd(t), append(vet, "./...")...)
	if code == 0 {
		t.Errorf("go vet -vettool=statuslint ./... succeeded despite findings")
	}
	checkOutput(t, out)

	flags := append([]string{"vet", "-vettool=" + command(t)}, ifaceFlags...)
	code, _, out = run(t, dir, goCmd(t), append(flags, "./iface")...)
	if code == 0 || !strings.Contains(out, ifaceFinding) {
		t.Errorf("go vet -vettool=statuslint %s ./iface: exit %d, output %q; want failure and %q", strings.Join(ifaceFlags, " "), code, out, ifaceFinding)
	}

	if code, out, errOut := run(t, dir, goCmd(t), "vet", "-vettool="+command(t), "./good"); code != 0 || out+errOut != "" {
		t.Errorf("go vet -vettool=statuslint ./good: exit %d, output %q; want 0 and nothing", code, out+errOut)
	}
}

// The policy for _test.go files: writes and read-modify-writes before any
// goroutine starts are fixture set-up and not reported; after a go
// statement, or in a function a go statement starts, they are. The control
// is the same code in a file that is not a test, where everything is
// reported.
const fixtureSource = `package fixture

import (
	"encoding/json"
	"os"
	"path/filepath"
)

func Setup(dir string) {
	p := filepath.Join(dir, "status.json")
	os.WriteFile(p, []byte("{}"), 0o644)
	data, _ := os.ReadFile(p)
	var m map[string]any
	json.Unmarshal(data, &m)
	m["runs"] = 1
	out, _ := json.Marshal(m)
	os.WriteFile(p, out, 0o644)
}
`

const fixtureTestSource = `package fixture

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestSetup(t *testing.T) {
	p := filepath.Join(t.TempDir(), "status.json")
	os.WriteFile(p, []byte("{}"), 0o644)
	data, _ := os.ReadFile(p)
	var m map[string]any
	json.Unmarshal(data, &m)
	m["runs"] = 1
	out, _ := json.Marshal(m)
	os.WriteFile(p, out, 0o644)
}

func TestConcurrent(t *testing.T) {
	p := filepath.Join(t.TempDir(), "status.json")
	done := make(chan bool)
	go func() {
		os.WriteFile(p, []byte("{}"), 0o644)
		done <- true
	}()
	os.WriteFile(p, []byte("{}"), 0o644)
	<-done
}
`

func TestTestFilePolicy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":          "module example.com/fixture\n\ngo 1.25\n",
		"fixture.go":      fixtureSource,
		"fixture_test.go": fixtureTestSource,
	}
	for f, content := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, _, out := run(t, dir, command(t), "./...")
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if i := strings.Index(l, ": "); i > 0 {
			got = append(got, filepath.Base(l[:i])+": "+strings.SplitN(l[i+2:], " ", 2)[0])
		}
	}
	slices.Sort(got)
	got = slices.Compact(got)
	want := []string{
		// the control: in a file that is not a test, both writes and the
		// read-modify-write are reported
		"fixture.go:11:2: not", "fixture.go:17:2: not", "fixture.go:17:2: read-modify-write",
		// in the test file, only the writes made while a goroutine may run
		"fixture_test.go:25:3: not", "fixture_test.go:28:2: not",
	}
	if !slices.Equal(got, want) {
		t.Errorf("statuslint ./... reported\n%s\nwant\n%s\n(output:\n%s)", strings.Join(got, "\n"), strings.Join(want, "\n"), out)
	}
}

// The standalone command says, after the findings, what it did not follow
// across the program: a call through an interface implemented by a
// package that writes files, which the caller's package does not import;
// a file read in one package and written in another that does not import
// it. Each has a CONTROL, the same module with the import that connects
// them, where the line is gone.
var unfollowedSources = map[string]string{
	"go.mod":       "module example.com/app\n\ngo 1.25\n",
	"disk/disk.go": diskSource,
	"store/store.go": `package store

type Doc struct{ Name string }

type Store interface{ Save(d *Doc) }
`,
	"file/file.go": `package file

import (
	"example.com/app/disk"
	"example.com/app/store"
)

type Files struct{ Dir string }

func (f Files) Save(d *store.Doc) { disk.Write(f.Dir+"/doc.yaml", d.Name) }
`,
	"cmd/cmd.go": `package cmd

import (
	"example.com/app/disk"
	"example.com/app/store"
	_ "example.com/app/IMPORT"
)

func Rename(s store.Store, name string) {
	s.Save(&store.Doc{Name: name})
}

func Reset() { disk.Write("state.yaml", "") }
`,
	"status/status.go": `package status

import "example.com/app/disk"

func Show() string { return disk.Read("state.yaml") }
`,
	"main.go": `package main

import (
	"example.com/app/cmd"
	"example.com/app/file"
	"example.com/app/status"
)

func main() {
	cmd.Rename(file.Files{Dir: "/tmp"}, "x")
	cmd.Reset()
	_ = status.Show()
}
`,
}

func unfollowedModule(t *testing.T, imported string) string {
	t.Helper()
	dir := t.TempDir()
	for f, content := range unfollowedSources {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		content = strings.ReplaceAll(content, "example.com/app/IMPORT", imported)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestUnfollowedSummary(t *testing.T) {
	t.Parallel()
	const (
		header = "statuslint: not followed, so a finding may be missing there"
		iface  = "store.Store.Save (called at cmd.go:10) is implemented by file.Files.Save, which reads or writes files, " +
			"in a package that the callers' packages do not import"
		file = `"state.yaml" is read in` + " example.com/app/status (status.go:5 (disk.Read)) and written in example.com/app/cmd " +
			"(cmd.go:13, disk.Write), which does not import it"
	)
	for _, c := range []struct {
		imported   string
		want, gone []string
	}{
		{"example.com/app/disk", []string{header, iface, file}, nil},
		// CONTROLs: the implementation, the reader imported
		{"example.com/app/file", []string{header, file}, []string{iface}},
		{"example.com/app/status", []string{header, iface}, []string{file}},
	} {
		dir := unfollowedModule(t, c.imported)
		code, out, errOut := run(t, dir, command(t), append(diskFlags[:1:1], "-writers=example.com/app/disk.Write",
			"-readers=example.com/app/disk.Read", "./...")...)
		if code != 0 {
			t.Errorf("importing %s: exit %d, want 0 (nothing to report)\n%s%s", c.imported, code, out, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("importing %s: output lacks %q:\n%s", c.imported, w, errOut)
			}
		}
		for _, g := range c.gone {
			if strings.Contains(errOut, g) {
				t.Errorf("importing %s: output has %q:\n%s", c.imported, g, errOut)
			}
		}
	}
}

// TestUnfollowedJSONAndVet checks the list's JSON form, and that go vet's
// protocol is kept: under go vet nothing is listed and a program with
// nothing to report passes. Its CONTROL is -unfollowed, under which go
// vet reports the places as findings and fails.
func TestUnfollowedJSONAndVet(t *testing.T) {
	t.Parallel()
	dir := unfollowedModule(t, "example.com/app/disk")
	flags := []string{"-writers=example.com/app/disk.Write", "-readers=example.com/app/disk.Read"}

	code, out, errOut := run(t, dir, command(t), append([]string{"-json"}, append(flags, "./...")...)...)
	if code != 0 || strings.Contains(errOut, "not followed") {
		t.Errorf("-json: exit %d, stderr %q; want 0 and nothing listed on stderr", code, errOut)
	}
	var unfollowed struct{ Unfollowed []string }
	for dec := json.NewDecoder(strings.NewReader(out)); ; {
		var v map[string]json.RawMessage
		if err := dec.Decode(&v); err != nil {
			break
		}
		if raw, ok := v["unfollowed"]; ok {
			if err := json.Unmarshal(raw, &unfollowed.Unfollowed); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !slices.ContainsFunc(unfollowed.Unfollowed, func(l string) bool { return strings.Contains(l, `"state.yaml" is read in`) }) {
		t.Errorf("-json: no unfollowed object listing state.yaml in\n%s", out)
	}

	vet := append([]string{"vet", "-vettool=" + command(t)}, flags...)
	if code, out, errOut := run(t, dir, goCmd(t), append(vet, "./...")...); code != 0 || out+errOut != "" {
		t.Errorf("go vet -vettool=statuslint ./...: exit %d, output %q; want 0 and nothing", code, out+errOut)
	}
	code, out, errOut = run(t, dir, goCmd(t), append(vet, "-unfollowed", "./...")...)
	if code == 0 || !strings.Contains(out+errOut, "not followed: s.Save calls example.com/app/store.Store.Save") {
		t.Errorf("CONTROL: go vet -vettool=statuslint -unfollowed ./...: exit %d, output %q; want failure and the interface call", code, out+errOut)
	}
}
