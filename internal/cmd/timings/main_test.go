//go:build linux

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The wrapper passes the command's exit status on and logs it, with the
// package and module the go command names.
func TestWrapLogsEachRun(t *testing.T) {
	log := filepath.Join(t.TempDir(), "t.log")
	t.Setenv("TIMINGS_LOG", log)
	t.Setenv("TOOLEXEC_IMPORTPATH", "example.com/m/p [example.com/m/p.test]")
	sh := "/bin/sh"
	if got := wrap([]string{sh, "-c", "exit 3"}); got != 3 {
		t.Errorf("exit status %d, want 3", got)
	}
	if got := wrap([]string{sh, "-c", "kill -9 $$"}); got != 128+9 {
		t.Errorf("killed: exit status %d, want %d", got, 128+9)
	}
	if got := wrap([]string{sh, "-c", "exit 0", "-V=full"}); got != 0 {
		t.Errorf("exit status %d, want 0", got) // and not logged: a tool ID query
	}
	var recs []record
	var tests []testTime
	if err := read(log, &recs, &tests); err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Kind != "sh" || recs[0].Pkg != "example.com/m/p [example.com/m/p.test]" || recs[0].Wall <= 0 {
		t.Fatalf("log: %+v, want two runs of sh in example.com/m/p", recs)
	}
}

// A compile's module comes from its source files' paths.
func TestModuleOf(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/local\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-p", "fmt", filepath.Join(runtime.GOROOT(), "src/fmt/print.go")}, "std"},
		{[]string{"-p", "x", "/root/go/pkg/mod/go.etcd.io/etcd/client/v3@v3.6.14/client.go"}, "go.etcd.io/etcd/client/v3@v3.6.14"},
		{[]string{"-p", "x", filepath.Join(dir, "a/a.go")}, "example.com/local"},
		{[]string{"-p", "main", "./_testmain.go"}, ""},
	} {
		if got := moduleOf(c.args); got != c.want {
			t.Errorf("moduleOf(%q) = %q, want %q", c.args, got, c.want)
		}
	}
	if pkg, mod := localPackage(filepath.Join(dir, "a", "b")); pkg != "example.com/local/a/b" || mod != "example.com/local" {
		t.Errorf("localPackage = %q, %q", pkg, mod)
	}
}

// The report adds a package's test build, vet and run, groups compiles by
// module and lists the slowest top-level tests.
func TestReport(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "t.log")
	lines := []string{
		`{"Kind":"compile","Pkg":"fmt","Module":"std","Config":"linux/amd64 race","Wall":2,"CPU":1.5}`,
		`{"Kind":"compile","Pkg":"example.com/m/p [example.com/m/p.test]","Module":"example.com/m","Config":"linux/amd64 race","Wall":1,"CPU":0.5}`,
		`{"Kind":"compile","Pkg":"example.com/m/p_test [example.com/m/p.test]","Module":"example.com/m","Config":"linux/amd64 race","Wall":1,"CPU":0.3}`,
		`{"Kind":"link","Pkg":"example.com/m/p.test","Config":"linux/amd64","Wall":1,"CPU":1}`,
		`{"Kind":"vet","Pkg":"example.com/m/p","Module":"example.com/m","Wall":1,"CPU":0.5}`,
		`{"Kind":"test","Pkg":"example.com/m/p","Module":"example.com/m","Wall":30,"CPU":12}`,
		`{"Action":"pass","Package":"example.com/m/p","Test":"TestSlow","Elapsed":20}`,
		`{"Action":"pass","Package":"example.com/m/p","Test":"TestSlow/sub","Elapsed":19}`,
		`{"Action":"fail","Package":"example.com/m/p","Test":"TestFast","Elapsed":0.5}`,
		`not json`,
	}
	os.WriteFile(log, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	var out, errOut bytes.Buffer
	if status := report([]string{"-top", "5", log}, &out, &errOut); status != 0 {
		t.Fatalf("status %d: %s", status, errOut.String())
	}
	for _, want := range []string{
		"linux/amd64 race 3 2.3 4.0",
		"std 1 1.5 2.0",
		"example.com/m/p 1.8 0.5 12.0 30.0",
		"the 2 slowest tests (of 2)",
		"example.com/m/p TestSlow 20.0",
		"example.com/m/p TestFast 0.5",
	} {
		if !strings.Contains(squeeze(out.String()), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "TestSlow/sub") {
		t.Errorf("report lists a subtest:\n%s", out.String())
	}
}

// squeeze turns the runs of spaces between columns into one space.
func squeeze(s string) string {
	f := strings.Split(s, "\n")
	for i, l := range f {
		f[i] = strings.Join(strings.Fields(l), " ")
	}
	return strings.Join(f, "\n")
}
