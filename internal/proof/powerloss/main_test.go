//go:build linux

package powerloss_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(envRole) == "writer" {
		writerMain() // never returns
	}
	goleak.VerifyTestMain(m)
}
