package slots_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// helperEnv makes a child process started by the tests run a fleet member
// (see runHelper) instead of the tests.
const helperEnv = "SLOTS_PROOF_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		if err := runHelper(mode); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	if corestateBin.dir != "" {
		os.RemoveAll(corestateBin.dir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
