package strace_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentstate/core/internal/strace"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A durable replace as strace -f logs it, with one call split across
// threads (unfinished/resumed).
const durableLog = `100 openat(AT_FDCWD, "/r/sub", O_RDONLY|O_CLOEXEC|O_DIRECTORY) = 3
100 openat(3, ".status.json.0123456789abcdef.tmp", O_RDWR|O_CREAT|O_EXCL|O_CLOEXEC, 0644) = 4
100 write(4, "{}", 2) = 2
101 fsync(4 <unfinished ...>
100 getpid() = 100
101 <... fsync resumed>) = 0
100 close(4) = 0
100 renameat(3, ".status.json.0123456789abcdef.tmp", 3, "status.json") = 0
100 fsync(3) = 0
100 close(3) = 0
`

func TestParseAndReplaceOf(t *testing.T) {
	events, err := strace.Parse(strings.NewReader(durableLog))
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 8 {
		t.Fatalf("%d events, want 8 (getpid is not parsed): %+v", len(events), events)
	}
	if ev := events[3]; ev.Call != "fsync" || ev.Path != "/r/sub/.status.json.0123456789abcdef.tmp" || ev.Start != 3 {
		t.Errorf("resumed fsync = %+v", ev)
	}
	got, err := strace.ReplaceOf(events, "/r/sub/status.json")
	if err != nil {
		t.Fatal(err)
	}
	want := strace.Replace{Target: "/r/sub/status.json", Temp: "/r/sub/.status.json.0123456789abcdef.tmp",
		Exclusive: true, TempSyncedBeforeMove: true, TempClosedBeforeMove: true, DirSyncedAfterMove: true}
	if got != want {
		t.Errorf("ReplaceOf = %+v\nwant %+v", got, want)
	}
}

// A close split across its return (unfinished/resumed) frees its fd when it
// starts: another thread's open may get the fd, and that thread's writes are
// on the new file, even though the close's return is logged after them.
func TestParseFdReusedDuringSplitClose(t *testing.T) {
	const log = `100 openat(AT_FDCWD, "/r/a", O_RDWR) = 5
100 close(5 <unfinished ...>
101 openat(AT_FDCWD, "/r/b", O_RDWR|O_CREAT|O_EXCL, 0644) = 5
101 write(5, "{}", 2) = 2
100 <... close resumed>) = 0
101 fsync(5) = 0
`
	events, err := strace.Parse(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, ev := range events {
		paths = append(paths, ev.Call+" "+ev.Path)
	}
	want := []string{"openat /r/a", "openat /r/b", "write /r/b", "close /r/a", "fsync /r/b"}
	if strings.Join(paths, ", ") != strings.Join(want, ", ") {
		t.Errorf("events %q\nwant %q", paths, want)
	}
}

// Each step missing from the log is reported missing: the analysis can fail.
func TestReplaceOfSeesMissingSteps(t *testing.T) {
	drop := func(line string) string { return strings.Replace(durableLog, line+"\n", "", 1) }
	for name, tt := range map[string]struct {
		log   string
		check func(strace.Replace) bool
	}{
		"no file fsync": {drop("101 <... fsync resumed>) = 0"), func(r strace.Replace) bool { return !r.TempSyncedBeforeMove }},
		"no dir fsync":  {drop("100 fsync(3) = 0"), func(r strace.Replace) bool { return !r.DirSyncedAfterMove }},
		"no close":      {drop("100 close(4) = 0"), func(r strace.Replace) bool { return !r.TempClosedBeforeMove }},
		"no O_EXCL":     {strings.Replace(durableLog, "O_EXCL|", "", 1), func(r strace.Replace) bool { return !r.Exclusive }},
	} {
		events, err := strace.Parse(strings.NewReader(tt.log))
		if err != nil {
			t.Fatal(err)
		}
		r, err := strace.ReplaceOf(events, "/r/sub/status.json")
		if err != nil || !tt.check(r) {
			t.Errorf("%s: ReplaceOf = %+v, %v", name, r, err)
		}
	}
	events, _ := strace.Parse(strings.NewReader(drop(`100 renameat(3, ".status.json.0123456789abcdef.tmp", 3, "status.json") = 0`)))
	if _, err := strace.ReplaceOf(events, "/r/sub/status.json"); err == nil {
		t.Error("ReplaceOf found a rename in a log without one")
	}
}

// Run traces a real command; without strace it says so with
// exec.ErrNotFound (make test installs strace).
func TestRun(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "f")
	events, err := strace.Run(exec.Command("sh", "-c", "echo x > "+target))
	if errors.Is(err, exec.ErrNotFound) {
		t.Skip("skipped: strace is not installed (make test installs it)")
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		if ev.Call == "openat" && ev.Path == target && ev.Ret >= 0 {
			if _, err := os.Stat(target); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no openat of %s among %d events", target, len(events))
}
