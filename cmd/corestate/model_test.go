package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentstate/core/status"
	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

var (
	modelIntFields     = []string{"runs", "pid"}
	modelStringFields  = []string{"note", "branch"}
	modelUnknownFields = []string{"a", "b", "x_y", "Zed"}
)

// TestSetGetModel drives random sequences of `set` and `get` against a
// plain map holding what each field should be, and checks after every step
// that the whole document equals the model (updated_at aside) and that the
// module's status.Load still accepts the file.
func TestSetGetModel(t *testing.T) {
	dir := t.TempDir()
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		path := filepath.Join(dir, fmt.Sprintf("s%d", n), status.StatusFile) // a status document
		if err := os.Mkdir(filepath.Dir(path), 0o755); err != nil {
			rt.Fatal(err)
		}
		model := map[string]any{}
		exists := false
		rt.Repeat(map[string]func(*rapid.T){
			"set": func(rt *rapid.T) {
				args := []string{"set", path}
				before := maps.Clone(model)
				after := maps.Clone(model)
				for range rapid.IntRange(1, 3).Draw(rt, "pairs") {
					field, text, want, remove := drawAssignment(rt)
					args = append(args, field+"="+text)
					if remove {
						delete(after, field)
					} else {
						after[field] = want
					}
				}
				guardArgs, holds, statusGuarded := drawGuard(rt, before)
				args = append(args, guardArgs...)
				// The transition rule: a final status is left only under an
				// --if on status (which then named it, since it holds).
				cur, _ := before["status"].(string)
				leavesFinal := status.State(cur).Final() && after["status"] != before["status"]
				wantCode := exitOK
				if !holds || (leavesFinal && !statusGuarded) {
					wantCode = exitConflict
				}
				var content []byte
				if exists {
					content, _ = os.ReadFile(path)
				}
				if r := corestate(rt, args...); r.code != wantCode {
					rt.Fatalf("%q: exit %d, want %d: %s", args, r.code, wantCode, r.stderr)
				}
				if wantCode != exitOK {
					if got, _ := os.ReadFile(path); exists && string(got) != string(content) {
						rt.Fatalf("%q: a conflict changed the file", args)
					}
				} else {
					model = after
				}
				// Only a change writes: a set that changes nothing (say,
				// removing an absent field) does not even create the file.
				if !cmp.Equal(before, model) {
					exists = true
				}
				if _, err := os.Stat(path); (err == nil) != exists {
					rt.Fatalf("after %q the file exists = %v, want %v", args, err == nil, exists)
				}
			},
			"get": func(rt *rapid.T) {
				if !exists {
					rt.Skip("no file yet")
				}
				all := append(append(append([]string{}, modelIntFields...), modelStringFields...), modelUnknownFields...)
				field := rapid.SampledFrom(append(all, "status")).Draw(rt, "field")
				r := corestate(rt, "get", "--json", path, field)
				want, ok := model[field]
				if !ok {
					if zero, _ := (status.StatusDocument{}).Get(field); zero == nil {
						if r.code != exitNotFound {
							rt.Fatalf("get %s (absent): exit %d, want %d", field, r.code, exitNotFound)
						}
						return
					}
					want = zeroOf(field)
				}
				if r.code != exitOK {
					rt.Fatalf("get %s: exit %d: %s", field, r.code, r.stderr)
				}
				if diff := cmp.Diff(want, decodeAny(rt, r.stdout)); diff != "" {
					rt.Fatalf("get %s (-model +got):\n%s", field, diff)
				}
			},
			"": func(rt *rapid.T) {
				if !exists {
					return
				}
				got := decodeAny(rt, readFile(rt, path)).(map[string]any)
				if _, ok := got["updated_at"]; !ok {
					rt.Fatal("no updated_at after a set")
				}
				delete(got, "updated_at")
				if diff := cmp.Diff(model, got); diff != "" {
					rt.Fatalf("document (-model +file):\n%s", diff)
				}
				if _, err := status.Load(context.Background(), path); err != nil {
					rt.Fatalf("status.Load rejects what corestate wrote: %v", err)
				}
			},
		})
	})
}

