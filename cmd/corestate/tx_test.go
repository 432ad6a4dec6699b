package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// txWorkspace makes a registry with max_concurrent cap and n queued tasks;
// it returns the registry's path and the tasks' paths.
func txWorkspace(t *testing.T, capacity, n int) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	reg := filepath.Join(dir, "registry.json")
	writeFile(t, reg, fmt.Sprintf(`{"active_count": 0, "max_concurrent": %d, "x_keep": [1, 2.50]}`+"\n", capacity))
	var tasks []string
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("t%d", i), "status.json")
		os.MkdirAll(filepath.Dir(p), 0o755)
		writeFile(t, p, fmt.Sprintf(`{"status": "queued", "task": "t%d"}`+"\n", i))
		tasks = append(tasks, p)
	}
	return reg, tasks
}

// claimArgs claims task and counts it in reg, refusing at the cap.
func claimArgs(reg, task string) []string {
	return []string{"tx", reg, "--if", "active_count<max_concurrent", "active_count+=1", "--", task, "--if", "status=queued", "status=running"}
}

func member(t *testing.T, path, name string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(readFile(t, path)), &m); err != nil {
		t.Fatal(err)
	}
	return string(m[name])
}

func TestTxClaimsAndCounts(t *testing.T) {
	reg, tasks := txWorkspace(t, 1, 2)
	r := corestate(t, claimArgs(reg, tasks[0])...).want(t, exitOK)
	var docs []map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	for dec.More() {
		var d map[string]json.RawMessage
		if err := dec.Decode(&d); err != nil {
			t.Fatalf("output is not a stream of documents: %v\n%s", err, r.stdout)
		}
		docs = append(docs, d)
	}
	if len(docs) != 2 || string(docs[0]["active_count"]) != "1" || string(docs[1]["status"]) != `"running"` {
		t.Fatalf("printed %s", r.stdout)
	}
	// The registry is not a status document: nothing is stamped in it.
	if _, stamped := docs[0]["updated_at"]; stamped || len(docs[1]["updated_at"]) == 0 {
		t.Errorf("updated_at %s and %s: want none in the registry, one in the task", docs[0]["updated_at"], docs[1]["updated_at"])
	}
	if member(t, reg, "active_count") != "1" || member(t, tasks[0], "status") != `"running"` || member(t, reg, "x_keep") != "[1, 2.50]" {
		t.Fatalf("on disk: %s %s", readFile(t, reg), readFile(t, tasks[0]))
	}
	// At the cap: refused, nothing written anywhere.
	before := readFile(t, reg) + readFile(t, tasks[1])
	r = corestate(t, claimArgs(reg, tasks[1])...).want(t, exitConflict)
	if !strings.Contains(r.stderr, "active_count is 1, max_concurrent is 1") {
		t.Errorf("stderr %q: want the values compared", r.stderr)
	}
	if after := readFile(t, reg) + readFile(t, tasks[1]); after != before {
		t.Fatalf("a refused tx wrote:\n%s", after)
	}
	// A guard that fails in the second document stops the first too.
	corestate(t, "set", reg, "max_concurrent=5").want(t, exitOK)
	before = readFile(t, reg)
	corestate(t, claimArgs(reg, tasks[0])...).want(t, exitConflict) // tasks[0] is running
	if readFile(t, reg) != before {
		t.Fatal("the registry changed although the task's guard failed")
	}
	// Finish: the reverse, and a final status is not left.
	corestate(t, "tx", tasks[0], "--if", "status=running", "status=completed", "--", reg, "active_count-=1").want(t, exitOK)
	if member(t, reg, "active_count") != "0" {
		t.Fatalf("registry after finish: %s", readFile(t, reg))
	}
	corestate(t, "tx", reg, "active_count+=1", "--", tasks[0], "status=running").want(t, exitConflict)
	// Nothing to change: nothing written, documents printed as found.
	st, _ := os.Stat(reg)
	corestate(t, "tx", reg, "--", tasks[1]).want(t, exitOK)
	if st2, _ := os.Stat(reg); !os.SameFile(st, st2) {
		t.Fatal("a tx without changes rewrote the registry")
	}
}

func TestTxUsage(t *testing.T) {
	reg, tasks := txWorkspace(t, 1, 1)
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"tx"}, exitUsage},
		{[]string{"tx", "--"}, exitUsage},
		{[]string{"tx", reg, "--", "--", tasks[0]}, exitUsage},
		{[]string{"tx", reg, "--timeout", "1s", "runs+=1"}, exitUsage},
		{[]string{"tx", reg, "--", reg}, exitUsage},
		{[]string{"tx", reg, "runs+=1", "runs=2"}, exitUsage},
		{[]string{"tx", reg, "runs+=x"}, exitUsage},
		{[]string{"tx", reg, "--if"}, exitUsage},
		{[]string{"tx", "--timeout", "-1s", reg}, exitUsage},
		{[]string{"tx", tasks[0], "status+=1"}, exitBadField},
		{[]string{"tx", tasks[0], "--if", "status<3"}, exitBadField},
		{[]string{"tx", reg, "--if", "active_count<"}, exitUsage},
		{[]string{"tx", reg, "--if", "x_keep<1"}, exitBadField},
		{[]string{"tx", tasks[0], "Runs=1"}, exitBadField},
		{[]string{"tx", reg, "--kind", "status", "Runs=1"}, exitBadField},
		{[]string{"tx", reg, "--kind", "other", "x=1"}, exitUsage},
		{[]string{"tx", reg, "--kind"}, exitUsage},
		{[]string{"tx", "--perm", "999", reg, "x=1"}, exitUsage},
	} {
		t.Run(strings.Join(tc.args[1:], " "), func(t *testing.T) {
			before := readFile(t, reg) + readFile(t, tasks[0])
			corestate(t, tc.args...).want(t, tc.code)
			if readFile(t, reg)+readFile(t, tasks[0]) != before {
				t.Fatal("a refused tx wrote")
			}
		})
	}
	corestate(t, "help", "tx").want(t, exitOK)
}

