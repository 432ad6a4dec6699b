package claim_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The tests against real processes, with peer tools, are in
// internal/proof/claim.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
