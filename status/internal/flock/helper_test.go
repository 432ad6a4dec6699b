package flock

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

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
	if run == nil {
		fmt.Fprintln(os.Stderr, "helper: unknown mode", a.Mode)
		os.Exit(2)
	}
	os.Exit(run(a))
}
