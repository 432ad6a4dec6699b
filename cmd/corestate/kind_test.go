package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A document that is not named status.json is any JSON object: members
// named like status.Status fields hold what their program put there, get
// reads it, set and incr change it, and nothing is stamped. CONTROL: the
// same content is corrupt as a status document (by name or by --kind).
func TestAnyJSONDocument(t *testing.T) {
	const content = `{"task": 7, "pid": "host:1", "active_count": 2, "runs": "n/a"}`
	reg := tempFile(t, "registry.json")
	writeFile(t, reg, content)

	if out := corestate(t, "get", reg, "task").want(t, exitOK).stdout; out != "7\n" {
		t.Errorf("get task: %q, want 7", out)
	}
	corestate(t, "get", reg, "agent").want(t, exitNotFound) // absent: no status.Status zero value
	corestate(t, "set", reg, "active_count=3", "status=whatever", "note=", "--if", "pid=host:1").want(t, exitOK)
	corestate(t, "incr", reg, "active_count").want(t, exitOK)
	corestate(t, "tx", reg, "active_count-=1").want(t, exitOK)
	const want = "{\n  \"active_count\": 3,\n  \"note\": \"\",\n  \"pid\": \"host:1\",\n  \"runs\": \"n/a\",\n  \"status\": \"whatever\",\n  \"task\": 7\n}\n"
	if got := readFile(t, reg); got != want {
		t.Errorf("after set, incr and tx:\n%s\nwant (no updated_at, members sorted):\n%s", got, want)
	}
	// What every document refuses still holds: a repeated name.
	dup := tempFile(t, "queue.json")
	writeFile(t, dup, `{"a": 1, "a": 2}`)
	corestate(t, "set", dup, "b=1").want(t, exitCorrupt)

	// CONTROL: as a status document, the same bytes are corrupt.
	corestate(t, "get", "--kind", "status", reg).want(t, exitCorrupt)
	st := tempFile(t, "status.json")
	writeFile(t, st, content)
	corestate(t, "get", st).want(t, exitCorrupt)
	corestate(t, "set", st, "active_count=3").want(t, exitCorrupt)
	if readFile(t, st) != content {
		t.Error("a corrupt status document was changed")
	}
}

// Status rules follow the kind: stamping, the transition rule and
// status.Status's types apply to a status document, whatever --kind made
// it one, and to nothing else.
func TestKindDecidesStatusRules(t *testing.T) {
	named := tempFile(t, "status.json")
	other := tempFile(t, "task-42.json")
	for _, p := range []string{named, other} {
		writeFile(t, p, `{"status": "completed"}`)
	}
	asStatus := [][]string{{named}, {"--kind", "status", other}}
	asJSON := [][]string{{"--kind", "json", named}, {other}}
	for _, args := range asStatus {
		corestate(t, append(append([]string{"set"}, args...), "status=running")...).want(t, exitConflict)
		corestate(t, append(append([]string{"set"}, args...), "runs=lots")...).want(t, exitBadField)
		out := corestate(t, append(append([]string{"set"}, args...), "note=x")...).want(t, exitOK).stdout
		if !strings.Contains(out, `"updated_at"`) {
			t.Errorf("set %v: not stamped:\n%s", args, out)
		}
	}
	for _, p := range []string{named, other} {
		writeFile(t, p, `{"status": "completed"}`)
	}
	for _, args := range asJSON {
		out := corestate(t, append(append([]string{"set"}, args...), "status=running", "runs=lots")...).want(t, exitOK).stdout
		if strings.Contains(out, `"updated_at"`) {
			t.Errorf("set %v: stamped a document that is not a status document:\n%s", args, out)
		}
	}
	corestate(t, "get", "--kind", "yaml", other).want(t, exitUsage)
}

// A bare --if VALUE matches a field that holds it as a string, as a
// Python writer stores an ID; a quoted VALUE matches only the string; and
// the conflict names both forms. (A bare 12345 used to miss "12345" and
// exit 8, as if the task had moved on.)
func TestGuardBareValueMatchesString(t *testing.T) {
	asString, asNumber := tempFile(t, "a.json"), tempFile(t, "b.json")
	writeFile(t, asString, `{"run_id": "12345", "done": "true"}`)
	writeFile(t, asNumber, `{"run_id": 12345, "done": true}`)
	for _, p := range []string{asString, asNumber} {
		corestate(t, "set", p, "x=1", "--if", "run_id=12345").want(t, exitOK)
		corestate(t, "set", p, "x=2", "--if", "done=true").want(t, exitOK)
	}
	corestate(t, "set", asString, "x=3", "--if", `run_id="12345"`).want(t, exitOK)
	// CONTROL: the quoted form is the string only; other values still fail.
	corestate(t, "set", asNumber, "x=3", "--if", `run_id="12345"`).want(t, exitConflict)
	r := corestate(t, "set", asString, "x=4", "--if", "run_id=12346").want(t, exitConflict)
	if !strings.Contains(r.stderr, `run_id is "12345", want 12346 or the string "12346"`) {
		t.Errorf("conflict message does not say the rule: %s", r.stderr)
	}
	// The rule is in the help.
	if !strings.Contains(corestate(t, "help", "set").stdout, `run_id=12345 holds for
12345 and for "12345"`) {
		t.Error("help set does not state the rule for bare values")
	}
}

