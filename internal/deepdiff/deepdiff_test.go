package deepdiff_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentstate/core/internal/deepdiff"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type doc struct {
	Count int
	Seen  []string
	note  string
}

func TestEqualIsEmpty(t *testing.T) {
	for _, v := range []any{
		nil, 1, "x", []string{"a", "b"}, doc{Count: 1, Seen: []string{"a"}, note: "n"},
		map[string]any{"a": []any{1.5, "x"}, "b": nil}, &doc{}, json.RawMessage(`{"a":1}`),
	} {
		if d := deepdiff.Diff(v, v); d != "" {
			t.Errorf("Diff(%#v, itself) = %q, want empty", v, d)
		}
	}
}

// Every difference is reported, and the report names the lines that differ
// with - (want) and + (got).
func TestReportsDifferences(t *testing.T) {
	for _, tt := range []struct {
		name      string
		want, got any
		lines     []string // each must appear in the report
	}{
		{"slice element", []string{"a", "b", "c"}, []string{"a", "x", "c"}, []string{`- 	"b",`, `+ 	"x",`}},
		{"extra element", []string{"a"}, []string{"a", "b"}, []string{`+ 	"b",`}},
		{"struct field", doc{Count: 1}, doc{Count: 2}, []string{"- \tCount: 1,", "+ \tCount: 2,"}},
		{"unexported field", doc{note: "a"}, doc{note: "b"}, []string{`- 	note: "a",`, `+ 	note: "b",`}},
		{"nil and empty slice", []string(nil), []string{}, []string{"- []string(nil)", "+ []string{"}},
		{"map value", map[string]json.RawMessage{"a": json.RawMessage("1")}, map[string]json.RawMessage{"a": json.RawMessage("2")},
			[]string{`- 	"a": json.RawMessage("1"),`, `+ 	"a": json.RawMessage("2"),`}},
		{"missing key", map[string]int{"a": 1, "b": 2}, map[string]int{"a": 1}, []string{`- 	"b": 2,`}},
		{"types", 1, int64(1), []string{"- int(1)", "+ int64(1)"}},
		{"types in an interface", map[string]any{"n": 1}, map[string]any{"n": 1.0}, []string{`- 	"n": int(1),`, `+ 	"n": float64(1),`}},
		{"NaN", math.NaN(), math.NaN(), []string{"render alike", "-float64(NaN)", "+float64(NaN)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := deepdiff.Diff(tt.want, tt.got)
			if d == "" {
				t.Fatalf("Diff(%#v, %#v) is empty", tt.want, tt.got)
			}
			for _, l := range tt.lines {
				if !strings.Contains(d, l) {
					t.Errorf("report lacks %q:\n%s", l, d)
				}
			}
		})
	}
}

// Long runs of equal lines are elided, so a change in a long slice stays
// readable.
func TestElidesContext(t *testing.T) {
	want := make([]int, 100)
	got := make([]int, 100)
	got[50] = 7
	d := deepdiff.Diff(want, got)
	if n := strings.Count(d, "\n"); n > 12 {
		t.Errorf("report of one changed element has %d lines:\n%s", n, d)
	}
	if !strings.Contains(d, "- \t0,\n+ \t7,\n") || !strings.Contains(d, "  ...\n") {
		t.Errorf("report:\n%s", d)
	}
}
