package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// setHarness runs writers goroutines that each set their own field
// "p<g>" to 1, 2, ... n through setField, and returns how many of those
// updates are missing from the final document. Distinct fields make every
// loss visible: a writer's stale copy of the document erases another
// writer's field.
func setHarness(t *testing.T, writers, n int, setField func(path, field string, value int) error) (lost int) {
	t.Helper()
	path := tempFile(t, "status.json")
	writeFile(t, path, "{\"status\": \"running\"}\n")
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for j := 1; j <= n; j++ {
				if err := setField(path, fmt.Sprintf("p%d", g), j); err != nil {
					t.Errorf("set p%d=%d: %v", g, j, err)
					return
				}
			}
		})
	}
	wg.Wait()
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(readFile(t, path)), &doc); err != nil {
		return writers * n // the file itself was torn
	}
	for g := range writers {
		got, _ := strconv.Atoi(string(doc[fmt.Sprintf("p%d", g)]))
		lost += n - got
	}
	return lost
}

// TestConcurrentSetsLoseNothing: concurrent `corestate set` calls on one
// file keep every update.
func TestConcurrentSetsLoseNothing(t *testing.T) {
	lost := setHarness(t, 8, 15, func(path, field string, value int) error {
		var errOut strings.Builder
		if code := run([]string{"set", path, fmt.Sprintf("%s=%d", field, value)}, io.Discard, &errOut); code != exitOK {
			return fmt.Errorf("exit %d: %s", code, errOut.String())
		}
		return nil
	})
	if lost != 0 {
		t.Fatalf("corestate set lost %d updates", lost)
	}
}

// TestConcurrentSetsControl runs the same harness with the bare
// read-modify-write that `set` replaces; it must lose updates, or the
// harness could not see the bug. A torn read makes the bare writer give up
// that update (as the upstream callers do), which is a loss too.
func TestConcurrentSetsControl(t *testing.T) {
	for attempt := 1; ; attempt++ {
		lost := setHarness(t, 8, 15, func(path, field string, value int) error {
			bareSetField(path, field, value)
			return nil
		})
		if lost > 0 {
			t.Logf("attempt %d: the bare read-modify-write lost %d of 120 updates", attempt, lost)
			return
		}
		if attempt == 3 {
			t.Fatal("the bare read-modify-write lost nothing in 3 runs: the harness does not show the race")
		}
	}
}

func bareSetField(path, field string, value int) {
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	var doc map[string]any
	if json.Unmarshal(data, &doc) != nil {
		return // torn: give up, like the callers of the upstream ReadStatus
	}
	doc[field] = value
	data, _ = json.MarshalIndent(doc, "", "  ")
	os.WriteFile(path, data, 0o644)
}