// --perm sets the mode of a document that set, incr or tx creates, as
// status.WithPerm does; an existing document keeps its bits.
func TestPermFlag(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permission bits")
	}
	dir := t.TempDir()
	for _, args := range [][]string{
		{"set", "--perm", "0600", filepath.Join(dir, "a.json"), "x=1"},
		{"incr", "--perm", "600", filepath.Join(dir, "b.json"), "n"},
		{"tx", "--perm", "0600", filepath.Join(dir, "c.json"), "n+=1", "--", filepath.Join(dir, "d", "status.json"), "runs+=1"},
	} {
		os.MkdirAll(filepath.Join(dir, "d"), 0o755)
		corestate(t, args...).want(t, exitOK)
	}
	for _, name := range []string{"a.json", "b.json", "c.json", "d/status.json"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want mode 0600", name, fi.Mode(), err)
		}
	}
	// CONTROL: without --perm, 0644; an existing file keeps its mode.
	corestate(t, "set", filepath.Join(dir, "e.json"), "x=1").want(t, exitOK)
	corestate(t, "set", "--perm", "0666", filepath.Join(dir, "a.json"), "x=2").want(t, exitOK)
	for name, want := range map[string]os.FileMode{"e.json": 0o644, "a.json": 0o600} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want %v", name, fi.Mode(), err, want)
		}
	}
	for _, bad := range []string{"0999", "1777", "rw", "-1"} {
		corestate(t, "set", "--perm", bad, filepath.Join(dir, "f.json"), "x=1").want(t, exitUsage)
	}
}

// The case the option is for: under umask 002, a shared workspace's
// document is group-writable only with --perm 0664 (status.WithPerm's
// default is 0644). The command runs in a process of its own, whose umask
// is set by sh.
func TestPermFlagGroupWritableUnderUmask002(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no umask")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh to set the umask of a child process")
	}
	dir := t.TempDir()
	for name, perm := range map[string][]string{"default.json": nil, "shared.json": {"--perm", "0664"}} {
		args := append([]string{"-c", `umask 002 && exec "$@"`, "sh", os.Args[0], "set"}, perm...)
		cmd := exec.Command(sh, append(args, filepath.Join(dir, name), "x=1")...)
		cmd.Env = append(os.Environ(), asCorestateEnv+"=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
		}
	}
	for name, want := range map[string]os.FileMode{"default.json": 0o644, "shared.json": 0o664} {
		for _, p := range []string{name, name + ".lock"} {
			if fi, err := os.Stat(filepath.Join(dir, p)); err != nil || fi.Mode().Perm() != want {
				t.Errorf("%s: %v %v, want %v", p, fi.Mode(), err, want)
			}
		}
	}
}

// Every error that names a file with a control character quotes it, as
// sweep prints names: one line, and the name as it is. (Such names used
// to show with the newline turned into a space: "a b.json".)
func TestErrorsQuoteNames(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no newline in file names")
	}
	dir := t.TempDir()
	name := filepath.Join(dir, "a\nb.json")
	quoted, err := json.Marshal(name) // the same as strconv.Quote for this name
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"get", name}, exitNotFound},
		{[]string{"quarantine", name}, exitNotFound},
		// A transaction's marker names its journal on a line of its own.
		{[]string{"tx", name, "--if", "x=1", "y=1"}, exitUsage},
	} {
		r := corestate(t, tc.args...).want(t, tc.code)
		if !strings.Contains(r.stderr, string(quoted)) || strings.Contains(r.stderr, "a b.json") {
			t.Errorf("%s: stderr %q does not quote the name as %s", tc.args[0], r.stderr, quoted)
		}
	}
	writeFile(t, name, `{"x": 1, "x": 2}`)
	for _, args := range [][]string{{"get", name}, {"set", name, "y=1"}, {"incr", name, "y"}} {
		r := corestate(t, args...).want(t, exitCorrupt)
		if !strings.Contains(r.stderr, string(quoted)) {
			t.Errorf("%s on a corrupt file: stderr %q does not quote the name", args[0], r.stderr)
		}
	}
	// A name that needs no quoting is shown as it is.
	plain := filepath.Join(dir, "plain.json")
	if r := corestate(t, "get", plain).want(t, exitNotFound); !strings.Contains(r.stderr, " "+plain+":") {
		t.Errorf("stderr %q: want the plain name unquoted", r.stderr)
	}
}

func TestErrorLine(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		args []string
		want string
	}{
		{"read a\nb: no such file", []string{"a\nb"}, `read "a\nb": no such file`},
		{"lock a\nb.lock: busy", []string{"a\nb"}, `lock "a\nb.lock": busy`},
		{"read /x/a\nb: gone", []string{"/x/a\nb"}, `read "/x/a\nb": gone`},
		{"bad \x1b value", nil, `bad \x1b value`},
		{"bad \xff byte", nil, `bad \xff byte`},
		{"plain a b", []string{"a b"}, "plain a b"},
	} {
		if got := errorLine(stringError(tc.msg), tc.args); got != tc.want {
			t.Errorf("errorLine(%q, %q) = %s, want %s", tc.msg, tc.args, got, tc.want)
		}
	}
}

type stringError string

func (e stringError) Error() string { return string(e) }
