package statuslint_test

import (
	"testing"

	"go.uber.org/goleak"
	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/agentstate/core/cmd/statuslint/statuslint"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestAnalyzer checks every testdata package in one load (the // want
// comments hold the expected findings and facts):
//
//   - p4: the upstream patterns of P4-9/P4-10, all reported;
//   - migrated: the same code rewritten with status.Mutate and
//     fs.WriteAtomic, and other look-alikes: nothing reported;
//   - limits: the documented false negatives (no want) and false
//     positives (want), pinned so that a change in them is seen;
//   - crosspkg: helpers of package wsutil seen through exported facts.
func TestAnalyzer(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), statuslint.Analyzer, "p4", "migrated", "limits", "crosspkg")
}
