//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package status_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentstate/core/status"
	"github.com/google/go-cmp/cmp"
)

// The Python package (python/, import agentstate; driven by
// testdata/layout.py) against the Go package: what Python writes for the
// members it changes is what Go writes (random values, random member
// names), and each reads what the other wrote, other programs' members
// kept byte for byte. The CONTROL writes with Python's own json.dumps, the
// layout a Python program gets by default: the comparison must see it
// differ.

// pyLayoutSet runs layout.py (mode "set", or "dumps" for the CONTROL) on
// lines "PATH\tJSON-OBJECT" and fails on any error it reports.
func pyLayoutSet(t *testing.T, mode string, lines []string) {
	t.Helper()
	cmd := exec.Command("python3", filepath.Join("testdata", "layout.py"), mode)
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("layout.py %s: %v\n%s", mode, err, stderr.String())
	}
	n := 0
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); n++ {
		if sc.Text() != "ok" {
			t.Fatalf("layout.py %s, line %d (%.200s): %s", mode, n, lines[n], sc.Text())
		}
	}
	if n != len(lines) {
		t.Fatalf("layout.py %s answered %d of %d lines", mode, n, len(lines))
	}
}

// pyLoad returns the document at path as the Python package reads it.
func pyLoad(t *testing.T, path string) map[string]any {
	t.Helper()
	out, err := exec.Command("python3", filepath.Join("testdata", "layout.py"), "read", path).Output()
	if err != nil {
		t.Fatalf("layout.py read %s: %v", path, err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("layout.py read %s: %q: %v", path, out, err)
	}
	return m
}

// pyStrings are the runes the random strings are made of: every kind of
// escape Go writes (quote, backslash, control characters, U+2028 and
// U+2029), the ones json.Marshal escapes in names only (<, >, &), DEL, and
// characters of one to four UTF-8 bytes.
var pyStrings = []rune("aZ09 _-/\"\\\x00\x01\x08\x09\x0a\x0c\x0d\x1f\x7f<>&\u2028\u2029éß€\ufffd😀")

func pyRandomString(rng *rand.Rand) string {
	var b strings.Builder
	for range rng.IntN(8) {
		b.WriteRune(pyStrings[rng.IntN(len(pyStrings))])
	}
	return b.String()
}

// pyRandomFloat draws float64s where Go's formatting has its cases:
// integers, the switch to exponents at 1e-6 and 1e21, negative zero,
// subnormals, any bit pattern.
func pyRandomFloat(rng *rand.Rand) float64 {
	switch rng.IntN(6) {
	case 0:
		return float64(rng.IntN(2000) - 1000)
	case 1:
		return math.Ldexp(rng.Float64(), rng.IntN(2100)-1074)
	case 2:
		return []float64{1e-6, 1e-7, 1e20, 1e21, 5e-324, math.MaxFloat64, math.Copysign(0, -1), 0.1, 12345678.9}[rng.IntN(9)]
	case 3:
		return float64(rng.IntN(1_000_000)) / math.Pow(10, float64(rng.IntN(12)))
	}
	for {
		f := math.Float64frombits(rng.Uint64())
		if !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f
		}
	}
}

func pyRandomValue(rng *rand.Rand, depth int) any {
	switch r := rng.IntN(10); {
	case r < 2 && depth > 0:
		m := map[string]any{}
		for range rng.IntN(4) {
			m[pyRandomString(rng)] = pyRandomValue(rng, depth-1)
		}
		return m
	case r < 4 && depth > 0:
		var a []any
		for range rng.IntN(4) {
			a = append(a, pyRandomValue(rng, depth-1))
		}
		if a == nil {
			a = []any{}
		}
		return a
	case r < 6:
		return pyRandomFloat(rng)
	case r < 8:
		return pyRandomString(rng)
	case r < 9:
		return rng.IntN(2) == 0
	}
	return nil
}

