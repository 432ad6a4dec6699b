package main

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// demoRow is one parsed row of the demo's table.
type demoRow struct {
	lock, write                             string
	attempted, lost, readerTorn, writerTorn int64
}

func (r demoRow) torn() int64 { return r.readerTorn + r.writerTorn }

// parseDemoTable finds the table (after the setup line) in the demo's
// output and returns its rows by side.
func parseDemoTable(t *testing.T, out string) map[string]demoRow {
	t.Helper()
	lines := strings.Split(out, "\n")
	head := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "side ") })
	if head < 1 || len(lines) < head+5 || !strings.Contains(lines[head+1], "-+-") {
		t.Fatalf("no table after a setup line in the output:\n%s", out)
	}
	for _, h := range tableHeader {
		if !strings.Contains(lines[head], h) {
			t.Errorf("header lacks %q: %s", h, lines[head])
		}
	}
	rows := make(map[string]demoRow)
	for _, line := range lines[head+2 : head+5] {
		cells := strings.Split(line, "|")
		if len(cells) != len(tableHeader) {
			t.Fatalf("row has %d cells: %q", len(cells), line)
		}
		num := func(i int) int64 {
			s := strings.TrimSpace(cells[i])
			if s == "all (corrupt)" {
				return -1
			}
			s, _, _ = strings.Cut(s, " of ") // torn reads: readers, "N of reads"
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				t.Fatalf("cell %d of %q: %v", i, line, err)
			}
			return n
		}
		rows[strings.TrimSpace(cells[0])] = demoRow{
			lock: strings.TrimSpace(cells[1]), write: strings.TrimSpace(cells[2]),
			attempted: num(3), lost: num(4), readerTorn: num(5), writerTorn: num(6),
		}
	}
	return rows
}

// TestDemo runs the real demo (workers are re-executions of this test
// binary) with small numbers. The status.Mutate side must lose nothing and
// see no torn read. Both controls must be seen to lose updates: that proves
// the harness detects the bug it claims status.Mutate avoids. Their losses
// are races, so the test allows a few runs for them to show; 3×4 writers
// without a lock lose updates in practically every run. The RMW+rename
// control must see no torn read in any run: that is fs.WriteAtomic's
// guarantee, not a race.
func TestDemo(t *testing.T) {
	const attempts = 3
	args := []string{"--procs", "3", "--goroutines", "4", "--updates", "25", "--readers", "1"}
	bareLost, atomicLost := false, false
	for i := 1; ; i++ {
		r := demo(t, args...).want(t, exitOK)
		rows := parseDemoTable(t, r.stdout)
		bare, atomic, mutate := rows["control: bare RMW"], rows["control: RMW+rename"], rows["status.Mutate"]
		if setup := strings.ReplaceAll(r.stdout, "\n  ", " "); !strings.Contains(setup, "Each side: 3 processes × 4 goroutines make 25 read-modify-write updates each (300 in all)") {
			t.Fatalf("no setup line for 3×4 writers and 300 updates:\n%s", r.stdout)
		}
		for name, row := range map[string]demoRow{"bare": bare, "atomic": atomic, "status.Mutate": mutate} {
			if row.attempted != 3*4*25 {
				t.Fatalf("%s row: %+v, want 300 attempts\n%s", name, row, r.stdout)
			}
		}
		if mutate.lock != "flock" || bare.lock != "none" || atomic.write != "rename, fsync each" {
			t.Errorf("lock/write cells do not say how each side writes: %+v %+v %+v", bare, atomic, mutate)
		}
		if mutate.lost != 0 || mutate.torn() != 0 {
			t.Fatalf("status.Mutate lost %d updates, saw %d torn reads\n%s", mutate.lost, mutate.torn(), r.stdout)
		}
		if atomic.torn() != 0 {
			t.Fatalf("RMW+rename control saw %d torn reads; atomic writes must prevent them\n%s", atomic.torn(), r.stdout)
		}
		if !strings.Contains(r.stdout, "status.Mutate: OK") {
			t.Errorf("no verdict line for status.Mutate:\n%s", r.stdout)
		}
		if !strings.Contains(r.stderr, "worker processes") {
			t.Errorf("no progress on stderr:\n%s", r.stderr)
		}
		t.Logf("run %d: bare control lost %d (-1: file left corrupt), %d torn reads; RMW+rename lost %d",
			i, bare.lost, bare.torn(), atomic.lost)
		bareLost = bareLost || bare.lost != 0
		atomicLost = atomicLost || atomic.lost != 0
		if bareLost && atomicLost {
			return
		}
		if bare.lost == 0 && !strings.Contains(r.stdout, "control: bare RMW: lost NOTHING this run") {
			t.Errorf("a control run without loss is not reported plainly:\n%s", r.stdout)
		}
		if i == attempts {
			t.Fatalf("in %d runs the bare control lost updates: %v, the RMW+rename control: %v; the harness does not show the race\n%s",
				attempts, bareLost, atomicLost, r.stdout)
		}
	}
}

