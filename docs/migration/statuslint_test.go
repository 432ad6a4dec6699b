package migration_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/agentstate/core/cmd/statuslint/statuslint"
)

// TestStatuslintReportsBeforePatterns keeps the guide's promise that
// statuslint finds the "before" code of patterns 1 to 4: that code, with
// its helpers, is in testdata/src/before, and every finding is a want.
func TestStatuslintReportsBeforePatterns(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), statuslint.Analyzer, "before")
}