// drawGuard draws no guard, an --if on status with one or two alternatives
// (null: absent), or an --if on runs, and reports whether it holds on the
// model before the set.
func drawGuard(rt *rapid.T, before map[string]any) (args []string, holds, onStatus bool) {
	switch rapid.IntRange(0, 2).Draw(rt, "guard") {
	case 1:
		names := []string{"null"}
		for _, s := range states {
			names = append(names, string(s))
		}
		alts := rapid.SliceOfNDistinct(rapid.SampledFrom(names), 1, 2, rapid.ID[string]).Draw(rt, "if status")
		cur, ok := before["status"].(string)
		if !ok {
			cur = "null"
		}
		return []string{"--if", "status=" + strings.Join(alts, ",")}, slices.Contains(alts, cur), true
	case 2:
		v := rapid.IntRange(0, 2).Draw(rt, "if runs")
		cur, ok := before["runs"].(float64)
		if !ok {
			cur = 0 // absent reads as the zero value
		}
		return []string{"--if", "runs=" + strconv.Itoa(v)}, cur == float64(v), false
	}
	return nil, true, false
}

// drawAssignment draws FIELD=VALUE text and what the field must hold after
// it (as decoded JSON), or remove when VALUE is null.
func drawAssignment(rt *rapid.T) (field, text string, want any, remove bool) {
	switch rapid.IntRange(0, 3).Draw(rt, "kind") {
	case 0: // an integer field of status.Status
		field = rapid.SampledFrom(modelIntFields).Draw(rt, "field")
		if rapid.IntRange(0, 4).Draw(rt, "null") == 0 {
			return field, "null", nil, true
		}
		v := rapid.IntRange(-5, 100000).Draw(rt, "int")
		return field, strconv.Itoa(v), float64(v), false
	case 1: // a string field: any text, or a JSON string literal
		field = rapid.SampledFrom(modelStringFields).Draw(rt, "field")
		if rapid.Bool().Draw(rt, "literal") {
			s := rapid.String().Draw(rt, "s")
			b, _ := json.Marshal(s)
			return field, string(b), s, false
		}
		text = rapid.String().Filter(func(s string) bool { return s != "null" && !isJSONString(s) }).Draw(rt, "text")
		return field, text, text, false
	case 2:
		s := rapid.SampledFrom(states).Draw(rt, "state")
		return "status", string(s), string(s), false
	}
	// An unknown field: any JSON value, or text that is not JSON.
	field = rapid.SampledFrom(modelUnknownFields).Draw(rt, "field")
	if rapid.Bool().Draw(rt, "json") {
		v := rapid.OneOf(
			rapid.Just[any](nil),
			rapid.Map(rapid.IntRange(-1000, 1000), func(i int) any { return float64(i) }),
			rapid.Map(rapid.Bool(), func(b bool) any { return b }),
			rapid.Map(rapid.String(), func(s string) any { return s }),
			rapid.Map(rapid.SliceOfN(rapid.IntRange(0, 9), 0, 3), func(xs []int) any {
				out := make([]any, len(xs))
				for i, x := range xs {
					out[i] = float64(x)
				}
				return out
			}),
		).Draw(rt, "value")
		b, _ := json.Marshal(v)
		return field, string(b), v, v == nil
	}
	text = rapid.StringMatching(`[a-z][a-z ]{0,8}`).Filter(func(s string) bool { return !json.Valid([]byte(s)) }).Draw(rt, "text")
	return field, text, text, false
}

func isJSONString(s string) bool {
	var v string
	return json.Unmarshal([]byte(s), &v) == nil
}

func zeroOf(field string) any {
	var v any
	zero, _ := status.StatusDocument{}.Get(field)
	json.Unmarshal(zero, &v)
	return v
}

func decodeAny(t tester, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	return v
}