func TestSetComparisonGuards(t *testing.T) {
	path := tempFile(t, "status.json")
	writeFile(t, path, `{"status": "running", "runs": 2, "limit": 3}`+"\n")
	corestate(t, "incr", path, "runs", "--if", "runs<limit").want(t, exitOK)
	r := corestate(t, "incr", path, "runs", "--if", "runs<limit").want(t, exitConflict)
	if !strings.Contains(r.stderr, "runs is 3, limit is 3") {
		t.Errorf("stderr %q", r.stderr)
	}
	corestate(t, "set", path, "note=x", "--if", "runs>=3", "--if", "runs<=3.0", "--if", "missing<1").want(t, exitOK)
	corestate(t, "set", path, "note=y", "--if", "runs>3").want(t, exitConflict)
	if member(t, path, "note") != `"x"` {
		t.Fatalf("note %s", member(t, path, "note"))
	}
}

// Goroutines race to claim their own task against a cap of 3, and claimed
// tasks finish; no claim may exceed the cap, and the registry must match
// the status files at the end.
func TestTxConcurrentClaimsRespectTheCap(t *testing.T) {
	const n, capacity = 8, 3
	reg, tasks := txWorkspace(t, capacity, n)
	claimed := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			claimed[i] = corestate(t, claimArgs(reg, tasks[i])...).code == exitOK
		})
	}
	wg.Wait()
	won := 0
	for i, ok := range claimed {
		running := member(t, tasks[i], "status") == `"running"`
		if ok != running {
			t.Fatalf("task %d: claim exit %v, status running %v", i, ok, running)
		}
		if ok {
			won++
		}
	}
	if won != capacity || member(t, reg, "active_count") != fmt.Sprint(capacity) {
		t.Fatalf("%d claims won, registry %s; want %d", won, readFile(t, reg), capacity)
	}
}

// corestate tx processes SIGKILLed at random moments: after each kill the
// next tx (which completes or undoes what the killed one left) finds the
// registry's count equal to the number of running tasks.
func TestTxCrossProcessKilled(t *testing.T) {
	const tasks = 4
	reg, paths := txWorkspace(t, tasks, tasks)
	for round := range 12 {
		i := round % tasks
		args := claimArgs(reg, paths[i])
		if member(t, paths[i], "status") == `"running"` {
			args = []string{"tx", paths[i], "--if", "status=running", "status=queued", "--", reg, "active_count-=1"}
		}
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), asCorestateEnv+"=1")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if round%2 == 0 {
			// A random moment from start-up to exit (a process takes
			// tens of milliseconds): the delay only picks it.
			time.Sleep(rand.N(60 * time.Millisecond))
			cmd.Process.Signal(syscall.SIGKILL)
		}
		cmd.Wait()
		// The next locker: a tx that changes nothing reads both under
		// their locks.
		corestate(t, append([]string{"tx", reg}, txRest(paths)...)...).want(t, exitOK)
		running := 0
		for _, p := range paths {
			if member(t, p, "status") == `"running"` {
				running++
			}
		}
		if got := member(t, reg, "active_count"); got != fmt.Sprint(running) {
			t.Fatalf("round %d: active_count %s, %d tasks running", round, got, running)
		}
	}
}

func txRest(paths []string) []string {
	var args []string
	for _, p := range paths {
		args = append(args, "--", p)
	}
	return args
}

// A tx whose commit recovery would refuse (here its markers: the journal's
// directory has 4001 bytes, one past what a 4 KiB marker holds) is refused
// before anything is written, naming the limit.
func TestTxPastLimitRefused(t *testing.T) {
	d := t.TempDir()
	for len(d) < 4001 {
		k := min(200, 4001-len(d)-1)
		if 4001-len(d)-1-k == 1 {
			k-- // leave room for one more "/x"
		}
		d += "/" + strings.Repeat("d", k)
	}
	if err := os.MkdirAll(d, 0o755); err != nil || len(d) != 4001 {
		t.Fatalf("%d bytes: %v", len(d), err)
	}
	a, b := d+"/a.json", d+"/b.json"
	writeFile(t, a, `{"n": 0}`+"\n")
	writeFile(t, b, `{"n": 0}`+"\n")
	r := corestate(t, "tx", a, "n+=1", "--", b, "n+=1").want(t, exitError)
	if !strings.Contains(r.stderr, "transaction over the limits recovery trusts") || !strings.Contains(r.stderr, "limit 4096") {
		t.Errorf("stderr %q: want the limit named", r.stderr)
	}
	if readFile(t, a)+readFile(t, b) != `{"n": 0}`+"\n"+`{"n": 0}`+"\n" {
		t.Fatal("a refused tx wrote")
	}
}