type pyAnyDoc struct {
	V any `json:"v"`
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// pyCompareFiles returns how many of the pairs of files differ, and logs
// the first few differences.
func pyCompareFiles(t *testing.T, pairs [][2]string, log bool) int {
	t.Helper()
	differ := 0
	for _, p := range pairs {
		g, err1 := os.ReadFile(p[0])
		py, err2 := os.ReadFile(p[1])
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if !bytes.Equal(g, py) {
			if differ++; log && differ <= 3 {
				t.Errorf("%s differs from Go's (-go +python):\n%s", p[1], cmp.Diff(string(g), string(py)))
			}
		}
	}
	return differ
}

// Values: a member set to a random JSON value is written by Python as Go
// writes a field of that value (Store of a struct with an any field).
func TestPythonWritesValuesAsGo(t *testing.T) {
	cpNeedPython(t)
	ctx := context.Background()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	dir := t.TempDir()
	const n = 200
	var lines, control []string
	var pairs, controlPairs [][2]string
	for i := range n {
		v := pyRandomValue(rng, 3)
		for v == nil { // Go writes nothing for a zero value: no change
			v = pyRandomValue(rng, 3)
		}
		goPath := filepath.Join(dir, fmt.Sprintf("go-%d.json", i))
		if _, err := status.NewStore[pyAnyDoc](goPath).Mutate(ctx, func(d *pyAnyDoc) error { d.V = v; return nil }); err != nil {
			t.Fatal(err)
		}
		member := `{"v":` + mustJSON(t, v) + `}`
		pyPath := filepath.Join(dir, fmt.Sprintf("py-%d.json", i))
		lines = append(lines, pyPath+"\t"+member)
		pairs = append(pairs, [2]string{goPath, pyPath})
		dumpsPath := filepath.Join(dir, fmt.Sprintf("dumps-%d.json", i))
		control = append(control, dumpsPath+"\t"+member)
		controlPairs = append(controlPairs, [2]string{goPath, dumpsPath})
	}
	pyLayoutSet(t, "set", lines)
	if d := pyCompareFiles(t, pairs, true); d > 0 {
		t.Errorf("%d of %d documents differ from Go's", d, n)
	}
	pyLayoutSet(t, "dumps", control)
	d := pyCompareFiles(t, controlPairs, false)
	if d == 0 {
		t.Errorf("CONTROL: json.dumps wrote all %d documents as Go does: the comparison cannot see a difference", n)
	}
	t.Logf("%d random values: Python's bytes equal Go's; json.dumps differs on %d", n, d)
}

// Member names: a document of random top-level members (Status's among
// them, whose order comes first) is written by Python as Go's Document
// (corestate's type) writes it.
func TestPythonWritesMembersAsGo(t *testing.T) {
	cpNeedPython(t)
	ctx := context.Background()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	dir := t.TempDir()
	statusNames := []string{"status", "agent", "runs", "note", "pid", "started_at", "pr_url", "issue", "task", "repo"}
	scalars := []string{`"queued"`, `"x<y>&z"`, `3`, `0`, `"é\u2028"`, `""`}
	const n = 100
	var lines []string
	var pairs [][2]string
	for i := range n {
		members := map[string]json.RawMessage{"updated_at": json.RawMessage(`"2026-01-02T03:04:05Z"`)}
		for range 1 + rng.IntN(8) {
			name := pyRandomString(rng)
			if rng.IntN(3) == 0 {
				name = statusNames[rng.IntN(len(statusNames))]
			}
			v := scalars[rng.IntN(len(scalars))]
			if f, ok := map[string]string{"runs": `7`, "pid": `42`, "issue": `1`, "started_at": `"2026-01-02T03:04:05Z"`}[name]; ok {
				v = f // a Status field's value must decode into its type
			} else if slices.Contains(statusNames, name) && v[0] != '"' {
				v = `"s"`
			}
			members[name] = json.RawMessage(v)
		}
		goPath := filepath.Join(dir, fmt.Sprintf("go-%d.json", i))
		var refused error
		if _, err := status.NewStore[status.Document](goPath).Mutate(ctx, func(d *status.Document) error {
			for name, v := range members {
				if err := d.Set(name, v); err != nil {
					refused = err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if refused != nil {
			continue // a name Go refuses (a case variant of a Status field)
		}
		pyPath := filepath.Join(dir, fmt.Sprintf("py-%d.json", i))
		lines = append(lines, pyPath+"\t"+mustJSON(t, members))
		pairs = append(pairs, [2]string{goPath, pyPath})
	}
	pyLayoutSet(t, "set", lines)
	if d := pyCompareFiles(t, pairs, true); d > 0 {
		t.Errorf("%d of %d documents differ from Go's", d, len(pairs))
	}
	t.Logf("%d documents of random members: Python's bytes equal Go's", len(pairs))
}

// Each reads the other's document, and keeps the members it did not change
// byte for byte.
func TestGoAndPythonReadEachOther(t *testing.T) {
	cpNeedPython(t)
	ctx := context.Background()
	path := cpSeed(t) // written as a human would: x_seed with odd spacing and 2.50
	pyLayoutSet(t, "set", []string{path + "\t" + `{"runs": 5, "py": {"k": [1, 2.5, "<&>"]}, "status": "running"}`})
	raw := cpRawFields(t, path)
	if got := string(raw["x_seed"]); got != cpSeedExtra {
		t.Errorf("Python changed x_seed, which it did not touch: %s, want %s", got, cpSeedExtra)
	}
	pyBytes := string(raw["py"])
	s, err := status.Load(ctx, path)
	if err != nil {
		t.Fatalf("Go cannot read what Python wrote: %v", err)
	}
	if s.Runs != 5 || s.State != status.Running || s.Agent != "crossproc" || !s.StartedAt.Equal(cpSeedStarted) {
		t.Errorf("Go reads %+v", s)
	}
	if _, err := status.Mutate(ctx, path, func(s *status.Status) error { s.Note = "go"; return nil }); err != nil {
		t.Fatal(err)
	}
	raw = cpRawFields(t, path)
	if string(raw["py"]) != pyBytes || string(raw["x_seed"]) != cpSeedExtra {
		t.Errorf("Go changed Python's member or x_seed: py %s (was %s), x_seed %s", raw["py"], pyBytes, raw["x_seed"])
	}
	var goView map[string]any
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &goView); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(goView, pyLoad(t, path)); diff != "" {
		t.Errorf("Python reads Go's document differently (-go +python):\n%s", diff)
	}
}
