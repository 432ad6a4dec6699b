package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentstate/core/status/claim"
)

// sleeper starts a process that runs until the test ends or it is killed,
// and returns it with its owner as corestate owner prints it.
func sleeper(t *testing.T) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command("sleep", "1000")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	out := corestate(t, "owner", strconv.Itoa(cmd.Process.Pid)).want(t, exitOK).stdout
	return cmd, strings.TrimSpace(out)
}

func killed(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	cmd.Process.Kill()
	cmd.Wait()
}

// reapLines parses reap's output into "released FILE" and "unknown FILE"
// entries (the claim left out), sorted.
func reapLines(t *testing.T, out string) []string {
	t.Helper()
	var got []string
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 3 || !json.Valid([]byte(f[2])) {
			t.Fatalf("reap printed %q", line)
		}
		got = append(got, f[0]+" "+filepath.Base(filepath.Dir(f[1]))+"/"+filepath.Base(f[1]))
	}
	slices.Sort(got)
	return got
}

func TestOwnerCommand(t *testing.T) {
	cmd, out := sleeper(t)
	var printed claim.Owner
	if err := json.Unmarshal([]byte(out), &printed); err != nil {
		t.Fatalf("owner printed %q: %v", out, err)
	}
	want, err := claim.Of(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, printed); diff != "" {
		t.Errorf("owner (-claim.Of +printed):\n%s", diff)
	}
	killed(t, cmd)
	corestate(t, "owner", strconv.Itoa(cmd.Process.Pid)).want(t, exitNotFound)
	for _, args := range [][]string{{"owner"}, {"owner", "x"}, {"owner", "0"}, {"owner", "1", "2"}} {
		corestate(t, args...).want(t, exitUsage)
	}
	for _, cmd := range []string{"reap", "owner"} {
		if r := corestate(t, "help", cmd).want(t, exitOK); !strings.HasPrefix(r.stdout, "Usage: corestate "+cmd) {
			t.Errorf("help %s:\n%s", cmd, r.stdout)
		}
		if !strings.Contains(corestate(t, "help").stdout, "corestate "+cmd) {
			t.Errorf("help does not mention %s", cmd)
		}
	}
}

// TestReapMember: three tasks claimed from a shell (tx: count in the
// registry, claim the task, record the owner): one owner is killed, one
// runs, one is on another host. reap releases the killed owner's claim
// only: its owner removed, its task failed, the count down by one; the
// other host's claim is listed as unknown, and released by --dead-host.
func TestReapMember(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "registry.json")
	writeFile(t, reg, `{"active_count": 0, "max_concurrent": 5}`)
	owners := map[string]string{}
	var dead *exec.Cmd
	dead, owners["dead"] = sleeper(t)
	_, owners["live"] = sleeper(t)
	owners["remote"] = `{"host":"elsewhere","boot":"00000000-0000-4000-8000-000000000000","pidns":4026531836,"pid":7,"start":99}`
	var tasks []string
	for _, name := range []string{"dead", "live", "remote"} {
		task := filepath.Join(dir, name, "status.json")
		os.Mkdir(filepath.Dir(task), 0o755)
		writeFile(t, task, `{"status": "queued", "task": "`+name+`"}`)
		corestate(t, "tx", reg, "--if", "active_count<max_concurrent", "active_count+=1",
			"--", task, "--if", "status=queued", "status=running", "owner="+owners[name]).want(t, exitOK)
		tasks = append(tasks, task)
	}
	killed(t, dead)

	reap := append([]string{"reap", "--count", reg + ":active_count", "--set", "status=failed"}, tasks...)
	out := corestate(t, reap...).want(t, exitOK).stdout
	if diff := cmp.Diff([]string{"released dead/status.json", "unknown remote/status.json"}, reapLines(t, out)); diff != "" {
		t.Errorf("reap printed (-want +got):\n%s\n%s", diff, out)
	}
	if !strings.Contains(out, "\t"+owners["dead"]+"\n") {
		t.Errorf("reap did not print the released owner as recorded:\n%s", out)
	}
	get := func(file, field string) string {
		r := corestate(t, "get", file, field)
		if r.code == exitNotFound {
			return "<absent>"
		}
		return strings.TrimSpace(r.want(t, exitOK).stdout)
	}
	for _, c := range []struct{ file, field, want string }{
		{reg, "active_count", "2"},
		{tasks[0], "status", "failed"},
		{tasks[0], "owner", "<absent>"},
		{tasks[1], "status", "running"},
		{tasks[1], "owner", owners["live"]},
		{tasks[2], "status", "running"},
	} {
		if got := get(c.file, c.field); got != c.want {
			t.Errorf("%s %s = %s; want %s", c.file, c.field, got, c.want)
		}
	}
	if got := reapLines(t, corestate(t, reap...).want(t, exitOK).stdout); !slices.Equal(got, []string{"unknown remote/status.json"}) {
		t.Errorf("second reap: %v", got)
	}

	out = corestate(t, append([]string{reap[0], "--dead-host", "elsewhere"}, reap[1:]...)...).want(t, exitOK).stdout
	if got := reapLines(t, out); !slices.Equal(got, []string{"released remote/status.json"}) {
		t.Errorf("reap --dead-host elsewhere: %v", got)
	}
	if got := get(reg, "active_count"); got != "1" {
		t.Errorf("active_count %s; want 1 (the live owner's)", got)
	}
}

