package claim_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the tests, or, in a child process the tests started, one
// of their helpers (see helpers in harness_linux_test.go).
func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	goleak.VerifyTestMain(m)
}

// helperEnv names the helper a child process runs.
const helperEnv = "CLAIM_TEST_HELPER"
