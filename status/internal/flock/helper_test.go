package flock

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"
)

// seamsFor returns the switches of the tests, skipping tb in a build
// without them (go test -tags crashhooks; make test sets it).
func seamsFor(tb testing.TB) *Seams {
	tb.Helper()
	s := TestSeams()
	if s == nil {
		tb.Skip("needs the test switches: go test -tags crashhooks")
	}
	return s
}

// The liveness tests need other processes: the test binary re-executes
// itself with helperEnv set to a JSON helperArgs (the standard library's
// pattern), and TestMain hands the process to runHelper before any test
// runs. A helper reports on stdout, one line per event, and ends when its
// stdin closes or it is killed.
const helperEnv = "FLOCK_TEST_HELPER"

type helperArgs struct {
	Mode    string        // a key of helperModes
	Name    string        // the lock file
	Old     bool          // wait as the replaced queue did (the CONTROL)
	Timeout time.Duration // how long a waiter waits
}

// helperModes maps a mode to its body, which returns the process's exit
// status. Filled by the platform's helper file.
var helperModes = map[string]func(helperArgs) int{}

func runHelper(env string) {
	var a helperArgs
	if err := json.Unmarshal([]byte(env), &a); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(2)
	}
	run := helperModes[a.Mode]
	if TestSeams() == nil {
		fmt.Fprintln(os.Stderr, "helper: needs the test switches: go test -tags crashhooks")
		os.Exit(2)
	}
	if run == nil {
		fmt.Fprintln(os.Stderr, "helper: unknown mode", a.Mode)
		os.Exit(2)
	}
	os.Exit(run(a))
}
