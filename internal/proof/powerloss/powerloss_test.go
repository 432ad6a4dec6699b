//go:build linux

package powerloss_test

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status"
)

// Set by make powerloss.
const (
	envBin    = "LAZYFS"           // path of the lazyfs binary; the test skips without it
	envWork   = "POWERLOSS_WORK"   // a directory for the mounts (default: a test temp dir)
	envRounds = "POWERLOSS_ROUNDS" // rounds per variant (default 50)
	envSeed   = "POWERLOSS_SEED"   // to replay a run
	maxAcks   = 10                 // a round kills the writer after 1..maxAcks acknowledgements
	order     = "atomic mutate control-inplace control-rename-nofsync"
)

func TestPowerLoss(t *testing.T) {
	bin := os.Getenv(envBin)
	if bin == "" {
		t.Skip("skipped: set LAZYFS to the lazyfs binary; make powerloss builds LazyFS and runs this test")
	}
	if _, err := exec.LookPath(bin); err != nil {
		t.Fatalf("LAZYFS=%s: %v", bin, err)
	}
	rounds := 50
	if s := os.Getenv(envRounds); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q", envRounds, s)
		}
		rounds = n
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(envSeed); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("%s=%q", envSeed, s)
		}
	}
	t.Logf("%s=%d %s=%d", envSeed, seed, envRounds, rounds)
	work := os.Getenv(envWork)
	if work == "" {
		work = t.TempDir()
	}
	for _, name := range strings.Fields(order) {
		t.Run(name, func(t *testing.T) {
			dir, err := os.MkdirTemp(work, name+".")
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(seed, uint64(len(name))))
			res := runVariant(t, bin, dir, name, rounds, rng)
			t.Logf("%d rounds, %d acknowledged writes, %d rounds lost data", rounds, res.acked, len(res.lost))
			logLost(t, res.lost)
			switch {
			// Every control write is lost in a real power cut; a round in
			// which the control kept its data is a round in which the
			// harness could not have seen a loss.
			case variants[name].control && len(res.lost) < rounds:
				t.Fatalf("CONTROL %s lost data in only %d of %d rounds: the harness does not cut the power reliably, so the other variants' results mean nothing", name, len(res.lost), rounds)
			case !variants[name].control && len(res.lost) > 0:
				t.Fatalf("%s lost acknowledged writes in %d of %d rounds (seed %d)", name, len(res.lost), rounds, seed)
			}
		})
	}
	testTxVariants(t, bin, work, seed, rounds)
}

// logLost logs the first rounds that lost data.
func logLost(t *testing.T, lost []string) {
	for i, l := range lost {
		if i == 3 {
			t.Logf("  ... and %d more", len(lost)-3)
			break
		}
		t.Logf("  %s", l)
	}
}

type result struct {
	acked int
	lost  []string // one line per round that lost data: what was lost
}

