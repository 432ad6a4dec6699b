package migration_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the examples, or, in a child they started, their agent
// program (agentMain).
func TestMain(m *testing.M) {
	if os.Getenv(agentEnv) != "" {
		os.Exit(agentMain())
	}
	goleak.VerifyTestMain(m)
}
