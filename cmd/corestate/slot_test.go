package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/slots"
)

// slotFleet is a registry and queued tasks in a new directory.
func slotFleet(t *testing.T, policy string, tasks ...string) (dir, reg string) {
	t.Helper()
	dir = t.TempDir()
	reg = filepath.Join(dir, "registry.json")
	writeFile(t, reg, policy)
	for _, name := range tasks {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, name, "status.json"), `{"status": "queued"}`)
	}
	return dir, reg
}

func readSlot(t *testing.T, line string) slots.Slot {
	t.Helper()
	var s slots.Slot
	if err := json.Unmarshal([]byte(line), &s); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	return s
}

func loadRegistry(t *testing.T, reg string) slots.Registry {
	t.Helper()
	r, err := status.NewStore[slots.Registry](reg).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func taskState(t *testing.T, path string) string {
	t.Helper()
	return strings.TrimSpace(corestate(t, "get", path, "status").want(t, exitOK).stdout)
}

func pid() string { return strconv.Itoa(os.Getpid()) }

// A retried reserve with the same --key prints the active slot and exits
// 10, writing nothing: one slot, the task moved once.
func TestSlotReserveRetry(t *testing.T) {
	dir, reg := slotFleet(t, `{"max_concurrent": 2}`, "fix-42")
	task := filepath.Join(dir, "fix-42", "status.json")
	args := []string{"slot", "reserve", "--key", "fix-42", "--owner", pid(), "--resource", "log=/var/log/fix-42", reg,
		"--", task, "--if", "status=queued", "status=running"}
	first := readSlot(t, corestate(t, args...).want(t, exitOK).stdout)
	before := readFile(t, reg)
	again := corestate(t, args...)
	if again.code != exitExists {
		t.Fatalf("retry: exit %d, want %d; stderr %s", again.code, exitExists, again.stderr)
	}
	if s := readSlot(t, again.stdout); s.ID != first.ID {
		t.Errorf("retry printed slot %s, want %s", s.ID, first.ID)
	}
	if readFile(t, reg) != before {
		t.Error("the retry wrote the registry")
	}
	r := loadRegistry(t, reg)
	if len(r.Agents) != 1 || r.ActiveCount != 1 || r.TotalSpawned != 1 || taskState(t, task) != "running" {
		t.Errorf("after the retry: %d slots, active_count %d, total_spawned %d, task %s", len(r.Agents), r.ActiveCount, r.TotalSpawned, taskState(t, task))
	}
	if got := r.Agents[0].Docs; len(got) != 1 || got[0] != "fix-42/status.json" {
		t.Errorf("docs recorded: %q", got)
	}
}

// Refusals exit 8 and write nothing; a registry breaking the rules exits
// 3; a slot that is gone exits 2.
func TestSlotRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, policy string
		args         []string
		code         int
	}{
		{"full", `{"max_concurrent": 0}`, []string{"reserve", "--owner", pid()}, exitConflict},
		{"too deep", `{"max_concurrent": 5, "agents": [{"id": "p", "depth": 0}]}`, []string{"reserve", "--parent", "p", "--owner", pid()}, exitConflict},
		{"no parent", `{"max_concurrent": 5, "max_depth": 2}`, []string{"reserve", "--parent", "p", "--owner", pid()}, exitConflict},
		{"total", `{"max_concurrent": 5, "max_total": 1, "total_spawned": 1}`, []string{"reserve", "--owner", pid()}, exitConflict},
		{"invalid", `{"max_concurrent": 5, "agents": [{"id": "p", "depth": 3}]}`, []string{"reserve", "--owner", pid()}, exitCorrupt},
		{"corrupt", `{"max_concurrent": "5"}`, []string{"reserve", "--owner", pid()}, exitCorrupt},
		{"release gone", `{"max_concurrent": 5}`, []string{"release", "REG", "nope"}, exitNotFound},
		{"adopt gone", `{"max_concurrent": 5}`, []string{"adopt", "--owner", pid(), "REG", "nope"}, exitNotFound},
		{"adopted", `{"max_concurrent": 5, "agents": [{"id": "p", "depth": 0, "adopted_at": "2026-01-01T00:00:00Z", "owner": {"pid": 1}}]}`,
			[]string{"abort", "REG", "p"}, exitConflict},
		{"children", `{"max_concurrent": 5, "max_depth": 1, "agents": [{"id": "p", "depth": 0}, {"id": "c", "parent": "p", "depth": 1}]}`,
			[]string{"release", "REG", "p"}, exitConflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, reg := slotFleet(t, tc.policy)
			args := []string{"slot"}
			for _, a := range tc.args {
				if a == "REG" {
					a = reg
				}
				args = append(args, a)
			}
			if !strings.Contains(strings.Join(tc.args, " "), "REG") {
				args = append(args, reg)
			}
			corestate(t, args...).want(t, tc.code)
			if got := readFile(t, reg); got != tc.policy {
				t.Errorf("the registry changed:\n%s", got)
			}
		})
	}
}