// TestReapInArray: a seed-style registry keeps its agents, with their
// owners, in an array, and counts them in the same document. reap --in
// removes the dead owners' elements and counts them down, keeping every
// other element's bytes; elements without an owner are not claims.
func TestReapInArray(t *testing.T) {
	dead, deadOwner := sleeper(t)
	_, liveOwner := sleeper(t)
	reg := tempFile(t, "AGENT_REGISTRY.json")
	writeFile(t, reg, fmt.Sprintf(`{"active_count": 3, "agents": [
		{"id": "a", "owner": %s, "note": "<x> & \u00e9"},
		{"id": "b", "owner": %s},
		{"id": "c", "owner": null},
		"not an object"
	]}`, deadOwner, liveOwner))
	killed(t, dead)
	out := corestate(t, "reap", "--in", "agents", "--count", "active_count", reg).want(t, exitOK).stdout
	if !strings.HasPrefix(out, "released\t") || strings.Count(out, "\n") != 1 || !strings.Contains(out, `"note":"<x> & \u00e9"`) {
		t.Errorf("reap printed:\n%s", out)
	}
	want := fmt.Sprintf(`[{"id":"b","owner":%s},{"id":"c","owner":null},"not an object"]`, liveOwner)
	if got := strings.TrimSpace(corestate(t, "get", reg, "agents").want(t, exitOK).stdout); got != want {
		t.Errorf("agents after reap:\n%s\nwant\n%s", got, want)
	}
	if got := strings.TrimSpace(corestate(t, "get", reg, "active_count").stdout); got != "2" {
		t.Errorf("active_count %s; want 2", got)
	}
}

// TestReapRefuses: bad input changes nothing and exits with its code.
func TestReapRefuses(t *testing.T) {
	dead, deadOwner := sleeper(t)
	killed(t, dead)
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		writeFile(t, p, content)
		return p
	}
	completed := file("status.json", `{"status":"completed","owner":`+deadOwner+`}`)
	reg := file("reg.json", `{"n": 1}`)
	for _, c := range []struct {
		name string
		args []string
		code int
	}{
		{"no FILE", []string{"reap"}, exitUsage},
		{"empty member", []string{"reap", "--member", "", completed}, exitUsage},
		{"--set with --in", []string{"reap", "--in", "agents", "--set", "status=failed", completed}, exitUsage},
		{"bad --count", []string{"reap", "--count", reg + ":", completed}, exitUsage},
		{"--count of a status.Status string", []string{"reap", "--count", "status", completed}, exitBadField},
		{"bad --set", []string{"reap", "--set", "status=bogus", completed}, exitBadField},
		{"missing FILE", []string{"reap", filepath.Join(dir, "nothere.json")}, exitNotFound},
		{"missing counting document", []string{"reap", "--count", filepath.Join(dir, "nothere.json") + ":n", completed}, exitNotFound},
		{"owner not an object", []string{"reap", file("str.json", `{"owner":"pid 5"}`)}, exitBadField},
		{"owner with a wrong type", []string{"reap", file("type.json", `{"owner":{"pid":"5"}}`)}, exitBadField},
		{"array not an array", []string{"reap", "--in", "agents", file("arr.json", `{"agents":{}}`)}, exitBadField},
		{"identical claims", []string{"reap", "--in", "agents", file("dup.json", `{"agents":[{"owner":`+deadOwner+`},{"owner":`+deadOwner+`}]}`)}, exitBadField},
		{"counted field not a number", []string{"reap", "--count", file("s.json", `{"n":"x"}`) + ":n", completed}, exitBadField},
		{"final status left", []string{"reap", "--count", reg + ":n", "--set", "status=failed", completed}, exitConflict},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := readFile(t, completed) + readFile(t, reg)
			corestate(t, c.args...).want(t, c.code)
			if after := readFile(t, completed) + readFile(t, reg); after != before {
				t.Errorf("changed:\n%s\nto\n%s", before, after)
			}
		})
	}
}

