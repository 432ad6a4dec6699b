package statuslint_test

import (
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentstate/core/cmd/statuslint/statuslint"
	"github.com/agentstate/core/internal/linttest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestAnalyzer checks the test data packages in one load; the // want
// comments hold the expected findings and facts, and anything else fails:
//
//   - svc/agentic, svc/runner, svc/monitor: the status code of the agent
//     services written as they are today (a file-system wrapper returning
//     a Result, the framework's string JSON helpers, path and unwrap
//     helpers, ReadStatusResult / writeStatusResult, helper variables,
//     methods, a narrower struct, map[string]any, YAML, read, sleep and
//     spawn, write), with the framework stub example.com/core: every bare
//     read-modify-write reported;
//   - svcfixed/agentic, svcfixed/runner, svcfixed/monitor: the same code
//     migrated as docs/MIGRATION.md says: nothing reported;
//   - p4 and migrated: the older ReadStatus / writeStatus style and its
//     migration;
//   - limits: the documented false negatives (no want) and false positives
//     (want), pinned so that a change in them is seen;
//   - crosspkg: helpers of package wsutil seen through facts;
//   - appconf, appcmd: a configuration loaded through a factory's function
//     field that a package appcmd does not import fills (gh's shape), and
//     saved through an interface: reported; a configuration the command is
//     given, a blank one, a loader of bytes: not.
func TestAnalyzer(t *testing.T) {
	linttest.Run(t, "testdata", statuslint.Analyzer,
		"svc/agentic", "svc/runner", "svc/monitor", "example.com/core",
		"svcfixed/agentic", "svcfixed/runner", "svcfixed/monitor",
		"p4", "migrated", "limits", "crosspkg", "appconf", "appcmd", "ownpath", "ownpathcmd", "lockcache", "startup", "startupcmd", "startupvar", "selfdoc", "kubecfg", "twonames", "notfile", "stalegroup")
}

// TestExtraReadersWriters checks the -readers and -writers flags on package
// extra, whose reads and writes go through an interface and a client that
// touches no file. Its control is the same run without the flags, which
// must miss every finding that the flags bring.
func TestExtraReadersWriters(t *testing.T) {
	control := &linttest.Recorder{TB: t}
	linttest.Run(control, "testdata", statuslint.Analyzer, "extra")
	if got := strings.Count(strings.Join(control.Errs, "\n"), "no finding matching"); got != 2 {
		t.Errorf("without the flags: %d findings missed, want 2 (every finding of package extra):\n%s",
			got, strings.Join(control.Errs, "\n"))
	}

	set(t, "readers", "extra.Docs.Get, extra.(*Client).Fetch")
	set(t, "writers", "extra.Docs.Put,extra.(*Client).Store")
	linttest.Run(t, "testdata", statuslint.Analyzer, "extra")
}

// TestLockers checks the -lockers flag on package lockcache, whose
// SetWithOwnLock holds a lock of the project's own: without the flag it is
// reported (the CONTROL, in TestAnalyzer), with it not.
func TestLockers(t *testing.T) {
	set(t, "lockers", "lockcache.own.Lock")
	rec := &linttest.Recorder{TB: t}
	linttest.Run(rec, "testdata", statuslint.Analyzer, "lockcache")
	if got := strings.Join(rec.Errs, "\n"); strings.Count(got, "no finding matching") != 1 ||
		!strings.Contains(got, "lockcache.go:105:") {
		t.Errorf("with -lockers, want only SetWithOwnLock's finding gone; got:\n%s", got)
	}
}

// set sets a flag of the analyzer for the rest of the test.
func set(t *testing.T, name, value string) {
	t.Helper()
	f := statuslint.Analyzer.Flags.Lookup(name)
	old := f.Value.String()
	if err := f.Value.Set(value); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Value.Set(old) })
}

// TestLibraries checks, in the test module testdata/corpus, code that
// touches files through the libraries services use — afero, viper, koanf,
// go-billy, YAML and TOML codecs — and under the file locks of gofrs/flock,
// lockedfile, flock(2) and fcntl(2). The libraries are real modules (the
// go command downloads them); statuslint analyses their bodies as it does
// in a real run. Each locked read-modify-write has an unlocked control that
// must be reported.
func TestLibraries(t *testing.T) {
	linttest.RunModule(t, filepath.Join("..", "testdata", "corpus"), statuslint.Analyzer,
		"statuslint.test/corpus/libs/aferofs", "statuslint.test/corpus/libs/viperconf",
		"statuslint.test/corpus/libs/koanfconf", "statuslint.test/corpus/libs/billyfs",
		"statuslint.test/corpus/libs/codecs", "statuslint.test/corpus/libs/locks",
		"statuslint.test/corpus/libs/parsers", "statuslint.test/corpus/libs/inifile")
}

// TestUnfollowed checks -unfollowed, which reports where the analysis does
// not follow a document (package unfollowed, with its CONTROLs, which are
// followed) or gave up (package deepchain). Its CONTROL is the same run
// without the flag, which reports none of them.
func TestUnfollowed(t *testing.T) {
	control := &linttest.Recorder{TB: t}
	linttest.Run(control, "testdata", statuslint.Analyzer, "unfollowed", "deepchain")
	if got := strings.Count(strings.Join(control.Errs, "\n"), "no finding matching"); got != 3 {
		t.Errorf("without -unfollowed: %d places missed, want 3 (every one):\n%s", got, strings.Join(control.Errs, "\n"))
	}

	set(t, "unfollowed", "true")
	linttest.Run(t, "testdata", statuslint.Analyzer, "unfollowed", "deepchain")
}
