//go:build unix

package fs

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/agentstate/core/internal/payload"
)

func init() { helpers["crash-writer"] = crashWriterMain }

// crashWriterMain writes payloads to FS_TARGET in a loop, starting at
// sequence FS_SEQ, and reports each completed write on stdout. It runs
// until killed, or until stdout breaks (the parent is gone).
func crashWriterMain() {
	target := os.Getenv("FS_TARGET")
	seq, _ := strconv.Atoi(os.Getenv("FS_SEQ"))
	inPlace := os.Getenv("FS_INPLACE") == "1"
	for ; ; seq++ {
		if err := crashWrite(target, payload.Make(seq, 500+(seq%7)*3000), inPlace); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if _, err := fmt.Printf("%d\n", seq); err != nil {
			os.Exit(0)
		}
	}
}

// crashWrite is one write of a crash child: WriteAtomic, or in place for
// the CONTROL (os.WriteFile, which truncates and rewrites in place).
func crashWrite(target string, data []byte, inPlace bool) error {
	if inPlace {
		return os.WriteFile(target, data, 0o644)
	}
	return WriteAtomic(target, data, 0o644)
}

// crashResult is what one harness run saw.
type crashResult struct {
	kills, invalid, sweptTemps int
}

// runCrashHarness starts a writer child, lets it complete 0..3 writes
// (counted by its acks on a pipe), SIGKILLs it, and inspects the file:
// it must hold a complete payload at least as new as the last ack, and
// SweepTemp must leave nothing behind. It stops after maxKills kills, or
// at the first invalid file when stopOnInvalid.
func runCrashHarness(t *testing.T, inPlace bool, maxKills int, stopOnInvalid bool) crashResult {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "status.json")
	if err := WriteAtomic(target, payload.Make(0, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	var res crashResult
	next := 1
	for res.kills < maxKills {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(exe, helperCmdArgs...)
		cmd.Env = append(os.Environ(), "FS_HELPER=crash-writer", "FS_TARGET="+target, "FS_SEQ="+strconv.Itoa(next))
		if inPlace {
			cmd.Env = append(cmd.Env, "FS_INPLACE=1")
		}
		cmd.Stdout = pw // an *os.File: no copying goroutine
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pw.Close()
		acks := rand.IntN(4) // 0: kill at once, before or during the first write
		lastAck := -1
		in := bufio.NewReader(pr)
		for range acks {
			line, err := in.ReadString('\n')
			if err != nil {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("writer died: %v", err)
			}
			lastAck, _ = strconv.Atoi(line[:len(line)-1])
		}
		cmd.Process.Kill() // SIGKILL: no deferred cleanup runs in the child
		cmd.Wait()
		pr.Close()
		res.kills++

		b, err := os.ReadFile(target)
		if err != nil {
			t.Fatalf("kill %d: %v", res.kills, err)
		}
		seq, verr := payload.Check(b)
		switch {
		case verr != nil:
			res.invalid++
			if !inPlace {
				t.Fatalf("kill %d: file is not a complete payload: %v", res.kills, verr)
			}
			if stopOnInvalid {
				return res
			}
			// Repair so that the next round starts from a valid file.
			if err := WriteAtomic(target, payload.Make(next, 100), 0o644); err != nil {
				t.Fatal(err)
			}
			seq = next
		case seq < lastAck:
			t.Fatalf("kill %d: file holds seq %d, but write %d had completed", res.kills, seq, lastAck)
		}
		next = max(seq, lastAck) + 1

		removed, err := SweepTemp(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		res.sweptTemps += len(removed)
		if got := listDir(t, dir); len(got) != 1 || got[0] != "status.json" {
			t.Fatalf("kill %d: after sweep the directory holds %v", res.kills, got)
		}
	}
	return res
}

func TestCrashDuringWrite(t *testing.T) {
	kills := 120
	if os.Getenv("SOAK") != "" {
		kills = 2000
	}
	res := runCrashHarness(t, false, kills, false)
	t.Logf("WriteAtomic: %d kills, %d left a temp file (swept), 0 invalid", res.kills, res.sweptTemps)
	if res.sweptTemps == 0 {
		t.Fatalf("no kill landed during a write (no temp file was ever left): the harness did not test a crash mid-write")
	}
}

// TestCrashDuringWriteControl runs the same harness with an in-place
// os.WriteFile writer and asserts that the harness sees the damage.
func TestCrashDuringWriteControl(t *testing.T) {
	res := runCrashHarness(t, true, 400, true)
	t.Logf("CONTROL os.WriteFile: %d kills, %d invalid files", res.kills, res.invalid)
	if res.invalid == 0 {
		t.Fatalf("CONTROL: %d kills of an in-place writer never left an invalid file: the harness cannot see torn writes", res.kills)
	}
}
