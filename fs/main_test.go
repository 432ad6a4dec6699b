package fs

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestHelperProcess is not a test: cross-process tests re-execute the test
// binary with -test.run=^TestHelperProcess$ and FS_HELPER set, and this
// runs the child's side (the standard library's pattern).
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv("FS_HELPER")
	if mode == "" {
		return
	}
	helper, ok := helpers[mode]
	if !ok {
		os.Stderr.WriteString("unknown FS_HELPER " + mode + "\n")
		os.Exit(2)
	}
	helper()
	os.Exit(0)
}

// helpers maps FS_HELPER values to child-process mains; files with
// cross-process tests register theirs in init.
var helpers = map[string]func(){}

// helperCmdArgs are the arguments that make the test binary run only
// TestHelperProcess.
var helperCmdArgs = []string{"-test.run=^TestHelperProcess$", "-test.count=1", "-test.shuffle=off"}
