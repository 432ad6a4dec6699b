package claim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/agentstate/core/status/claim"
)

// initPIDNS is the kernel's fixed inode number of the initial pid namespace.
const initPIDNS = 4026531836

func self(t *testing.T) claim.Owner {
	t.Helper()
	me, err := claim.Self()
	if err != nil {
		t.Fatal(err)
	}
	return me
}

func liveness(t *testing.T, o claim.Owner) claim.Liveness {
	t.Helper()
	l, err := claim.Local(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestSelf compares Self with the system's own accounts of the process:
// the files the package doc names, read here by other means (cat, ps), and
// Of, from another process.
func TestSelf(t *testing.T) {
	me := self(t)
	run := func(name string, args ...string) string {
		out, err := exec.Command(name, args...).Output()
		if err != nil {
			t.Fatalf("%s %v: %v", name, args, err)
		}
		return strings.TrimSpace(string(out))
	}
	host, _ := os.Hostname()
	// ps prints the time since the start in whole seconds; the owner has
	// the start in clock ticks after boot. With the uptime read before
	// and after ps, the start lies in (before-elapsed-1, after-elapsed].
	ticks, err := strconv.ParseUint(run("getconf", "CLK_TCK"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	uptime := func() float64 {
		b, err := os.ReadFile("/proc/uptime")
		if err != nil {
			t.Fatal(err)
		}
		secs, _ := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
		return secs
	}
	before := uptime()
	elapsed, err := strconv.ParseFloat(run("ps", "-o", "etimes=", "-p", strconv.Itoa(os.Getpid())), 64)
	if err != nil {
		t.Fatal(err)
	}
	after := uptime()
	if start := float64(me.Start) / float64(ticks); start <= before-elapsed-1.01 || start > after-elapsed+0.01 {
		t.Errorf("start %d ticks = %.2fs after boot; ps says between %.2fs and %.2fs", me.Start, start, before-elapsed-1, after-elapsed)
	}
	want := claim.Owner{
		Host:    host,
		Machine: run("cat", "/etc/machine-id"),
		Boot:    run("cat", "/proc/sys/kernel/random/boot_id"),
		PIDNS:   inode(t, run("readlink", "/proc/self/ns/pid")),
		TimeNS:  inode(t, run("readlink", "/proc/self/ns/time")),
		PID:     os.Getpid(),
		Start:   me.Start,
	}
	if diff := cmp.Diff(want, me); diff != "" {
		t.Errorf("Self (-want +got):\n%s", diff)
	}
	if l := liveness(t, me); l != claim.Alive {
		t.Errorf("the caller itself is %v", l)
	}

	// Another process records itself as Of records it from here.
	c := startHelper(t, "self", nil)
	var theirs claim.Owner
	if err := json.Unmarshal([]byte(c.line()), &theirs); err != nil {
		t.Fatal(err)
	}
	ours, err := claim.Of(c.pid())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(theirs, ours); diff != "" {
		t.Errorf("Self in the child and Of(child) differ (-Self +Of):\n%s", diff)
	}
	if ours.Start == me.Start && ours.PID == me.PID {
		t.Errorf("the child has the parent's identity")
	}
	if l := liveness(t, ours); l != claim.Alive {
		t.Errorf("a running child is %v", l)
	}
	c.kill()
	if l := liveness(t, ours); l != claim.Dead {
		t.Errorf("a child killed and waited for is %v", l)
	}
	if _, err := claim.Of(c.pid()); err == nil {
		t.Errorf("Of a pid without a process succeeded")
	}
}

// inode parses "pid:[4026531836]".
func inode(t *testing.T, link string) uint64 {
	t.Helper()
	_, digits, _ := strings.Cut(link, "[")
	n, err := strconv.ParseUint(strings.TrimSuffix(digits, "]"), 10, 64)
	if err != nil {
		t.Fatalf("namespace link %q", link)
	}
	return n
}

// TestLocalRules runs the rules of the package doc on owners derived from
// the caller's: each rule once, with the verdict the doc gives.
func TestLocalRules(t *testing.T) {
	me := self(t)
	with := func(change func(*claim.Owner)) claim.Owner {
		o := me
		change(&o)
		return o
	}
	rebooted := claim.Dead
	if me.PIDNS != initPIDNS || me.Machine == "" {
		rebooted = claim.Unknown // the tests run in a container
	}
	for _, tc := range []struct {
		name  string
		owner claim.Owner
		want  claim.Liveness
	}{
		{"the caller", me, claim.Alive},
		{"zero owner", claim.Owner{}, claim.Unknown},
		{"no start", with(func(o *claim.Owner) { o.Start = 0 }), claim.Unknown},
		{"no boot", with(func(o *claim.Owner) { o.Boot = "" }), claim.Unknown},
		{"no pidns", with(func(o *claim.Owner) { o.PIDNS = 0 }), claim.Unknown},
		{"a lease", with(func(o *claim.Owner) { o.Lease = "694d8c5f2a1b3c4d" }), claim.Unknown},
		{"an earlier boot of this host", with(func(o *claim.Owner) { o.Boot = "00000000-0000-4000-8000-000000000000" }), rebooted},
		{"another boot, another machine", with(func(o *claim.Owner) {
			o.Boot, o.Machine = "00000000-0000-4000-8000-000000000000", strings.Repeat("0", 32)
		}), claim.Unknown},
		{"another boot, another host name", with(func(o *claim.Owner) {
			o.Boot, o.Host = "00000000-0000-4000-8000-000000000000", o.Host+"-2"
		}), claim.Unknown},
		{"another boot, no machine ID", with(func(o *claim.Owner) {
			o.Boot, o.Machine = "00000000-0000-4000-8000-000000000000", ""
		}), claim.Unknown},
		{"another boot, in a container", with(func(o *claim.Owner) {
			o.Boot, o.PIDNS = "00000000-0000-4000-8000-000000000000", initPIDNS+1000
		}), claim.Unknown},
		{"another pid namespace", with(func(o *claim.Owner) { o.PIDNS++ }), claim.Unknown},
		{"another time namespace", with(func(o *claim.Owner) { o.TimeNS++ }), claim.Unknown},
		{"an earlier process with the caller's pid", with(func(o *claim.Owner) { o.Start-- }), claim.Dead},
		{"a later process with the caller's pid", with(func(o *claim.Owner) { o.Start++ }), claim.Dead},
	} {
		if got := liveness(t, tc.owner); got != tc.want {
			t.Errorf("%s: %v; want %v", tc.name, got, tc.want)
		}
	}
}

// TestLocalProcessStates: a stopped process is alive; an exited process
// is dead as soon as it has exited, before its parent waits for it
// (a zombie); a process whose first thread ended while another runs shows
// as a zombie too, and is alive. CONTROL: a check that calls every zombie
// dead kills that last one.
func TestLocalProcessStates(t *testing.T) {
	t.Run("stopped", func(t *testing.T) {
		c := startHelper(t, "wait", nil)
		c.expect("ready")
		o, err := claim.Of(c.pid())
		if err != nil {
			t.Fatal(err)
		}
		if err := c.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		waitState(t, c.pid(), unix.WSTOPPED)
		if l := liveness(t, o); l != claim.Alive {
			t.Errorf("a stopped process is %v", l)
		}
		c.cmd.Process.Signal(syscall.SIGCONT)
	})

	t.Run("zombie", func(t *testing.T) {
		c := startHelper(t, "wait", nil)
		c.expect("ready")
		o, err := claim.Of(c.pid())
		if err != nil {
			t.Fatal(err)
		}
		c.cmd.Process.Signal(syscall.SIGKILL)
		waitState(t, c.pid(), unix.WEXITED) // exited, not waited for
		if st := statState(t, c.pid()); st != "Z" {
			t.Fatalf("state %s; want Z", st)
		}
		if l := liveness(t, o); l != claim.Dead {
			t.Errorf("a zombie is %v", l)
		}
		c.wait()
		if l := liveness(t, o); l != claim.Dead {
			t.Errorf("a process waited for is %v", l)
		}
	})

	t.Run("first thread ended", func(t *testing.T) {
		bin := buildC(t, leaderExits)
		cmd := exec.Command(bin)
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { in.Close(); cmd.Wait() }()
		o, err := claim.Of(cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		line := make([]byte, 6)
		if _, err := out.Read(line); err != nil || string(line) != "alone\n" {
			t.Fatalf("helper said %q, %v", line, err)
		}
		if st := statState(t, cmd.Process.Pid); st != "Z" {
			t.Fatalf("state %s; want Z", st)
		}
		if l := liveness(t, o); l != claim.Alive {
			t.Errorf("a process whose first thread ended is %v", l)
		}
		// CONTROL: judged by its state alone, it is dead.
		if statState(t, cmd.Process.Pid) != "Z" {
			t.Errorf("CONTROL: a state-only check keeps the process alive")
		}
	})
}

// TestLocalOddCommand: the command name in /proc/PID/stat is a free text
// in parentheses; one with spaces, parentheses and a fake state does not
// confuse the parser.
func TestLocalOddCommand(t *testing.T) {
	dir := t.TempDir()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	odd := filepath.Join(dir, "a) Z 1 (b")
	if err := os.Symlink(sleep, odd); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(odd, "1000")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	o, err := claim.Of(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	stat, _ := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/stat")
	if !bytes.Contains(stat, []byte("(a) Z 1 (b)")) {
		t.Fatalf("the command name did not reach /proc: %s", stat)
	}
	if l := liveness(t, o); l != claim.Alive {
		t.Errorf("%s: %v", stat, l)
	}
}

// waitState waits until pid is in the state (WSTOPPED, WEXITED) without
// reaping it.
func waitState(t *testing.T, pid, state int) {
	t.Helper()
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PID, pid, &info, state|unix.WNOWAIT, nil); err != nil {
		t.Fatal(err)
	}
}

// statState is field 3 of /proc/PID/stat.
func statState(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])[0]
}

// leaderExits ends its first thread while a second one waits for the end
// of its input; the second says "alone" once the first has ended.
const leaderExits = `
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void *second(void *arg) {
	char buf[512];
	for (;;) { /* until the first thread shows as a zombie */
		FILE *f = fopen("/proc/self/stat", "r");
		size_t n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[n] = 0;
		if (strstr(strrchr(buf, ')'), ") Z ")) break;
		usleep(1000);
	}
	write(1, "alone\n", 6);
	while (read(0, buf, sizeof buf) > 0) {}
	return 0;
}

int main(void) {
	pthread_t t;
	pthread_create(&t, 0, second, 0);
	pthread_exit(0);
}
`

// buildC compiles a C program (gcc is there: -race needs cgo).
func buildC(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.c"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "p")
	if out, err := exec.Command("gcc", "-o", bin, filepath.Join(dir, "p.c"), "-lpthread").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}
