package config_test

import (
	"bytes"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentstate/core/config"
)

type Limits struct {
	CPU int    `config:"cpu"`
	Mem string `json:"mem,omitempty"`
}

type Common struct {
	Timeout time.Duration
	Retries int
}

type Dispatch struct {
	Common                         // promoted: timeout, retries
	MaxWorkers int                 `config:"max_workers"`
	Ratio      float32             `config:"ratio"`
	Since      time.Time           `config:"since"`
	Enabled    bool                `config:"enabled"`
	Queues     []string            `config:"queues"`
	Limits     Limits              `config:"limits"`
	LimitsP    *Limits             `config:"limits_p"`
	Labels     map[string]string   `config:"labels"`
	Extra      any                 `config:"extra"`
	Level      slog.Level          `config:"level"`
	Pair       [2]uint16           `config:"pair"`
	ByName     map[string][]int64  `config:"by_name"`
	Owner      *string             `config:"owner"`
	Skipped    string              `config:"-"`
	unexported int                 // left alone
	Nested     map[string]Limits   `config:"nested"`
	Any        map[string]any      `config:"any"`
	Opt        map[string]struct{} `config:"opt"`
}

const dispatchYAML = `
agents:
  dispatch:
    timeout: 45s
    retries: "3"
    max_workers: 8
    ratio: 0.75
    since: "2026-01-02T03:04:05Z"
    enabled: "true"
    queues: [high, low]
    limits: {cpu: 2, mem: 512Mi}
    limits_p: {CPU: 4}
    labels: {team: infra}
    extra: {deep: [1, {x: y}]}
    level: warn
    pair: [1, 65535]
    by_name: {a: [1, 2]}
    owner: ~
    Skipped: set
    unknown_key: ignored
    nested: {n: {cpu: 1}}
    any: {k: [v]}
    opt: {}
`

