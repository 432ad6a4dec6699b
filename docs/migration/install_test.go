package migration_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// installBlock matches a shell block of the user docs that installs the
// module, marked with where it runs: "module" in the user's module, where
// the code that imports the packages is; "checkout" at the root of a
// checkout of the repository. /path/to/checkout names the checkout.
var installBlock = regexp.MustCompile("(?s)<!-- install: (module|checkout) -->\n```sh\n(.*?)\n```")

// installDocs are the user docs whose install lines TestInstallLines runs,
// relative to the repository's root.
var installDocs = []string{"README.md", "docs/MIGRATION.md", "python/README.md"}

// The install lines of the user docs work on a fresh machine as written,
// with no network beyond the Go module proxy: from a fresh clone of this
// repository (what HEAD holds), the lines of a new module make a program
// that imports the packages build and run; the lines at the checkout
// install the commands into an empty GOBIN, where they run, and the Python
// package into a fresh venv, where it imports. Lines that fetch a release
// (@latest) are not run: the docs say when they will work. CONTROL: the
// new module builds nothing without the install lines. The clone holds
// what is committed: commit a change to the docs before testing it.
func TestInstallLines(t *testing.T) {
	if testing.Short() {
		t.Skip("clones the repository, builds a module and installs the commands: not with -short")
	}
	for _, tool := range []string{"git", "go", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH", tool)
		}
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	tmp := t.TempDir()
	checkout := filepath.Join(tmp, "core")
	installRun(t, tmp, nil, "git", "clone", "--quiet", strings.TrimSpace(string(top)), checkout)

	var blocks [][]string // kind, lines
	for _, doc := range installDocs {
		b, err := os.ReadFile(filepath.Join(checkout, doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range installBlock.FindAllStringSubmatch(string(b), -1) {
			if strings.Contains(m[2], "@latest") {
				t.Errorf("%s: an install block runs @latest, which no release answers yet:\n%s", doc, m[2])
			}
			blocks = append(blocks, []string{doc, m[1], strings.ReplaceAll(m[2], "/path/to/checkout", checkout)})
		}
	}
	if len(blocks) == 0 {
		t.Fatal("no install blocks (<!-- install: module|checkout -->) in the user docs")
	}

	app := filepath.Join(tmp, "app")
	gobin := filepath.Join(tmp, "bin")
	for _, dir := range []string{app, gobin} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"GOBIN=" + gobin, "PATH=" + gobin + string(os.PathListSeparator) + os.Getenv("PATH")}
	installRun(t, app, env, "go", "mod", "init", "example.com/app")
	program := `package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentstate/core/config"
	"github.com/agentstate/core/status"
)

func main() {
	dir, err := os.MkdirTemp("", "app")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	st, err := status.Mutate(context.Background(), filepath.Join(dir, "status.json"), func(s *status.Status) error {
		s.Runs++
		return nil
	})
	c := config.New()
	_ = c.Set("workers", 4)
	fmt.Println(st.Runs, err, c.Snapshot().Int("workers"))
}
`
	if err := os.WriteFile(filepath.Join(app, "main.go"), []byte(program), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		if b[1] == "module" && strings.Contains(b[2], "status/etcdstore") {
			etcd := "package main\n\nimport _ \"github.com/agentstate/core/status/etcdstore\"\n"
			if err := os.WriteFile(filepath.Join(app, "etcd.go"), []byte(etcd), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// CONTROL: without the lines, the module cannot resolve the packages.
	if out, err := installCmd(app, env, "go", "build", "./...").CombinedOutput(); err == nil {
		t.Fatalf("CONTROL: the module built without the install lines:\n%s", out)
	}

	for _, b := range blocks {
		dir := app
		if b[1] == "checkout" {
			dir = checkout
		}
		t.Logf("%s, in the %s:\n%s", b[0], b[1], b[2])
		installRun(t, dir, env, "sh", "-ec", b[2])
	}
	installRun(t, app, env, "go", "build", "-o", "app", ".")
	if out := installRun(t, app, env, filepath.Join(app, "app")); out != "1 <nil> 4\n" {
		t.Errorf("the program printed %q", out)
	}
	// Each command the lines install runs; statuslint is always among them.
	for cmd, args := range map[string][]string{"statuslint": {"-V=full"}, "corestate": {"help"}} {
		bin := filepath.Join(gobin, cmd)
		if _, err := os.Stat(bin); err != nil {
			if cmd == "statuslint" {
				t.Errorf("the docs' lines installed no statuslint: %v", err)
			}
			continue
		}
		installRun(t, tmp, env, bin, args...)
	}
	if _, err := os.Stat(filepath.Join(checkout, ".venv")); err != nil {
		t.Errorf("the docs' lines made no venv at the checkout: %v", err)
	} else {
		installRun(t, checkout, env, filepath.Join(checkout, ".venv", "bin", "python"), "-c", "import agentstate")
	}
}

func installCmd(dir string, env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

// installRun runs a command and returns its output; a failure fails the test.
func installRun(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	out, err := installCmd(dir, env, name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s (in %s): %v\n%s", name, strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}
