package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// incrHarness runs writers goroutines that each add 1 to "runs" n times
// through add, and returns how many of those increments the final document
// is missing.
func incrHarness(t *testing.T, writers, n int, add func(path string) error) (lost int) {
	t.Helper()
	path := tempFile(t, "status.json")
	writeFile(t, path, "{\"status\": \"running\", \"runs\": 0}\n")
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			<-start
			for range n {
				if err := add(path); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()
	var doc struct{ Runs int }
	if err := json.Unmarshal([]byte(readFile(t, path)), &doc); err != nil {
		t.Fatalf("final document: %v", err)
	}
	return writers*n - doc.Runs
}

func runCmd(args ...string) (string, error) {
	var out, errOut bytes.Buffer
	if code := run(args, &out, &errOut); code != exitOK {
		return "", fmt.Errorf("%q: exit %d: %s", args, code, errOut.String())
	}
	return out.String(), nil
}

// TestConcurrentIncrLosesNothing: concurrent `corestate incr FILE runs`
// keep every increment.
func TestConcurrentIncrLosesNothing(t *testing.T) {
	lost := incrHarness(t, 8, 15, func(path string) error {
		_, err := runCmd("incr", path, "runs")
		return err
	})
	if lost != 0 {
		t.Fatalf("corestate incr lost %d of 120 increments", lost)
	}
}

// TestConcurrentGetSetControl runs the same harness with what a script
// had to do before incr: `get FILE runs`, then `set FILE runs=<n+1>`. Each
// command is locked, the pair is not, so increments must be lost, or the
// harness could not see the bug.
func TestConcurrentGetSetControl(t *testing.T) {
	for attempt := 1; ; attempt++ {
		lost := incrHarness(t, 8, 15, func(path string) error {
			out, err := runCmd("get", path, "runs")
			if err != nil {
				return err
			}
			n, err := strconv.Atoi(strings.TrimSpace(out))
			if err != nil {
				return err
			}
			_, err = runCmd("set", path, fmt.Sprintf("runs=%d", n+1))
			return err
		})
		if lost > 0 {
			t.Logf("attempt %d: get then set lost %d of 120 increments", attempt, lost)
			return
		}
		if attempt == 5 {
			t.Fatal("get then set lost nothing in 5 runs: the harness does not show the race")
		}
	}
}

// claimHarness starts claimers goroutines at once on a queued document,
// each trying to claim it with claim(path, id), and returns how many
// claims succeeded and the pid the document ends with.
func claimHarness(t *testing.T, claimers int, claim func(path string, id int) (bool, error)) (won int, pid string) {
	t.Helper()
	path := tempFile(t, "status.json")
	writeFile(t, path, "{\"status\": \"queued\"}\n")
	start := make(chan struct{})
	var mu sync.Mutex
	var wg sync.WaitGroup
	for id := 1; id <= claimers; id++ {
		wg.Go(func() {
			<-start
			ok, err := claim(path, id)
			if err != nil {
				t.Error(err)
				return
			}
			if ok {
				mu.Lock()
				won++
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	out, err := runCmd("get", path, "pid")
	if err != nil {
		t.Fatal(err)
	}
	return won, strings.TrimSpace(out)
}

// TestConcurrentGuardedClaim: of several `set status=running pid=ID --if
// status=queued` racing on one queued file, exactly one succeeds, the
// others exit 8, and the file names the winner.
func TestConcurrentGuardedClaim(t *testing.T) {
	for round := range 5 {
		var winner string
		var mu sync.Mutex
		won, pid := claimHarness(t, 6, func(path string, id int) (bool, error) {
			var errOut strings.Builder
			switch code := run([]string{"set", path, "status=running", fmt.Sprintf("pid=%d", id), "--if", "status=queued"}, io.Discard, &errOut); code {
			case exitOK:
				mu.Lock()
				winner = strconv.Itoa(id)
				mu.Unlock()
				return true, nil
			case exitConflict:
				return false, nil
			default:
				return false, fmt.Errorf("claim %d: exit %d: %s", id, code, errOut.String())
			}
		})
		if won != 1 || pid != winner {
			t.Fatalf("round %d: %d claims succeeded (want exactly 1); file pid %s, winner %s", round, won, pid, winner)
		}
	}
}

// TestConcurrentClaimControl: the unguarded claim of a script without
// --if (`get status`; if queued, `set status=running`) lets more than one
// claimer win under the same harness.
func TestConcurrentClaimControl(t *testing.T) {
	for attempt := 1; ; attempt++ {
		won, _ := claimHarness(t, 6, func(path string, id int) (bool, error) {
			out, err := runCmd("get", path, "status")
			if err != nil || strings.TrimSpace(out) != "queued" {
				return false, err
			}
			_, err = runCmd("set", path, "status=running", fmt.Sprintf("pid=%d", id))
			return err == nil, err
		})
		if won > 1 {
			t.Logf("attempt %d: %d claimers won the same task", attempt, won)
			return
		}
		if attempt == 10 {
			t.Fatal("the unguarded claim never let two claimers win in 10 runs: the harness does not show the race")
		}
	}
}
