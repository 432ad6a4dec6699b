package formats_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/agentstate/core/cmd/statuslint/statuslint"
	"github.com/agentstate/core/internal/linttest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestStatuslintReportsBefore keeps the guide's promise that statuslint
// finds the "before" code of its sections on other formats (package
// before, with the real viper, YAML, TOML and client-go libraries; every
// finding is a want) and nothing in this package's examples, the "after"
// code.
func TestStatuslintReportsBefore(t *testing.T) {
	linttest.RunModule(t, ".", statuslint.Analyzer,
		"github.com/agentstate/core/docs/migration/formats/before",
		"github.com/agentstate/core/docs/migration/formats")
}
