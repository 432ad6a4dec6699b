//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package status_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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
// subnormals, any bit pattern; never an infinity or NaN, which JSON cannot
// hold.
func pyRandomFloat(rng *rand.Rand) float64 {
	switch rng.IntN(6) {
	case 0:
		return float64(rng.IntN(2000) - 1000)
	case 1:
		// [0, 1) times 2^e, e from -1074 to 1024: at most MaxFloat64.
		return math.Ldexp(rng.Float64(), rng.IntN(2099)-1074)
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
// them) is written by Python as Go writes it: as a Document (any JSON
// object: members sorted by name) for any file name, as a StatusDocument
// (Status's members first, in its order) for a file named status.json.
func TestPythonWritesMembersAsGo(t *testing.T) {
	cpNeedPython(t)
	for _, kind := range []string{"json", "status"} {
		t.Run(kind, func(t *testing.T) { pyMembersAsGo(t, kind) })
	}
}

func pyMembersAsGo(t *testing.T, kind string) {
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
		name := fmt.Sprintf("doc-%d.json", i)
		if kind == "status" {
			name = filepath.Join(fmt.Sprint(i), "status.json")
		}
		goPath, pyPath := filepath.Join(dir, "go", name), filepath.Join(dir, "py", name)
		os.MkdirAll(filepath.Dir(goPath), 0o755)
		os.MkdirAll(filepath.Dir(pyPath), 0o755)
		var refused error
		set := func(d interface {
			Set(string, json.RawMessage) error
		}) error {
			for name, v := range members {
				if err := d.Set(name, v); err != nil {
					refused = err
				}
			}
			return nil
		}
		var err error
		if kind == "status" {
			_, err = status.NewStore[status.StatusDocument](goPath).Mutate(ctx, func(d *status.StatusDocument) error { return set(d) })
		} else {
			_, err = status.NewStore[status.Document](goPath).Mutate(ctx, func(d *status.Document) error { return set(d) })
		}
		if err != nil {
			t.Fatal(err)
		}
		if refused != nil {
			continue // a name Go refuses (a case variant of a Status field)
		}
		lines = append(lines, pyPath+"\t"+mustJSON(t, members))
		pairs = append(pairs, [2]string{goPath, pyPath})
	}
	pyLayoutSet(t, "set", lines)
	if d := pyCompareFiles(t, pairs, true); d > 0 {
		t.Errorf("%d of %d documents differ from Go's", d, len(pairs))
	}
	t.Logf("%d documents of random members: Python's bytes equal Go's", len(pairs))
}

// Refusals: every document Go refuses as corrupt (a Store of Document, or
// of StatusDocument for a status document), Python refuses too, so that
// Python never writes over what Go would keep untouched; Python refuses
// more only where its README says (invalid UTF-8, a lone surrogate or a
// repeated name inside a member's value, which Go keeps as bytes).
func TestPythonRefusesWhatGoRefuses(t *testing.T) {
	cpNeedPython(t)
	ctx := context.Background()
	docs := []string{
		`{}`, ``, ` `, `null`, `[]`, `"s"`, `3`, `{"a": 1`, `{"a": 1}x`, `{"a": 1, "a": 2}`, `{"a": {"b": 1, "b": 2}}`,
		"{\"a\": \"\xff\"}", "{\"\xff\": 1}", `{"a\ud800": 1}`, `{"a": "\ud800"}`, `{"a": "\ud83d\ude00"}`, `{"a": NaN}`,
		`{"runs": "n/a"}`, `{"runs": 1.5}`, `{"runs": 1e2}`, `{"runs": -0}`, `{"runs": 9223372036854775807}`, `{"runs": 9223372036854775808}`,
		`{"runs": null}`, `{"status": 3}`, `{"status": null}`, `{"Runs": 1}`, `{"RUNS": 1, "runs": 2}`, `{"\u017ftatus": "x"}`,
		`{"started_at": "2026-01-02T03:04:05Z"}`, `{"started_at": "2026-02-30T03:04:05Z"}`, `{"updated_at": "yesterday"}`,
		`{"updated_at": 5}`, `{"started_at": "\u0032026-01-02T03:04:05Z"}`, `{"pid": true}`, `{"note": ["a"]}`,
		`{"keep": [1, 2.50], "big": 1e400}`,
	}
	pyOnly := map[string]bool{`{"a": {"b": 1, "b": 2}}`: true, `{"a": "\ud800"}`: true, "{\"a\": \"\xff\"}": true}
	dir := t.TempDir()
	for _, kind := range []string{"json", "status"} {
		var paths []string
		for i, d := range docs {
			p := filepath.Join(dir, kind, fmt.Sprintf("%d.json", i))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(d), 0o644); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
		}
		cmd := exec.Command("python3", filepath.Join("testdata", "layout.py"), "check", kind)
		cmd.Stdin = strings.NewReader(strings.Join(paths, "\n") + "\n")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("layout.py check: %v", err)
		}
		verdicts := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(verdicts) != len(docs) {
			t.Fatalf("layout.py check answered %q", out)
		}
		refused, more := 0, 0
		for i, d := range docs {
			var goErr error
			if kind == "status" {
				_, goErr = status.NewStore[status.StatusDocument](paths[i]).Load(ctx)
			} else {
				_, goErr = status.NewStore[status.Document](paths[i]).Load(ctx)
			}
			goRefuses, pyRefuses := errors.Is(goErr, status.ErrCorrupt), strings.HasPrefix(verdicts[i], "corrupt")
			switch {
			case goRefuses && !pyRefuses:
				t.Errorf("%s %q: Go refuses it (%v), Python reads it", kind, d, goErr)
			case !goRefuses && pyRefuses && !pyOnly[d]:
				t.Errorf("%s %q: Python refuses it (%s), Go reads it", kind, d, verdicts[i])
			case pyRefuses && !goRefuses:
				more++
			case goRefuses:
				refused++
			}
		}
		t.Logf("%s: %d of %d documents refused by both; %d by Python only (the documented ones)", kind, refused, len(docs), more)
	}
}

