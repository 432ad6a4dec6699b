package config_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/agentstate/core/config"
)

// badJSON fails to marshal; panicText panics in MarshalText, on the
// pointer, which encoding/json calls for the elements of a slice.
type badJSON struct{ N int }

func (badJSON) MarshalJSON() ([]byte, error) { return nil, errors.New("no JSON today") }

type panicText int

func (*panicText) MarshalText() ([]byte, error) { panic("boom") }

type celsius float32

// unwritable lists values that Save cannot write, with where Set must say
// the problem is (under the key "k").
func unwritable() []struct {
	name, path string
	v          any
} {
	return []struct {
		name, path string
		v          any
	}{
		{"complex", "k", complex(1, 2)},
		{"complex64 in a list", "k[1]", []any{1, complex64(1)}},
		{"NaN", "k", math.NaN()},
		{"+Inf", "k", math.Inf(1)},
		{"float32 -Inf in a section", "k.a", map[string]any{"a": float32(math.Inf(-1))}},
		{"NaN in a typed map", "k[x]", map[string]float64{"x": math.NaN()}},
		{"NaN named float in a struct", "k.T", struct{ T celsius }{celsius(math.NaN())}},
		{"bool map keys", "k", map[bool]string{true: "yes"}},
		{"float map keys", "k", map[float64]int{1.5: 1}},
		{"empty map with float keys", "k", map[float32]int{}},
		{"year 10000", "k", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"zone offset 25h", "k.at", map[string]any{"at": time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("x", 25*3600))}},
		{"time in a struct", "k.At", struct{ At time.Time }{time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)}},
		{"invalid json.Number", "k", json.Number("twelve")},
		{"failing MarshalJSON", "k[0]", []badJSON{{1}}},
		{"panicking MarshalText", "k[0]", []panicText{1}},
	}
}

// Whatever Set accepts, Save and SaveYAML can write: Set refuses, with the
// path of the offending element, every value Save would fail on.
func TestSetRefusesWhatSaveCannotWrite(t *testing.T) {
	for _, tc := range unwritable() {
		t.Run(tc.name, func(t *testing.T) {
			c := config.New()
			mustSet(t, c, "k", "old")
			err := c.Set("k", tc.v)
			var ce *config.Error
			if !errors.As(err, &ce) || !errors.Is(err, config.ErrUnsupported) || ce.Path != tc.path {
				t.Fatalf("Set = %v, want an *Error wrapping ErrUnsupported at %s", err, tc.path)
			}
			if c.Snapshot().String("k") != "old" {
				t.Fatal("a refused Set changed the content")
			}
			if err := c.Save(new(bytes.Buffer)); err != nil {
				t.Fatalf("Save after a refused Set: %v", err)
			}
		})
	}
}

// The control: each value above really is one that encoding/json, and so
// Save, cannot write. Without the refusal, storing it would make every
// later Save fail.
func TestUnwritableValuesFailToMarshalControl(t *testing.T) {
	for _, tc := range unwritable() {
		func() {
			defer func() { _ = recover() }() // a panic is a failure too
			v := tc.v
			if s, ok := v.([]panicText); ok {
				v = &s // as encoding/json reaches slice elements: addressable
			}
			if _, err := json.Marshal(v); err == nil {
				t.Errorf("%s: json.Marshal succeeded; the refusal above proves nothing for it", tc.name)
			}
		}()
	}
}

// Values at the edges of what JSON can hold are still accepted, and what
// is accepted is saved in both formats.
func TestSetAcceptsWritableEdgeValues(t *testing.T) {
	c := config.New()
	for k, v := range map[string]any{
		"maxfloat": math.MaxFloat64, "negzero": math.Copysign(0, -1), "tiny": float32(math.SmallestNonzeroFloat32),
		"u64": uint64(math.MaxUint64), "intkeys": map[int8]string{-1: "a"}, "uintkeys": map[uint]bool{7: true},
		"year0": time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), "year9999": time.Date(9999, 12, 31, 0, 0, 0, 0, time.FixedZone("e", 23*3600)),
		"level": slog.LevelWarn, "levels": []slog.Level{slog.LevelDebug}, "ip": net.IPv4(10, 0, 0, 1),
		"number": json.Number("1.5"), "struct": struct{ F float32 }{1.5},
	} {
		mustSet(t, c, k, v)
	}
	for name, save := range map[string]func(*bytes.Buffer) error{
		"Save":     func(b *bytes.Buffer) error { return c.Save(b) },
		"SaveYAML": func(b *bytes.Buffer) error { return c.SaveYAML(b) },
	} {
		var b bytes.Buffer
		if err := save(&b); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if !strings.Contains(b.String(), "WARN") {
			t.Errorf("%s did not use slog.Level's own MarshalJSON:\n%s", name, b.String())
		}
	}
}
