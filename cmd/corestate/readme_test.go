package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// readmeBlock is the shell block of README.md that this test runs.
var readmeBlock = regexp.MustCompile("(?s)<!-- corestate: TestReadmeCommands -->\n```sh\n(.*?)\n```")

// exitComment is a comment that says how a line ends: "# exit 5: bad
// field ..." (the message's pieces around "..." appear in order on
// stderr).
var exitComment = regexp.MustCompile(`^exit (\d+)(?:: (.*))?$`)

// TestReadmeCommands runs README.md's corestate block as one shell script,
// in order, on fixtures that give each line something to do, so that what
// the README says each line prints or exits with stays true: a comment
// "exit N: MESSAGE" is the exit code and the error, any other line must
// succeed, and a get prints the comment's first word.
func TestReadmeCommands(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("runs the block with sh")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("no sh to run README.md's shell block: %v", err)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := readmeBlock.FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no <!-- corestate: TestReadmeCommands --> shell block")
	}
	lines := commandLines(string(m[1]))
	if len(lines) < 10 {
		t.Fatalf("found %d commands in README.md's corestate block", len(lines))
	}

	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	work := filepath.Join(dir, "work")
	for _, d := range []string{bin, "ws/42", "ws/43", "ws/44"} {
		if !filepath.IsAbs(d) {
			d = filepath.Join(work, d)
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range map[string]string{
		"ws/status.json":                       `{"status": "queued"}`,
		"ws/42/status.json":                    `{"status": "queued"}`,
		"ws/44/status.json":                    `{"status": "queu`, // truncated: corrupt
		"registry.json":                        `{"active_count": 0, "max_concurrent": 1}`,
		"ws/.status.json.0123456789abcdef.tmp": `{"status": "queued"}`, // left by a crash
	} {
		writeFile(t, filepath.Join(work, name), content)
	}
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(filepath.Join(work, "ws/.status.json.0123456789abcdef.tmp"), old, old)
	wrapper := fmt.Sprintf("#!/bin/sh\n%s=1 exec %s \"$@\"\n", asCorestateEnv, strconv.Quote(os.Args[0]))
	if err := os.WriteFile(filepath.Join(bin, "corestate"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}

	// One script, so that $$ is one process for every line; each line in
	// a subshell, so that its "|| exit" ends only that line.
	var script strings.Builder
	script.WriteString("umask 002\n")
	for i, l := range lines {
		fmt.Fprintf(&script, "( %s ) >out.%d 2>err.%d; echo $? >rc.%d\n", l.cmd, i, i, i)
	}
	cmd := exec.Command(sh, "-c", script.String())
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("running the block: %v\n%s", err, out)
	}
	for i, l := range lines {
		read := func(what string) string {
			b, err := os.ReadFile(filepath.Join(work, fmt.Sprintf("%s.%d", what, i)))
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
		code, _ := strconv.Atoi(strings.TrimSpace(read("rc")))
		stdout, stderr := read("out"), read("err")
		wantCode, wantMsg := 0, ""
		if c := exitComment.FindStringSubmatch(l.comment); c != nil {
			wantCode, _ = strconv.Atoi(c[1])
			wantMsg = c[2]
		}
		if code != wantCode {
			t.Errorf("%s\nexit %d, README.md says %d\nstderr: %s", l.cmd, code, wantCode, stderr)
			continue
		}
		if wantMsg != "" && !inOrder(stderr, strings.Split(wantMsg, "...")) {
			t.Errorf("%s\nstderr: %sREADME.md says: %s", l.cmd, stderr, wantMsg)
		}
		if strings.HasPrefix(l.cmd, "corestate get ") && wantCode == 0 {
			if want := strings.Fields(l.comment); len(want) == 0 || strings.TrimSpace(stdout) != want[0] {
				t.Errorf("%s\nprinted %q, README.md says %q", l.cmd, stdout, l.comment)
			}
		}
	}
	// The --perm line's document is group-writable, as its comment says.
	if fi, err := os.Stat(filepath.Join(work, "ws/43/status.json")); err != nil || fi.Mode().Perm() != 0o664 {
		t.Errorf("ws/43/status.json: %v, %v; want mode 0664", fi, err)
	}
	// CONTROL: a README that claims another message fails the check.
	if inOrder("corestate: set ws/status.json: bad field runs: want an integer, got lots", []string{"bad field runs: want a string"}) {
		t.Error("CONTROL: inOrder accepts a message that is not there")
	}
}

// A commandLine is one command of a shell block with its comment.
type commandLine struct{ cmd, comment string }

// commandLines returns the commands of a shell block: continuation lines
// joined, comment-only lines skipped, each command's trailing "# comment"
// split off.
func commandLines(block string) []commandLine {
	var out []commandLine
	var cur string
	for _, l := range strings.Split(block, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "#") && cur == "" {
			continue
		}
		cmd, comment, _ := strings.Cut(l, "  # ")
		cmd = strings.TrimSpace(cmd)
		if strings.HasSuffix(cmd, `\`) {
			cur += strings.TrimSuffix(cmd, `\`) + " "
			continue
		}
		out = append(out, commandLine{cur + cmd, strings.TrimSpace(comment)})
		cur = ""
	}
	return out
}

// inOrder reports whether the pieces appear in s in order.
func inOrder(s string, pieces []string) bool {
	for _, p := range pieces {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return true
}