// Times: a status document's times are what Go's time.Time reads, for a
// table of edge cases and random variations of a valid time.
func TestPythonReadsTimesAsGo(t *testing.T) {
	cpNeedPython(t)
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	times := []string{
		"2026-01-02T03:04:05Z", "2026-01-02T03:04:05.123456789Z", "2026-01-02T03:04:05.1234567891Z", "2026-01-02T03:04:05+23:59",
		"2024-02-29T00:00:00Z", "2025-02-29T00:00:00Z", "0000-01-01T00:00:00Z", "2026-01-02T24:00:00Z", "2026-01-02T03:04:60Z",
		"2026-01-02T03:04:05+24:00", "2026-01-02T03:04:05", "2026-01-02 03:04:05Z", "2026-01-02t03:04:05Z", "2026-01-02T03:04:05z",
		"2026-1-02T03:04:05Z", "2026-01-02T03:04:05.Z", "2026-01-02T03:04:05,5Z", "", "2026-04-31T00:00:00Z", "1900-02-29T00:00:00Z",
		"2000-02-29T00:00:00Z", "2026-01-02T03:04:05-00:00", "2026-01-02T03:04:05+01:60", "2026-01-02T03:04:05.000Z",
	}
	alphabet := "0123456789-+:.TZtz ,"
	for range 2000 {
		b := []byte("2024-02-29T23:59:59.5+01:30")
		for range 1 + rng.IntN(3) {
			switch i := rng.IntN(len(b)); rng.IntN(3) {
			case 0:
				b[i] = alphabet[rng.IntN(len(alphabet))]
			case 1:
				b = append(b[:i], b[i+1:]...)
			default:
				b = append(b[:i], append([]byte{alphabet[rng.IntN(len(alphabet))]}, b[i:]...)...)
			}
		}
		times = append(times, string(b))
	}
	cmd := exec.Command("python3", filepath.Join("testdata", "layout.py"), "times")
	cmd.Stdin = strings.NewReader(mustJSON(t, times))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("layout.py times: %v", err)
	}
	var py []bool
	if err := json.Unmarshal(out, &py); err != nil || len(py) != len(times) {
		t.Fatalf("layout.py times said %q (%v)", out, err)
	}
	valid, differ := 0, 0
	for i, s := range times {
		var tm time.Time
		goOK := tm.UnmarshalJSON([]byte(mustJSON(t, s))) == nil
		if goOK {
			valid++
		}
		if goOK != py[i] {
			if differ++; differ <= 10 {
				t.Errorf("%q: Go reads it: %v; Python says %v", s, goOK, py[i])
			}
		}
	}
	t.Logf("%d times (%d valid for Go): Python agrees on all but %d", len(times), valid, differ)
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
