package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// asCorestateEnv makes this test binary act as the corestate binary: the
// cross-process tests start it with this variable set and corestate
// arguments. That is the standard library's re-exec pattern; no separate
// build is needed.
const asCorestateEnv = "CORESTATE_TEST_RUN_AS_CORESTATE"

func TestMain(m *testing.M) {
	if os.Getenv(asCorestateEnv) == "1" {
		os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr, os.Exit)) // as main does
	}
	// Race-enabled binaries sleep 1s at exit (GORACE atexit_sleep_ms) to
	// let late race reports out; the re-executed corestates report
	// synchronously and exit with code 66 on a race, so skip the sleep.
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	goleak.VerifyTestMain(m)
}

// tester is what the helpers need from *testing.T and *rapid.T.
type tester interface {
	Helper()
	Errorf(format string, args ...any)
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// result is one in-process run of the command.
type result struct {
	code           int
	stdout, stderr string
	args           []string
}

func corestate(t tester, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return result{code, out.String(), errOut.String(), args}
}

// want fails the test unless r exited with code; on failure it shows the
// command's output.
func (r result) want(t tester, code int) result {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
	if code != exitOK {
		// Errors are one line each: one (plus, for usage errors, one hint
		// line), or for list one per document it could not read first.
		lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
		for _, l := range lines {
			if !strings.HasPrefix(l, "corestate: ") {
				t.Errorf("stderr has a line that is not an error:\n%s", r.stderr)
			}
		}
		if len(lines) > 2 && (len(r.args) == 0 || r.args[0] != "list") {
			t.Errorf("stderr is not a one-line error:\n%s", r.stderr)
		}
	}
	return r
}

func writeFile(t tester, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t tester, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func tempFile(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(t.TempDir(), name)
}
