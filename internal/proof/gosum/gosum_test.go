// Package gosum_test measures what a program that imports this module's
// library packages gets in its go.sum.
//
// go mod tidy in a consumer records every module that provides a package
// the consumer's packages import, or that a test of such a package imports
// (one level of tests). So the tests inside fs/, status/, config/, logger/
// and core/ may import only the standard library, goleak, and packages of
// this module that themselves import only the standard library; tests that
// need more live in internal/proof/<pkg>, race_test/, cmd/ or the nested
// bench module.
package gosum_test

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// libraryPackages are the packages a service imports.
var libraryPackages = []string{"config", "core", "fs", "logger", "status", "status/claim", "status/slots"}

// maxModules is the most modules besides core a consumer's go.sum may list:
// the YAML library config imports, and goleak, which every package's
// TestMain uses.
const maxModules = 2

// TestConsumerGoSum builds a consumer module that imports the library
// packages (core replaced by this checkout), runs go mod tidy, and counts
// the modules in its go.sum.
func TestConsumerGoSum(t *testing.T) {
	root := moduleRoot(t)
	var imports []string
	for _, p := range libraryPackages {
		imports = append(imports, "github.com/agentstate/core/"+p)
	}
	mods := tidySum(t, root, imports, nil)
	t.Logf("a consumer importing %s gets %d modules besides core in go.sum: %s",
		strings.Join(libraryPackages, ", "), len(mods), strings.Join(mods, ", "))
	if len(mods) > maxModules {
		t.Errorf("go.sum lists %d modules besides core, want at most %d:\n\t%s\n"+
			"a test inside a library package imports one of them: move it to internal/proof/<pkg> (see internal/proof/gosum)",
			len(mods), maxModules, strings.Join(mods, "\n\t"))
	}
}

// TestConsumerGoSumControl: the same harness sees a module that only a
// test of an imported package uses. A local module "leaky" has a package
// whose test imports go-cmp; a consumer importing it must get go-cmp in its
// go.sum, or the harness could not see the leak it guards against.
func TestConsumerGoSumControl(t *testing.T) {
	root := moduleRoot(t)
	version := goOut(t, root, "list", "-m", "-f", "{{.Version}}", "github.com/google/go-cmp")
	leaky := t.TempDir()
	writeFiles(t, leaky, map[string]string{
		"go.mod":        "module example.com/leaky\n\ngo " + goVersion(t, root) + "\n\nrequire github.com/google/go-cmp " + version + "\n",
		"leaky.go":      "package leaky\n",
		"leaky_test.go": "package leaky\n\nimport _ \"github.com/google/go-cmp/cmp\"\n",
	})
	mods := tidySum(t, root, []string{"github.com/agentstate/core/logger", "example.com/leaky"}, map[string]string{"example.com/leaky": leaky})
	if !slices.Contains(mods, "github.com/google/go-cmp") {
		t.Fatalf("CONTROL: go.sum lists %v without go-cmp, which a test of an imported package imports: the harness cannot see such a leak", mods)
	}
}

// tidySum writes a consumer module importing imports, with core and the
// modules in local replaced by directories, runs go mod tidy, and returns
// the sorted module paths in its go.sum other than core.
func tidySum(t *testing.T, root string, imports []string, local map[string]string) []string {
	t.Helper()
	dir := t.TempDir()
	var mod, main strings.Builder
	mod.WriteString("module example.com/consumer\n\ngo " + goVersion(t, root) + "\n\n")
	mod.WriteString("require github.com/agentstate/core v0.0.0\n\nreplace github.com/agentstate/core => " + root + "\n")
	for path, d := range local {
		mod.WriteString("\nrequire " + path + " v0.0.0\n\nreplace " + path + " => " + d + "\n")
	}
	main.WriteString("package main\n\nimport (\n")
	for _, p := range imports {
		main.WriteString("\t_ \"" + p + "\"\n")
	}
	main.WriteString(")\n\nfunc main() {}\n")
	writeFiles(t, dir, map[string]string{"go.mod": mod.String(), "main.go": main.String()})

	// Offline first: everything needed is in the module cache once this
	// module's own tests are built. Fall back to the configured proxy.
	if _, err := goRun(dir, []string{"GOPROXY=off"}, "mod", "tidy"); err != nil {
		if out, err := goRun(dir, nil, "mod", "tidy"); err != nil {
			t.Fatalf("go mod tidy in the consumer: %v\n%s", err, out)
		}
	}
	sum, err := os.ReadFile(filepath.Join(dir, "go.sum"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var mods []string
	sc := bufio.NewScanner(bytes.NewReader(sum))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0] == "github.com/agentstate/core" || slices.Contains(mods, f[0]) {
			continue
		}
		mods = append(mods, f[0])
	}
	slices.Sort(mods)
	return mods
}

// goRun runs the go command in dir with env added, isolated from any
// workspace and toolchain switch.
func goRun(dir string, env []string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local"), env...)
	return cmd.CombinedOutput()
}

func goOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := goRun(dir, nil, args...)
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// moduleRoot is the directory of this module's go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the go command is not in PATH: %v", err)
	}
	return filepath.Dir(goOut(t, ".", "env", "GOMOD"))
}

// goVersion is the go directive of this module's go.mod, which a consumer
// must meet.
func goVersion(t *testing.T, root string) string {
	t.Helper()
	return goOut(t, root, "list", "-m", "-f", "{{.GoVersion}}")
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
