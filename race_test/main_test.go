package racetest

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// Every test, and every re-executed child server, ends with no goroutine
// left behind: shutdown of the workload must stop all of its loops.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func soak() bool { return os.Getenv("SOAK") == "1" }