// TestReapProcessesAtOnce: four reap processes at once over twenty task
// files whose owners were killed, counting into one registry: each claim
// is released by exactly one of them, and active_count comes down by
// exactly twenty. CONTROL: the reconciler a shell script would write
// (get the owner, check it, then incr -1 and set, each its own process),
// run by two scripts that both checked before either wrote, counts a
// claim down twice.
func TestReapProcessesAtOnce(t *testing.T) {
	setup := func(t *testing.T, n int) (string, []string) {
		dir := t.TempDir()
		reg := filepath.Join(dir, "registry.json")
		writeFile(t, reg, fmt.Sprintf(`{"active_count": %d}`, n+1))
		var tasks []string
		_, liveOwner := sleeper(t)
		for i := range n + 1 {
			task := filepath.Join(dir, fmt.Sprintf("t%02d.json", i))
			owner := liveOwner
			if i < n {
				var dead *exec.Cmd
				dead, owner = sleeper(t)
				killed(t, dead)
			}
			writeFile(t, task, `{"status":"running","owner":`+owner+`}`)
			tasks = append(tasks, task)
		}
		return reg, tasks
	}

	t.Run("reap", func(t *testing.T) {
		const n = 20
		reg, tasks := setup(t, n)
		args := append([]string{"reap", "--count", reg + ":active_count", "--set", "status=failed"}, tasks...)
		var mu sync.Mutex
		var released []string
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				code, out, err := corestateProc(args...)
				if err != nil || code != exitOK {
					t.Errorf("reap: exit %d, %v", code, err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				for _, l := range reapLines(t, out) {
					if name, ok := strings.CutPrefix(l, "released "); ok {
						released = append(released, name)
					}
				}
			})
		}
		wg.Wait()
		slices.Sort(released)
		if len(released) != n || len(slices.Compact(slices.Clone(released))) != n {
			t.Errorf("%d releases, of %d claims: %v", len(released), n, released)
		}
		if got := strings.TrimSpace(corestate(t, "get", reg, "active_count").stdout); got != "1" {
			t.Errorf("active_count %s; want 1", got)
		}
	})

	t.Run("CONTROL get, check, then write", func(t *testing.T) {
		reg, tasks := setup(t, 1)
		decide := func() bool {
			out := corestate(t, "get", tasks[0], "owner").want(t, exitOK).stdout
			var o claim.Owner
			json.Unmarshal([]byte(out), &o)
			l, _ := claim.Local(t.Context(), o)
			return l == claim.Dead
		}
		first, second := decide(), decide()
		for _, dead := range []bool{first, second} {
			if dead {
				corestate(t, "incr", reg, "active_count", "--", "-1").want(t, exitOK)
				corestate(t, "set", tasks[0], "owner=null", "status=failed").want(t, exitOK)
			}
		}
		got := strings.TrimSpace(corestate(t, "get", reg, "active_count").stdout)
		if got == "1" {
			t.Fatal("CONTROL: two scripts that checked before writing counted the claim down once")
		}
		t.Logf("CONTROL: active_count %s after one dead claim; want 1", got)
	})
}