func TestSlotUsage(t *testing.T) {
	dir, reg := slotFleet(t, `{"max_concurrent": 5}`)
	outside := filepath.Join(t.TempDir(), "status.json")
	for _, args := range [][]string{
		{"slot"},
		{"slot", "bogus", reg},
		{"slot", "reserve"},
		{"slot", "reserve", "--owner", pid(), reg, "extra"},
		{"slot", "reserve", "--owner", pid(), reg, "--", outside},
		{"slot", "reserve", "--owner", pid(), "--resource", "novalue", reg},
		{"slot", "reserve", "--owner", pid(), "--key", "a\tb", reg},
		{"slot", "release", reg},
		{"slot", "release", reg, "x", "--", "cmd"},
		{"slot", "release", reg, "x", "--bogus"},
		{"slot", "handover", reg, "x"},
		{"slot", "handover", reg, "x", "0"},
		{"slot", "adopt", "--owner", pid(), reg, "x", "--", "sleep"},
		{"slot", "adopt", reg, "x", "--"},
		{"slot", "list", "--timeout", "-1s", reg},
		{"slot", "reap", "--json", reg},
	} {
		t.Run(strings.Join(args, "_"), func(t *testing.T) {
			corestate(t, args...).want(t, exitUsage)
		})
	}
	if got := readFile(t, reg); got != `{"max_concurrent": 5}` {
		t.Errorf("the registry changed:\n%s", got)
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Errorf("the document outside %s was written", dir)
	}
}

// Abort puts the task back, prints the resources for the caller, and
// refuses once the agent adopted the slot; release applies its OPs to the
// recorded documents.
func TestSlotAbortAndRelease(t *testing.T) {
	dir, reg := slotFleet(t, `{"max_concurrent": 5}`, "a", "b")
	ta, tb := filepath.Join(dir, "a", "status.json"), filepath.Join(dir, "b", "status.json")
	reserve := func(id, task string) {
		corestate(t, "slot", "reserve", "--id", id, "--owner", pid(), "--resource", "prompt=/tmp/prompt-"+id, "--member", `type="reviewer"`,
			reg, "--", task, "--if", "status=queued", "status=running").want(t, exitOK)
	}
	reserve("a", ta)
	s := readSlot(t, corestate(t, "slot", "abort", reg, "a", "--if", "status=running", "status=queued").want(t, exitOK).stdout)
	if s.Resources["prompt"] != "/tmp/prompt-a" || taskState(t, ta) != "queued" {
		t.Errorf("abort printed %+v; task %s", s, taskState(t, ta))
	}
	if typ, _ := s.Members.Get("type"); string(typ) != `"reviewer"` {
		t.Errorf("member type: %s", typ)
	}
	reserve("b", tb)
	corestate(t, "slot", "adopt", "--owner", pid(), reg, "b").want(t, exitOK)
	corestate(t, "slot", "adopt", "--owner", pid(), reg, "b").want(t, exitOK) // the owner confirms
	corestate(t, "slot", "handover", reg, "b", strconv.Itoa(os.Getppid())).want(t, exitConflict)
	corestate(t, "slot", "abort", reg, "b", "--if", "status=running", "status=queued").want(t, exitConflict)
	corestate(t, "slot", "release", reg, "b", "--if", "status=queued", "status=completed").want(t, exitConflict)
	if got := taskState(t, tb); got != "running" {
		t.Errorf("refused commands changed task b to %s", got)
	}
	corestate(t, "slot", "release", reg, "b", "--if", "status=running", "status=completed").want(t, exitOK)
	r := loadRegistry(t, reg)
	if len(r.Agents) != 0 || r.ActiveCount != 0 || r.TotalSpawned != 2 || taskState(t, tb) != "completed" {
		t.Errorf("after release: %d slots, active_count %d, total_spawned %d, task %s", len(r.Agents), r.ActiveCount, r.TotalSpawned, taskState(t, tb))
	}
}

