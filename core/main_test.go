package core

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// soak reports whether long stress loops are wanted (make soak sets SOAK=1).
func soak() bool { return os.Getenv("SOAK") == "1" }