func TestDemoKeepsDirWhenAsked(t *testing.T) {
	dir := t.TempDir()
	r := demo(t, "--procs", "1", "--goroutines", "2", "--updates", "3", "--readers", "0", "--dir", dir).want(t, exitOK)
	if !strings.Contains(r.stdout, "Files kept in "+dir) {
		t.Errorf("output does not say where the files are:\n%s", r.stdout)
	}
	for _, name := range []string{"control.json", "control-atomic.json", "mutate.json"} {
		if _, err := os.Stat(dir + "/" + name); err != nil {
			t.Error(err)
		}
	}
}

// TestDemoVerdict checks the judgement on made-up results, including the
// failures a healthy status package never produces.
func TestDemoVerdict(t *testing.T) {
	clean := sideResult{mode: modeMutate, procs: 2, goroutines: 2, attempted: 100, kept: 100, reads: 50}
	lossy := sideResult{mode: modeControl, procs: 2, goroutines: 2, attempted: 100, kept: 40, writerTorn: 10, readerTorn: 3, reads: 50}
	for name, tc := range map[string]struct {
		mutate   sideResult
		control  sideResult
		fail     bool
		contains string
	}{
		"ok":                {clean, lossy, false, "status.Mutate: OK"},
		"control lost none": {clean, sideResult{mode: modeControl, attempted: 100, kept: 100}, false, "lost NOTHING this run"},
		"control corrupt":   {clean, sideResult{mode: modeControl, attempted: 100, finalCorrupt: true}, false, "the file CORRUPT"},
		"atomic control":    {clean, sideResult{mode: modeAtomic, attempted: 100, kept: 10}, false, "stale copies still erase updates"},
		"lost":              {sideResult{mode: modeMutate, attempted: 100, kept: 99}, lossy, true, "1 updates lost"},
		"torn":              {sideResult{mode: modeMutate, attempted: 100, kept: 100, readerTorn: 1}, lossy, true, "1 torn reads"},
		"errors":            {sideResult{mode: modeMutate, attempted: 100, kept: 99, errors: 1, firstError: "boom"}, lossy, true, "boom"},
		"corrupt":           {sideResult{mode: modeMutate, attempted: 100, finalCorrupt: true}, lossy, true, "does not decode"},
	} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			err := printVerdict(&out, []sideResult{tc.control, tc.mutate}, "", false)
			if failed := err != nil; failed != tc.fail {
				t.Errorf("failed = %v (%v), want %v", failed, err, tc.fail)
			}
			if err != nil && exitCode(err) != exitDemoFailed {
				t.Errorf("exit code %d, want %d", exitCode(err), exitDemoFailed)
			}
			if !strings.Contains(out.String(), tc.contains) {
				t.Errorf("output lacks %q:\n%s", tc.contains, out.String())
			}
		})
	}
}

// notifyWriter collects what is written and closes seen once the text
// contains want.
type notifyWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func (w *notifyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *notifyWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// workerPIDs returns the pids the demo announced on stderr.
func workerPIDs(t *testing.T, stderr string) []int {
	t.Helper()
	var pids []int
	for _, line := range strings.Split(stderr, "\n") {
		_, list, ok := strings.Cut(line, "(pids ")
		if !ok {
			continue
		}
		for _, f := range strings.Fields(strings.TrimSuffix(list, ")")) {
			pid, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("bad pid in %q", line)
			}
			pids = append(pids, pid)
		}
	}
	if len(pids) == 0 {
		t.Fatalf("no worker pids on stderr:\n%s", stderr)
	}
	return pids
}
