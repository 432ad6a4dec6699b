package statuslint_test

import (
	"testing"

	"go.uber.org/goleak"
	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/agentstate/core/cmd/statuslint/statuslint"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestUpstreamPatterns: every upstream pattern of P4-9/P4-10 is reported
// (the // want comments in testdata/src/p4), and nothing else is.
func TestUpstreamPatterns(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), statuslint.Analyzer, "p4")
}

// TestMigratedCode: the same code rewritten with status.Mutate and
// fs.WriteAtomic, and other look-alikes, gives no finding.
func TestMigratedCode(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), statuslint.Analyzer, "migrated")
}

// TestKnownLimits pins the documented false negatives and false positives.
func TestKnownLimits(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), statuslint.Analyzer, "limits")
}

// TestHelpersAcrossPackages: helpers of another package are seen through the
// facts the analyzer exports for them.
func TestHelpersAcrossPackages(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), statuslint.Analyzer, "crosspkg")
}
