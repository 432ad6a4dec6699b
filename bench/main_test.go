//go:build unix

package main

import (
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// A worker child is this test binary re-executed: it must do its
	// work, not run the tests.
	if a, ok := os.LookupEnv(childEnv); ok {
		runChild(a)
	}
	goleak.VerifyTestMain(m)
}

// TestSmoke runs every scenario and system once with tiny windows, so the
// harness cannot rot: each cell must complete, and its stored counts must
// equal its acknowledged calls (runCell fails otherwise). No timing is
// asserted.
func TestSmoke(t *testing.T) {
	cfg := config{rounds: 1, window: 50 * time.Millisecond, smoke: true, dir: t.TempDir(), log: io.Discard}
	if testing.Verbose() {
		cfg.log = os.Stderr
	}
	rep, err := run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range rep.scens {
		for _, s := range sc.systems() {
			cs := rep.results[sc.name][s.name]
			if len(cs) != 1 || cs[0].acked == 0 {
				t.Errorf("%s/%s: %d results, acked %v", sc.name, s.name, len(cs), cs)
			}
		}
	}
	if md := rep.markdown(cfg, "-quick"); !strings.Contains(md, "| Mutate ≥ 3.00× bbolt-batch | b |") {
		t.Errorf("report lacks the goal rows:\n%s", md)
	}
}

// TestVerifyCatchesLostUpdate is the control of the lost-update check: a
// record whose count is one short of its acknowledged calls must fail.
func TestVerifyCatchesLostUpdate(t *testing.T) {
	for _, s := range systems {
		t.Run(s.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := s.seed(dir, 2); err != nil {
				t.Fatal(err)
			}
			st, err := s.open(dir)
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if err := st.inc(t.Context(), 1); err != nil {
					t.Fatal(err)
				}
			}
			if err := st.close(); err != nil {
				t.Fatal(err)
			}
			if err := verify(s, dir, []int{0, 3}); err != nil {
				t.Fatalf("exact counts: %v", err)
			}
			if err := verify(s, dir, []int{0, 4}); err == nil {
				t.Fatal("a lost update went unnoticed")
			}
		})
	}
}

// TestGoals checks that the goal table lists every goal of the
// performance issue: the scenario goals, f against every durable peer,
// and parity with our own per-call baseline in every scenario.
func TestGoals(t *testing.T) {
	rep := &report{scens: scenarios}
	have := map[string]bool{}
	for _, g := range goals(rep) {
		have[g.scen+" "+g.desc] = true
	}
	want := []string{
		"a Mutate ≥ 0.95× floor",
		"b Mutate ≥ 3.00× bbolt-batch",
		"c Mutate ≥ 1.00× bbolt-batch",
		"d Mutate ≥ 4.00× sqlite-full",
		"d slowest/fastest process ≥ 0.85 (Mutate)",
		"d p99 ≤ 100 ms (Mutate)",
		"d32 no call > 1 s (Mutate, worst round)",
		"d32x1 slowest/fastest process ≥ 0.85 (Mutate)",
		"e Mutate ≥ 1.00× bbolt-batch",
	}
	for _, s := range systems {
		if s.peer {
			want = append(want, "f Mutate ≥ 5.00× "+s.name)
		}
	}
	for _, sc := range scenarios {
		want = append(want, sc.name+" Mutate ≥ 1.00× baseline")
	}
	for _, w := range want {
		if !have[w] {
			t.Errorf("goal %q missing", w)
		}
	}
	if len(have) != len(want) {
		t.Errorf("%d goals, want %d: %v", len(have), len(want), have)
	}
}
