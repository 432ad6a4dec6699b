package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// asDemoEnv makes this test binary act as the demo: the demo re-executes
// os.Executable (this binary) for its workers, and the orphan test starts it
// as the demo itself. That is the standard library's re-exec pattern; no
// separate build is needed.
const asDemoEnv = "DEMO_TEST_RUN_AS_DEMO"

func TestMain(m *testing.M) {
	if os.Getenv(asDemoEnv) == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) // as main does
	}
	os.Setenv(asDemoEnv, "1") // for the workers the tests' demos start
	// Race-enabled binaries sleep 1s at exit (GORACE atexit_sleep_ms) to
	// let late race reports out; the demo's workers report synchronously
	// and exit with code 66 on a race, so skip the sleep in them.
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	goleak.VerifyTestMain(m)
}

// result is one in-process run of the demo.
type result struct {
	code           int
	stdout, stderr string
}

func demo(t *testing.T, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return result{code, out.String(), errOut.String()}
}

// want fails the test unless r exited with code; on failure it shows the
// output.
func (r result) want(t *testing.T, code int) result {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
	if code != exitOK && !strings.HasPrefix(r.stderr, "demo: ") {
		t.Errorf("stderr is not a demo error:\n%s", r.stderr)
	}
	return r
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--procs", "0"}, {"--procs", "65"}, {"--updates", "0"}, {"--readers", "-1"},
		{"--timeout", "0s"}, {"--bogus"}, {"extra"},
	} {
		demo(t, args...).want(t, exitUsage)
	}
	if r := demo(t, "-h").want(t, exitOK); r.stdout != help {
		t.Errorf("-h printed %q, want the help", r.stdout)
	}
}