// list prints each slot's liveness, age and owner; --json the same as
// JSON lines.
func TestSlotList(t *testing.T) {
	_, reg := slotFleet(t, `{"max_concurrent": 5, "agents": [
		{"id": "far", "key": "k", "depth": 0, "owner": {"host": "elsewhere", "pid": 1}, "reserved_at": "2020-01-01T00:00:00Z"}]}`)
	corestate(t, "slot", "reserve", "--id", "me", "--owner", pid(), reg).want(t, exitOK)
	out := corestate(t, "slot", "list", reg).want(t, exitOK).stdout
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("list:\n%s", out)
	}
	far, me := strings.Split(lines[0], "\t"), strings.Split(lines[1], "\t")
	if len(far) != 5 || far[0] != "far" || far[1] != "k" || far[2] != "unknown" || far[4] != "pid 1 on elsewhere" {
		t.Errorf("list line %q", lines[0])
	}
	if age, _ := strconv.Atoi(far[3]); age < 86400 {
		t.Errorf("age of far: %s", far[3])
	}
	if len(me) != 5 || me[0] != "me" || me[1] != "-" || me[2] != "alive" {
		t.Errorf("list line %q", lines[1])
	}
	out = corestate(t, "slot", "list", "--json", "--dead-host", "elsewhere", reg).want(t, exitOK).stdout
	var l struct {
		Slot     slots.Slot `json:"slot"`
		Liveness string     `json:"liveness"`
		Age      float64    `json:"age"`
	}
	if err := json.Unmarshal([]byte(strings.Split(out, "\n")[0]), &l); err != nil || l.Slot.ID != "far" || l.Liveness != "dead" || l.Age < 86400 {
		t.Errorf("list --json: %v\n%s", err, out)
	}
}

// A slot that a member of a shared workspace wrote by hand: an owner
// whose host holds a newline, tabs and an escape sequence, and no
// reserved_at. list still prints one line per slot, of five fields, with
// the owner quoted, and the age that Python's list gives (0); --json keeps
// the owner's bytes. CONTROL: the owner in words holds the newline.
func TestSlotListHostileOwner(t *testing.T) {
	host := "x\nb\tfake\talive\t0\tpid 1 on vm\x1b[31m"
	hostJSON, _ := json.Marshal(host)
	_, reg := slotFleet(t, `{"max_concurrent": 5, "agents": [{"id": "a", "depth": 0, "owner": {"host": `+string(hostJSON)+`, "pid": 5}}]}`)
	out := corestate(t, "slot", "list", reg).want(t, exitOK).stdout
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if f := strings.Split(lines[0], "\t"); len(lines) != 1 || len(f) != 5 || f[3] != "0" || strings.ContainsRune(out, 0x1b) {
		t.Errorf("list of one slot:\n%q", out)
	}
	out = corestate(t, "slot", "list", "--json", reg).want(t, exitOK).stdout
	var l struct {
		Slot slots.Slot `json:"slot"`
		Age  float64    `json:"age"`
	}
	if err := json.Unmarshal([]byte(out), &l); err != nil || l.Slot.Owner.Host != host || l.Age != 0 {
		t.Errorf("list --json: %v, %+v\n%s", err, l, out)
	}
	if !strings.Contains(l.Slot.Owner.String(), "\n") {
		t.Fatalf("CONTROL: the owner in words %q holds no newline: the test shows nothing", l.Slot.Owner.String())
	}
}
