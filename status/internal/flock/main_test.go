package flock

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if a, ok := os.LookupEnv(helperEnv); ok {
		runHelper(a) // a child process of a test; never returns
	}
	goleak.VerifyTestMain(m)
}
