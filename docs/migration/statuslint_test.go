package migration_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentstate/core/cmd/statuslint/statuslint"
	"github.com/agentstate/core/internal/linttest"
)

// TestStatuslintReportsBeforePatterns keeps the guide's promise that
// statuslint finds the "before" code it shows: that code, with its helpers,
// is in testdata/src/before (the older ReadStatus style) and
// testdata/src/today (the services as they are written today, with the
// agent framework stub of statuslint's own test data), and every finding
// is a want.
//
// The output that the guide shows must be the analyzer's, line for line.
func TestStatuslintReportsBeforePatterns(t *testing.T) {
	gopath := "testdata" + string(os.PathListSeparator) +
		filepath.Join("..", "..", "cmd", "statuslint", "statuslint", "testdata")
	findings := linttest.Run(t, gopath, statuslint.Analyzer, "before", "today")
	got := map[string]bool{}
	for _, f := range findings {
		name := filepath.Base(filepath.Dir(f.Pos.Filename)) + "/" + filepath.Base(f.Pos.Filename)
		got[fmt.Sprintf("%s:%d:%d: %s", name, f.Pos.Line, f.Pos.Column, f.Message)] = true
	}

	guide, err := os.ReadFile(filepath.Join("..", "MIGRATION.md"))
	if err != nil {
		t.Fatal(err)
	}
	shown := 0
	for _, block := range textBlock.FindAllStringSubmatch(string(guide), -1) {
		for _, line := range strings.Split(block[1], "\n") {
			if strings.HasPrefix(line, "today/") || strings.HasPrefix(line, "before/") {
				shown++
				if !got[line] {
					t.Errorf("MIGRATION.md shows output that statuslint does not print:\n%s", line)
				}
			}
		}
	}
	if shown == 0 {
		t.Error("MIGRATION.md shows no statuslint output")
	}
}

var textBlock = regexp.MustCompile("(?s)```text\n(.*?)\n```")