func loadDispatch(t *testing.T) *config.Config {
	t.Helper()
	c := config.New()
	if err := c.LoadYAML(strings.NewReader(dispatchYAML)); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestDecodeSectionIntoStruct(t *testing.T) {
	c := loadDispatch(t)
	got, err := config.Decode[Dispatch](c.Snapshot(), "agents.dispatch")
	if err != nil {
		t.Fatal(err)
	}
	want := Dispatch{
		Common:     Common{Timeout: 45 * time.Second, Retries: 3},
		MaxWorkers: 8, Ratio: 0.75, Since: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Enabled: true,
		Queues: []string{"high", "low"}, Limits: Limits{2, "512Mi"}, LimitsP: &Limits{CPU: 4},
		Labels: map[string]string{"team": "infra"},
		Extra:  map[string]any{"deep": []any{int64(1), map[string]any{"x": "y"}}},
		Level:  slog.LevelWarn, Pair: [2]uint16{1, 65535}, ByName: map[string][]int64{"a": {1, 2}},
		Nested: map[string]Limits{"n": {CPU: 1}}, Any: map[string]any{"k": []any{"v"}},
		Opt: map[string]struct{}{},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Decode:\n got %+v\nwant %+v", got, want)
	}
	// Snapshots and scalar targets work too.
	if n, err := config.Decode[uint8](c.Snapshot(), "agents.dispatch.max_workers"); err != nil || n != 8 {
		t.Fatalf("Decode[uint8] = %d, %v", n, err)
	}
}

// Mutating everything a Decode returned changes nothing stored.
func TestDecodeResultDoesNotAliasStoredState(t *testing.T) {
	c := loadDispatch(t)
	var before bytes.Buffer
	if err := c.SaveYAML(&before); err != nil {
		t.Fatal(err)
	}
	d, err := config.Decode[Dispatch](c.Snapshot(), "agents.dispatch")
	if err != nil {
		t.Fatal(err)
	}
	d.Queues[0] = "x"
	d.Labels["team"] = "x"
	d.LimitsP.CPU = 99
	d.Extra.(map[string]any)["deep"].([]any)[1].(map[string]any)["x"] = "mutated"
	d.ByName["a"][0] = 99
	d.Any["k"].([]any)[0] = "mutated"
	m, err := config.Decode[map[string]any](c.Snapshot(), "agents")
	if err != nil {
		t.Fatal(err)
	}
	m["dispatch"].(map[string]any)["queues"].([]any)[0] = "mutated"
	var after bytes.Buffer
	if err := c.SaveYAML(&after); err != nil {
		t.Fatal(err)
	}
	if before.String() != after.String() {
		t.Fatalf("mutating Decode's result changed the config:\n%s\n%s", before.String(), after.String())
	}
}

func TestDecodeErrorsNameTheKey(t *testing.T) {
	c := loadDispatch(t)
	mustSet(t, c, "bad", map[string]any{"n": "eight", "big": 300, "neg": -1, "list": []any{1, "x"}, "pair": []any{1, 2, 3}, "level": "loud", "sec": "flat"})
	check := func(name string, err error, is error, want string) {
		t.Helper()
		var ce *config.Error
		if !errors.As(err, &ce) || !errors.Is(err, is) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an *Error matching %v containing %q", name, err, is, want)
		}
	}
	_, err := config.Decode[struct{ N int }](c.Snapshot(), "bad")
	check("string to int", err, config.ErrConversion, "config: decode bad.n: cannot convert: string to int")
	_, err = config.Decode[struct{ Big int8 }](c.Snapshot(), "bad")
	check("overflow", err, config.ErrConversion, "decode bad.big: cannot convert: int to int8")
	_, err = config.Decode[struct{ Neg uint }](c.Snapshot(), "bad")
	check("negative to uint", err, config.ErrConversion, "decode bad.neg:")
	_, err = config.Decode[struct{ List []int }](c.Snapshot(), "bad")
	check("list element", err, config.ErrConversion, "decode bad.list[1]:")
	_, err = config.Decode[struct{ Pair [2]int }](c.Snapshot(), "bad")
	check("array length", err, config.ErrConversion, "a list of 3 to [2]int")
	_, err = config.Decode[struct{ Level slog.Level }](c.Snapshot(), "bad")
	check("UnmarshalText", err, config.ErrConversion, "decode bad.level:")
	_, err = config.Decode[struct{ Sec struct{ A int } }](c.Snapshot(), "bad")
	check("string to struct", err, config.ErrConversion, "decode bad.sec:")
	_, err = config.Decode[int](c.Snapshot(), "agents.dispatch")
	check("section to int", err, config.ErrConversion, "a section to int")
	_, err = config.Decode[map[int]string](c.Snapshot(), "agents.dispatch.labels")
	check("map key", err, config.ErrUnsupported, "keys must be strings")
	if _, err := config.Decode[struct{ C chan int }](c.Snapshot(), "bad"); err != nil {
		t.Errorf("a field whose key is missing is left alone, whatever its type: %v", err)
	}
	_, err = config.Decode[chan int](c.Snapshot(), "bad.n")
	check("chan", err, config.ErrUnsupported, "cannot decode into chan int")
	_, err = config.Decode[int](c.Snapshot(), "missing")
	check("missing", err, config.ErrNotFound, "config: decode missing")
	_, err = config.Decode[int](nil, "k")
	check("nil Snapshot", err, config.ErrNotFound, "nil Snapshot")
	if v, err := config.Decode[struct{ N, Big int }](c.Snapshot(), "bad"); err == nil || v.Big != 0 {
		t.Errorf("a failed Decode returned a partly filled value: %+v", v)
	}
}

// Lookup into a struct overlays what is stored on the defaults already in
// it, never writes through its pointers, and changes nothing on error.
func TestLookupIntoStructKeepsDefaults(t *testing.T) {
	c := loadDispatch(t)
	shared := &Limits{CPU: 1, Mem: "keep"}
	d := Dispatch{MaxWorkers: -1, Skipped: "default", LimitsP: shared, Common: Common{Retries: 9}}
	mustSet(t, c, "partial", map[string]any{"max_workers": 3, "limits_p": map[string]any{"cpu": 5}})
	if err := c.Snapshot().Lookup("partial", &d); err != nil {
		t.Fatal(err)
	}
	if d.MaxWorkers != 3 || d.Skipped != "default" || d.Retries != 9 || *d.LimitsP != (Limits{5, "keep"}) {
		t.Fatalf("Lookup overlay: %+v, limits %+v", d, *d.LimitsP)
	}
	if *shared != (Limits{1, "keep"}) {
		t.Fatalf("Lookup wrote through the caller's pointer: %+v", *shared)
	}
	mustSet(t, c, "broken", map[string]any{"max_workers": 5, "ratio": "high"})
	before := d
	if err := c.Snapshot().Lookup("broken", &d); !errors.Is(err, config.ErrConversion) || !strings.Contains(err.Error(), "config: get broken.ratio: cannot convert") {
		t.Fatalf("Lookup(broken) = %v", err)
	}
	if !reflect.DeepEqual(d, before) {
		t.Fatal("a failed Lookup changed dst")
	}
}
