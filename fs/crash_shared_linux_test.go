package fs

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agentstate/core/internal/payload"
)

func init() { helpers["crash-writers"] = crashWritersMain }

// crashWritersMain runs FS_WRITERS goroutines, goroutine g writing
// FS_DIR/task<g>/status.json in a loop from sequence FS_SEQ<g>, and
// reports "g seq" after each completed write. Concurrent replaces on one
// file system share their syncs, so a kill lands in the middle of shared
// rounds.
func crashWritersMain() {
	dir := os.Getenv("FS_DIR")
	n, _ := strconv.Atoi(os.Getenv("FS_WRITERS"))
	inPlace := os.Getenv("FS_INPLACE") == "1"
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range n {
		seq, _ := strconv.Atoi(os.Getenv(fmt.Sprint("FS_SEQ", g)))
		target := filepath.Join(dir, fmt.Sprint("task", g), "status.json")
		wg.Go(func() {
			for ; ; seq++ {
				if err := crashWrite(target, payload.Make(seq, 300+(seq%5)*2000), inPlace); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				mu.Lock()
				_, err := fmt.Printf("%d %d\n", g, seq)
				mu.Unlock()
				if err != nil {
					os.Exit(0)
				}
			}
		})
	}
	wg.Wait()
}

// runSharedCrashHarness kills a child with writers concurrent writers
// after a random number of acknowledged writes, kills times, and checks
// every file: a complete payload at least as new as its last
// acknowledgement. It returns how many files were found invalid.
func runSharedCrashHarness(t *testing.T, inPlace bool, kills int) (invalid int) {
	t.Helper()
	const writers = 8
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	next := make([]int, writers)
	for g := range writers {
		sub := filepath.Join(dir, fmt.Sprint("task", g))
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := WriteAtomic(filepath.Join(sub, "status.json"), payload.Make(0, 100), 0o644); err != nil {
			t.Fatal(err)
		}
		next[g] = 1
	}
	for k := 0; k < kills; k++ {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(exe, helperCmdArgs...)
		cmd.Env = append(os.Environ(), "FS_HELPER=crash-writers", "FS_DIR="+dir, fmt.Sprint("FS_WRITERS=", writers))
		for g := range writers {
			cmd.Env = append(cmd.Env, fmt.Sprintf("FS_SEQ%d=%d", g, next[g]))
		}
		if inPlace {
			cmd.Env = append(cmd.Env, "FS_INPLACE=1")
		}
		cmd.Stdout = pw
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pw.Close()
		lastAck := make([]int, writers)
		for g := range lastAck {
			lastAck[g] = next[g] - 1
		}
		in := bufio.NewReader(pr)
		for range rand.IntN(3 * writers) {
			line, err := in.ReadString('\n')
			if err != nil {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("writers died: %v", err)
			}
			f := strings.Fields(line)
			g, _ := strconv.Atoi(f[0])
			lastAck[g], _ = strconv.Atoi(f[1])
		}
		cmd.Process.Kill()
		cmd.Wait()
		pr.Close()
		for g := range writers {
			sub := filepath.Join(dir, fmt.Sprint("task", g))
			target := filepath.Join(sub, "status.json")
			b, err := os.ReadFile(target)
			if err != nil {
				t.Fatal(err)
			}
			seq, verr := payload.Check(b)
			switch {
			case verr != nil:
				invalid++
				if !inPlace {
					t.Fatalf("kill %d: %s is not a complete payload: %v", k+1, target, verr)
				}
				if err := WriteAtomic(target, payload.Make(next[g], 100), 0o644); err != nil {
					t.Fatal(err)
				}
				seq = next[g]
			case seq < lastAck[g]:
				t.Fatalf("kill %d: %s holds seq %d, but write %d had completed", k+1, target, seq, lastAck[g])
			}
			next[g] = max(seq, lastAck[g]) + 1
			if _, err := SweepTemp(sub, 0); err != nil {
				t.Fatal(err)
			}
		}
		if inPlace && invalid > 0 {
			return invalid
		}
	}
	return invalid
}

// TestCrashDuringSharedSyncs: SIGKILL while 8 goroutines replace 8 files
// with shared syncs leaves every file whole and at least as new as its last
// acknowledged write.
func TestCrashDuringSharedSyncs(t *testing.T) {
	kills := 30
	if os.Getenv("SOAK") != "" {
		kills = 500
	}
	runSharedCrashHarness(t, false, kills)
}

// TestCrashDuringSharedSyncsControl: the same harness with in-place
// os.WriteFile writers must find a torn file.
func TestCrashDuringSharedSyncsControl(t *testing.T) {
	if invalid := runSharedCrashHarness(t, true, 300); invalid == 0 {
		t.Fatal("CONTROL: killing in-place writers never left a torn file: the harness cannot see one")
	}
}
