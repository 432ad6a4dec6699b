package linttest_test

import (
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentstate/core/cmd/statuslint/statuslint"
	"github.com/agentstate/core/internal/linttest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Run must report every mismatch between the want comments and what the
// analyzer finds, and nothing else.
func TestRunReportsMismatches(t *testing.T) {
	r := &linttest.Recorder{TB: t}
	findings := linttest.Run(r, "testdata", statuslint.Analyzer, "wrong")
	want := []string{
		"wrong.go:11:6: unexpected fact of load: result 0: decoded $0; reads $0",
		"wrong.go:11: no fact of load matching `writes`",
		"wrong.go:20: no finding matching `read-modify-write`",
		"wrong.go:25:6: unexpected finding: read-modify-write of p without a lock",
	}
	if len(r.Errs) != len(want) {
		t.Errorf("Run reported %d errors, want %d:\n%s", len(r.Errs), len(want), strings.Join(r.Errs, "\n"))
	}
	for _, w := range want {
		if !slices.ContainsFunc(r.Errs, func(e string) bool { return strings.Contains(e, w) }) {
			t.Errorf("Run did not report %q; it reported:\n%s", w, strings.Join(r.Errs, "\n"))
		}
	}
	if len(findings) != 1 || findings[0].Pos.Line != 25 {
		t.Errorf("Run returned the findings %v, want the one on line 25", findings)
	}
}