// runVariant mounts a fresh LazyFS in dir and runs the rounds.
func runVariant(t *testing.T, bin, dir, name string, rounds int, rng *rand.Rand) result {
	vr := variants[name]
	l := newLazyFS(t, bin, dir)
	// Version 0 of the replaced document, durable before the first round.
	if err := fs.WriteAtomic(filepath.Join(l.mnt, "doc"), document(0), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := status.Mutate(t.Context(), filepath.Join(l.mnt, "status.json"), func(s *status.Status) error {
		s.Runs, s.Note = 0, string(body(0))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var res result
	next := 1
	for r := range rounds {
		newDir := filepath.Join(l.mnt, "r"+strconv.Itoa(r))
		if err := fs.MkdirAll(newDir, 0o755); err != nil {
			t.Fatal(err)
		}
		acks := runWriter(t, l, name, newDir, next, 1+rng.IntN(maxAcks))
		l.clearCache(t)
		l.remount(t)
		res.acked += len(acks.created) + len(acks.replaced)
		if lost := verify(t, l.mnt, newDir, vr, acks); lost != "" {
			res.lost = append(res.lost, fmt.Sprintf("round %d: %s", r, lost))
		}
		next = acks.last + 2 // past the version that may have been in flight
	}
	return res
}

// acks are the versions a writer acknowledged.
type acks struct {
	replaced, created []int
	last              int // the highest version acknowledged
}

// runWriter starts a writer child of variant name at version start, lets it acknowledge
// kill writes, SIGKILLs and reaps it, and returns every acknowledgement it
// made before it died (those still in the pipe included).
func runWriter(t *testing.T, l *lazyFS, name, newDir string, start, kill int) acks {
	t.Helper()
	var a acks
	runChild(t, l, []string{envVariant + "=" + name, envDir + "=" + l.mnt, envNewDir + "=" + newDir, envStart + "=" + strconv.Itoa(start)},
		kill, nil, func(line string) {
			tag, num, ok := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
			v, err := strconv.Atoi(num)
			if !ok || err != nil || (tag != "R" && tag != "C") {
				t.Fatalf("writer printed %q", line)
			}
			if tag == "R" {
				a.replaced = append(a.replaced, v)
			} else {
				a.created = append(a.created, v)
			}
			a.last = max(a.last, v)
		})
	return a
}

// runChild starts a writer child with env, passes each line it prints to
// record, and after kill lines (and then beforeKill, if not nil) SIGKILLs
// and reaps it, and passes the lines still in the pipe.
func runChild(t *testing.T, l *lazyFS, env []string, kill int, beforeKill func(), record func(line string)) {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	stderr, err := os.CreateTemp(l.dir, "writer-stderr.")
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), envRole+"=writer"), env...)
	cmd.Stdout, cmd.Stderr = pw, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	killed := false
	defer func() {
		if !killed { // a failed read: do not leave the writer running
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	if err := pr.SetReadDeadline(time.Now().Add(stuck)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(pr)
	for range kill {
		line, err := br.ReadString('\n')
		if err != nil {
			errOut, _ := os.ReadFile(stderr.Name())
			t.Fatalf("writer ended early: %v: %s", err, errOut)
		}
		record(line)
	}
	if beforeKill != nil {
		beforeKill()
	}
	// The cut: kill and reap before touching the cache, so that nothing
	// the writer does can land after it.
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	killed = true
	for {
		line, err := br.ReadString('\n')
		if err == io.EOF {
			if line != "" {
				t.Fatalf("torn acknowledgement %q", line)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		record(line)
	}
}

// verify checks, after the remount, that every acknowledged version
// survived whole. It returns what was lost, or "".
func verify(t *testing.T, mnt, newDir string, vr variant, a acks) string {
	t.Helper()
	var lost []string
	lastR := slices.Max(a.replaced) // the writer replaces before it creates: at least one
	data, err := os.ReadFile(filepath.Join(mnt, vr.name))
	switch v, cerr := vr.check(data); {
	case err != nil:
		lost = append(lost, fmt.Sprintf("replaced document: %v", err))
	case cerr != nil:
		lost = append(lost, fmt.Sprintf("replaced document, last acknowledged version %d: %v", lastR, cerr))
	case v < lastR || v > lastR+1:
		lost = append(lost, fmt.Sprintf("replaced document holds version %d, last acknowledged %d", v, lastR))
	}
	for _, v := range a.created {
		data, err := os.ReadFile(filepath.Join(newDir, newName(v)))
		if err != nil {
			lost = append(lost, fmt.Sprintf("created %s: %v", newName(v), err))
			continue
		}
		if got, err := vr.check(data); err != nil || got != v {
			lost = append(lost, fmt.Sprintf("created %s: version %d, %v", newName(v), got, err))
		}
	}
	// A document that was not acknowledged may be missing, but if its name
	// is visible it must be whole.
	ents, err := os.ReadDir(newDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if ignored(e.Name()) || slices.ContainsFunc(a.created, func(v int) bool { return newName(v) == e.Name() }) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(newDir, e.Name()))
		if err == nil {
			_, err = vr.check(data)
		}
		if err != nil {
			lost = append(lost, fmt.Sprintf("unacknowledged %s is visible but not whole: %v", e.Name(), err))
		}
	}
	return strings.Join(lost, "; ")
}
