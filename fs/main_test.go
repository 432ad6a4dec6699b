package fs

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if helperMain() {
		return
	}
	goleak.VerifyTestMain(m)
}
